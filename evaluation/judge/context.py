"""The judgement context: what one judgement knows and has found so far, public to its stages.

The stages (runner.py: scan, start the sandbox; correctness.py; timing_trusted.py) read the job, the
operator's record and its cases from it, talk to the sandbox through its ``session``, and record into it the
checks, case results, evidence and timings that become the JudgeResult.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec
from evaluation.judge import inputs
from evaluation.judge.backends import backend_for
from evaluation.judge.device_lock import DeviceLock
from evaluation.judge.job import CaseResult, CheckOutcome, JudgeJob, JudgeResult
from evaluation.judge.sandbox import Sandbox
from evaluation.judge.session import SandboxSession
from evaluation.judge.version import JUDGE_VERSION, PROTOCOL_STAGE_VERSION

if TYPE_CHECKING:
    from evaluation.judge.timed_requests import ShippedChunk

# The most device memory the trusted side's allocator may keep cached between correctness cases, and the
# sandbox's earlier cases' tensors may hold (harness.Harness._trim_keep_alive), when the GPU is not
# shared: several judges share one GPU, and on the H200 sixteen of them holding their largest case's cache
# (up to 9 GiB each) ran it out of memory (2026-11-30). With more judges, device_memory_budget shrinks both.
TRUSTED_CACHE_BYTES = 2 * 1024**3
SANDBOX_KEEP_ALIVE_BYTES = 4 * 1024**3
# Per judge: a trusted and a sandbox process (and the warm spare for the next judgement) each hold a device
# context of about 0.5 GiB on the H200; what is left of its share goes a quarter to the trusted side's
# cache and a third to the sandbox's kept tensors, the rest to the case at hand.
CONTEXTS_PER_JUDGE_BYTES = 3 * 512 * 1024**2


# The device memory one judgement needs at its largest case when many share a GPU: its two processes'
# contexts and spare, the trusted cache and kept tensors above, and the case itself twice over (the twin
# replay draws a second set of inputs and references). Measured on the public and held-out grids: 16 judges
# ran on the H200's 139 GiB (8.7 GiB each) with no device full, as 24 did (5.8 GiB) before the twin replay;
# 16 on an H100's 79 GiB (4.9 GiB each) ran three judgements out of memory (2026-12-07), and 13 (6.1 GiB
# each) twelve of a 110-kernel submission, device memory peaking at 78.3 GiB (2026-12-07 night). A worker
# judges at most the device's memory over this many at once (judges_for_device); KGB_DEVICE_BYTES_PER_JUDGE
# overrides.
DEVICE_BYTES_PER_JUDGE = 8 * 1024**3


def judges_for_device(requested: int, device_total_bytes: int | None) -> int:
    """How many of ``requested`` judgements may share a device of ``device_total_bytes`` (all of them where
    its memory is unknown: the CPU interpreter's cases live in host memory)."""
    requested = max(1, requested)
    if not device_total_bytes:
        return requested
    per_judge = int(os.environ.get("KGB_DEVICE_BYTES_PER_JUDGE") or DEVICE_BYTES_PER_JUDGE)
    return max(1, min(requested, device_total_bytes // max(1, per_judge)))


def device_memory_budget(device_total_bytes: int | None, judges: int) -> tuple[int, int]:
    """(trusted cache, sandbox keep-alive) in bytes for one of ``judges`` judgements sharing a device of
    ``device_total_bytes``: the defaults when unknown or alone, never under 256 / 512 MiB."""
    if not device_total_bytes or judges <= 1:
        return TRUSTED_CACHE_BYTES, SANDBOX_KEEP_ALIVE_BYTES
    share = max(0, device_total_bytes // judges - CONTEXTS_PER_JUDGE_BYTES)
    return (
        min(TRUSTED_CACHE_BYTES, max(256 * 1024**2, share // 4)),
        min(SANDBOX_KEEP_ALIVE_BYTES, max(512 * 1024**2, share // 3)),
    )


@dataclass
class TimingOptions:
    """Per timed case: stop at RSE of both medians < ``rse_target`` or after ``budget_s_per_case`` /
    ``max_iterations`` (whichever first), never before ``min_iterations`` per side. Small on purpose: a
    110-operator submission must be judged in minutes, and 200 samples of a 17 us kernel already give a
    median to well under 1 % (measured on the H200: the 0.5 % RSE target is rarely the binding limit). A
    small kernel's 200 rounds take well under 0.15 s (flush + call + synchronize, both sides); the budget
    binds only for kernels over ~0.3 ms, whose medians are steadier anyway."""

    sets_per_side: int = 4
    budget_s_per_case: float = 0.15
    rse_target: float = 0.005
    min_iterations: int = 20
    max_iterations: int = 200
    spot_checks: int = 1
    # Only these cases' loops take their spot checks (None: every case's): the protocol stage spot-checks a
    # few random cases of its grid (timing_protocol.with_spot_cases).
    spot_case_ids: frozenset[str] | None = None
    # Cases timed per operator (see timing_trusted.select_timed_cases); 0 times every timed case.
    max_timed_cases: int = 6
    # Which loop times and what its window holds (protocol.TimeCase.window): "device" is device time alone,
    # the stream held until the call is enqueued and the dispatch audit on; the protocol stage's windows
    # (PROTOCOL_WINDOWS below, "original" by default) time the latency a caller sees.
    window: str = "device"
    # The stage's name: its input sets' seeds, its stage_breakdown keys.
    stage: str = "timing"
    # False: the reference is timed on the candidate's sets (half the draws), not on sets of its own.
    separate_reference_sets: bool = True
    # Never fewer input sets than this (timing_stats.sets_for): the value rotation needs two.
    fewest_sets: int = 2
    # True: a case whose sets are shared by both sides and never spot-checked has them drawn by the sandbox
    # from seeds the trusted side sends (protocol.SetsToDraw) rather than drawn here and piped over: nothing
    # compares those sets' values with anything, so where they are drawn changes no verdict (see
    # timed_requests.sets_to_draw_in_sandbox).
    sets_drawn_by_sandbox: bool = False


# The protocol stage's loops (protocol.TimeCase.window): "original" (the default) times each source's cases
# with the original harness's own timer (ORIGINAL_TIMERS); the others time every source's cases with one loop,
# kept for comparing them on a GPU: "do_bench" (triton.testing.do_bench's, untrusted/timing_do_bench.py),
# "back_to_back" (the original cuBLAS tests', untrusted/timing_back_to_back.py), and the loops that
# synchronise after every call, "caller" and "whole_call" (untrusted/timing.py).
PROTOCOL_WINDOWS = ("original", "do_bench", "back_to_back", "caller", "whole_call")

# PROTOCOL.md section 6 and VLLM_CUBLAS.md: how the original harness times each source's cases, as (loop,
# statistic over the loop's samples). ATen: do_bench(warmup=25, rep=100, return_mode="median"); vLLM: the same
# call with do_bench's default return mode, the mean; cuBLAS: CUDA events around 100 calls back to back after
# 10 warm-ups, no L2 flush, the mean.
ORIGINAL_TIMERS: dict[str, tuple[str, str]] = {
    "aten": ("do_bench", "median"),
    "vllm13": ("do_bench", "mean"),
    "cublas": ("back_to_back", "mean"),
}


def protocol_timer(window: str, operator_id: str) -> tuple[str, str]:
    """(the loop that times ``operator_id``'s cases, the statistic over its samples) in the protocol stage
    with ``window``: "original" picks the source's own timer; any other window is that loop for every source,
    with the source's statistic (the figure stays the original's formula over another loop's samples)."""
    loop, statistic = ORIGINAL_TIMERS.get(operator_id.split("::", 1)[0], ORIGINAL_TIMERS["aten"])
    return (loop if window == "original" else window), statistic


def protocol_timing_options(window: str = "original") -> TimingOptions:
    """The protocol stage (timing_protocol.py): every timed case of the original's grid, timed as the original
    times it (ORIGINAL_TIMERS). Fewer rounds than the device-time stage: there are ~40-100 such cases per
    operator against 6, and a 110-operator submission must still be judged in minutes; the operator's figure
    is a mean over all of them. About 4 ms a case: each of the do_bench loop's four batches (two a side) runs
    as many timed calls as a quarter of that allows by its estimate of one iteration, 4 to 10 (2 for calls
    of 1 ms or more); the back-to-back loop runs up to the original's 100 calls a batch where they fit; the
    synchronised loops stop at an RSE of both medians under 2 %, the budget, or 10 rounds, never under 4.
    The do_bench and back-to-back loops rotate no values, so they draw one set, on which the reference is
    timed too; the synchronised loops keep the rotation's two (on the H200 the stage's draws were most of its
    cost: 611 judge-seconds of draws for 5,073 cases with two sets)."""
    rotating = window in ("caller", "whole_call")
    return TimingOptions(
        sets_per_side=2 if rotating else 1,
        fewest_sets=2 if rotating else 1,
        budget_s_per_case=0.004,
        rse_target=0.02,
        min_iterations=4,
        max_iterations=10,
        spot_checks=0,
        max_timed_cases=0,
        window=window,
        stage="protocol_timing",
        separate_reference_sets=False,
        sets_drawn_by_sandbox=True,
    )


@dataclass
class JudgeOptions:
    """Internal knobs. The public ``judge`` uses the defaults; tests pass ``spec`` and switch the scan off
    only to prove that the run-time defences hold on their own."""

    spec: OperatorSpec | None = None
    static_scan: bool = True
    ghost_replay: bool = True
    # A twin replay of every case a ghost replay runs for (correctness.prepare_case, guard.Twins): Triton
    # reads another draw of the inputs, the wrapper sees the call's own.
    twin_replay: bool = True
    isolate: bool = True
    timing: TimingOptions = field(default_factory=TimingOptions)
    # The protocol's speedup beside the device-time one (timing_protocol.py; protocol_timing_options());
    # None: not measured. Off unless asked for (runner.judge: KGB_PROTOCOL_TIMING=on) until its figures
    # hold still on a GPU (docs/judge.md, "The protocol's speedup").
    protocol_timing: TimingOptions | None = None
    # How the judge's processes wait for a GPU (backends.HOST_WAITS; runner.judge: KGB_HOST_WAIT): "auto" is
    # CUDA's own choice, a spin on every judge host; "yield" spins but offers the core to other runnable
    # processes on each turn; "block" sleeps in the driver. Neither applies inside the sandbox's timed
    # loops. Blocking frees the core (co-running Python work 0.90 of its pace against 0.45 beside spinning
    # waiters on the H200) but a woken judge waits for a saturated CPU, holding the GPU longer: the
    # 110-kernel submission took 381.5 s blocking against 364.5 s spinning, released holds in both
    # (docs/judge.md, "Host waits").
    host_wait: str = "auto"
    # The timed loop's stream hold (protocol.Start.stream_hold; runner.judge: KGB_STREAM_HOLD): "spin" or
    # "released" (untrusted/released_hold.py: the device-time loops 12-18 % shorter on the H200, the same
    # figures; the submission's wall time not shorter, docs/judge.md, "Host waits").
    stream_hold: str = "spin"
    sandbox_factory: Callable[[str], Sandbox] | None = None  # e.g. a SandboxPool's acquire
    # Without a factory: "forkserver" forks each sandbox from this process's zygote (milliseconds);
    # "popen" starts a fresh interpreter per job (seconds; the naive baseline of scripts/bench_judge.py).
    launcher: str = "forkserver"
    # Tests only: run the timing path on the CPU interpreter with host-clock "events". The public judge
    # never does this: on the interpreter a speedup would be meaningless.
    timing_on_cpu_for_tests: bool = False
    # Tests only: take the host's device lock on the CPU too (GPU judgements always do), to show on the
    # interpreter how correctness shares it and lends it out while the sandbox compiles.
    device_lock_on_cpu_for_tests: bool = False


class JudgementContext:
    def __init__(self, job: JudgeJob, options: JudgeOptions) -> None:
        self.job = job
        self.options = options
        self.secret = os.urandom(32)
        self.checks: dict[str, CheckOutcome] = {}
        self.case_results: list[CaseResult] = []
        self.environment: dict[str, Any] = {"chip": job.chip_slug, "device_type": job.device_type}
        self.stage_seconds: dict[str, float] = {}
        # Correctness shares the GPU with other judges on this host; timing holds it alone (device_lock).
        device_lock = (
            DeviceLock(job.device_type) if (job.device_type != "cpu" or options.device_lock_on_cpu_for_tests) else None
        )
        self.session = SandboxSession(job, device_lock, self.add_stage)
        self.reference_seconds: dict[str, float] = {}  # per case: the reference's time (per-call limits)
        self.reference_device = torch.device("cpu")
        self.flagged = False
        self.poison_keys: dict[str, list[Any]] = {}  # per case: mutated args that are pure outputs
        self.expected_meta: dict[str, tuple[Any, ...]] = {}  # per case: expected outputs on "meta" (roofline)
        self.inputs_meta: dict[str, Call] = {}  # per case: its call's tensors on "meta" (roofline)
        # Whether ``spec`` is the catalog's record for its operator (runner.is_registered): only then can the
        # sandbox, which finds a record by id, draw inputs from it.
        self.spec_is_registered = False
        self.case_bytes: dict[str, int] = {}  # per case: input + output bytes (which cases to time)
        self.passed_case_dtypes: list[frozenset[str]] = []  # per passed case: its tensors' dtypes
        self.backend = backend_for(job.device_type)
        self.speedup: float | None = None
        self.speedup_ci95: tuple[float, float] | None = None
        self.protocol_speedup: float | None = None
        self.protocol_speedup_ci95: tuple[float, float] | None = None
        # Per timing stage: its chunk of cases shipped ahead, to ride in another stage's exclusive hold
        # (timed_requests.ship_ahead).
        self.shipped_ahead: dict[str, ShippedChunk] = {}
        # Set by runner.run before the first stage: the operator's record, its cases and the memory shares.
        self.spec: OperatorSpec
        self.cases: list[tuple[str, Case]]
        self.trusted_cache_bytes: int
        self.sandbox_keep_alive_bytes: int

    def add_stage(self, name: str, seconds: float) -> None:
        """Accumulate a sub-stage's seconds (``correctness.reference``, ``sandbox.call``...) into the
        environment's ``stage_breakdown``: where the main stages' time goes, for benchmarks and tuning."""
        breakdown = self.environment.setdefault("stage_breakdown", {})
        breakdown[name] = round(breakdown.get(name, 0.0) + seconds, 4)

    def check(self, name: str, outcome: str, detail: str = "") -> None:
        self.checks[name] = CheckOutcome(name, outcome, detail)

    def result(
        self, status: str, reason: str, failed_case: dict[str, Any] | None = None, retryable: bool = False
    ) -> JudgeResult:
        passed = sum(1 for case in self.case_results if case.passed)
        return JudgeResult(
            status=status,
            reason=reason,
            cases_total=len(self.cases) if hasattr(self, "cases") else 0,
            cases_passed=passed,
            failed_case=failed_case,
            case_results=self.case_results,
            speedup=self.speedup if status == "passed" else None,
            speedup_ci95=self.speedup_ci95 if status == "passed" else None,
            protocol_speedup=self.protocol_speedup if status == "passed" else None,
            protocol_speedup_ci95=self.protocol_speedup_ci95 if status == "passed" else None,
            flagged=self.flagged,
            checks=list(self.checks.values()),
            environment=self.environment,
            stage_seconds=self.stage_seconds,
            retryable=retryable,
            judge_version=PROTOCOL_STAGE_VERSION if self.options.protocol_timing is not None else JUDGE_VERSION,
        )

    def make_call(self, case: Case, seed: int) -> Call:
        return inputs.make_call(self.spec, case, seed, self.reference_device)

    def expected(self, case: Case, call: Call) -> tuple[Any, ...]:
        """The reference's outputs for ``call`` (left untouched), on the reference device."""
        return inputs.reference_outputs(self.spec, case, call, self.reference_device, self.backend)

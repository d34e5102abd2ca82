"""``judge(job)``: the trusted side of one judgement, from static scan to verdict.

The trusted side draws a secret seed, builds every case's inputs from it, computes references on private
copies, sends the inputs to a fresh sandbox, and compares what comes back. The sandbox never holds an
expected output, the comparison or the seed. See docs/judge.md for the whole design.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import random
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from evaluation.catalog.inputs import generate_on
from evaluation.catalog.spec import Call, Case, OperatorSpec
from evaluation.judge import wire
from evaluation.judge.backends import backend_for
from evaluation.judge.compare import (
    bit_identical,
    compare_outputs,
    flat_tensors,
    fp64_relative_error,
    storage_copier,
)
from evaluation.judge.device_lock import DeviceBusy, DeviceLock
from evaluation.judge.guard import poison_tree
from evaluation.judge.job import CaseResult, CheckOutcome, JudgeJob, JudgeResult
from evaluation.judge.sandbox import HarnessError, Sandbox
from evaluation.judge.static_scan import scan_source

# The most device memory the trusted side's allocator may keep cached between correctness cases, and the
# sandbox's earlier cases' tensors may hold (sandbox_worker.Worker._trim_keep_alive), when the GPU is not
# shared: several judges share one GPU, and on the H200 sixteen of them holding their largest case's cache
# (up to 9 GiB each) ran it out of memory (2026-11-30). With more judges, device_memory_budget shrinks both.
TRUSTED_CACHE_BYTES = 2 * 1024**3
SANDBOX_KEEP_ALIVE_BYTES = 4 * 1024**3
# Per judge: a trusted and a sandbox process (and the warm spare for the next judgement) each hold a device
# context of about 0.5 GiB on the H200; what is left of its share goes a quarter to the trusted side's
# cache and a third to the sandbox's kept tensors, the rest to the case at hand.
CONTEXTS_PER_JUDGE_BYTES = 3 * 512 * 1024**2


def device_memory_budget(device_total_bytes: int | None, judges: int) -> tuple[int, int]:
    """(trusted cache, sandbox keep-alive) in bytes for one of ``judges`` judgements sharing a device of
    ``device_total_bytes``: the defaults when unknown or alone, never under 256 / 512 MiB."""
    if not device_total_bytes or judges <= 1:
        return TRUSTED_CACHE_BYTES, SANDBOX_KEEP_ALIVE_BYTES
    share = max(0, device_total_bytes // judges - CONTEXTS_PER_JUDGE_BYTES)
    return (min(TRUSTED_CACHE_BYTES, max(256 * 1024**2, share // 4)),
            min(SANDBOX_KEEP_ALIVE_BYTES, max(512 * 1024**2, share // 3)))

# CPU priorities of a GPU sandbox (root only): correctness and compiling yield to other work, timed loops
# come first (see _start_sandbox and timing_trusted.run_timing).
CORRECTNESS_NICE = 10
TIMING_NICE = -10


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
    # Cases timed per operator (see timing_trusted.select_timed_cases); 0 times every timed case.
    max_timed_cases: int = 6


@dataclass
class JudgeOptions:
    """Internal knobs. The public ``judge`` uses the defaults; tests pass ``spec`` and switch the scan off
    only to prove that the run-time defences hold on their own."""

    spec: OperatorSpec | None = None
    static_scan: bool = True
    ghost_replay: bool = True
    isolate: bool = True
    timing: TimingOptions = field(default_factory=TimingOptions)
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


@dataclass
class _CaseInFlight:
    """One correctness case between its steps (_prepare_case, _call_sandbox, _judge_outputs)."""

    tier: str
    case: Case
    entry: Any
    sent: Call | None  # the inputs as drawn (pure outputs poisoned before sending); dropped once sent
    expected: tuple[Any, ...]
    wants_ghost: bool
    wants_repeat: bool
    variants: int
    before: Call | None = None  # an untouched copy of what was sent
    outputs: tuple[Any, ...] = ()
    reply: dict[str, Any] = field(default_factory=dict)
    repeat_blobs: list[bytes] = field(default_factory=list)
    ghost_outputs: list[tuple[Any, ...] | None] = field(default_factory=list)
    answered_at: float = 0.0


class Verdict(Exception):
    """Raised inside a judgement to stop it with a verdict."""

    def __init__(self, status: str, reason: str, *, check: str = "", case: Case | None = None,
                 tier: str = "", message: str = "", retryable: bool = False) -> None:
        super().__init__(reason)
        self.status, self.reason, self.check, self.case, self.tier = status, reason, check, case, tier
        self.message = message or reason
        self.retryable = retryable  # see JudgeResult.retryable


def judge(job: JudgeJob) -> JudgeResult:
    """Judge one kernel file. Never raises for anything the kernel does; ``error`` means our fault."""
    return judge_with(job, JudgeOptions())


def judge_with(job: JudgeJob, options: JudgeOptions) -> JudgeResult:
    try:
        return _Judgement(job, options).run()
    except Exception:
        return JudgeResult(status="error", reason="judge infrastructure failure:\n" + traceback.format_exc()[-3000:])


def _seed(secret: bytes, *parts: object) -> int:
    digest = hashlib.sha256(secret + "\x00".join(str(part) for part in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def _map_tensors(value: Any, function: Callable[[torch.Tensor], Any]) -> Any:
    if isinstance(value, torch.Tensor):
        return function(value)
    if isinstance(value, list):
        return [_map_tensors(item, function) for item in value]
    if isinstance(value, tuple):
        return tuple(_map_tensors(item, function) for item in value)
    if isinstance(value, dict):
        return {key: _map_tensors(item, function) for key, item in value.items()}
    return value


def _to_device(call: Call, device: torch.device) -> Call:
    """A private copy of a call's tensors on ``device`` keeping sizes, strides, offsets and aliasing: each
    distinct storage is copied once, straight to the device (no trip through bytes), and every view is rebuilt
    on its copy. Always a copy, on the CPU too: the caller may poison and send the original afterwards."""
    move = storage_copier(device)

    def place(value: Any) -> Any:
        # A device argument (creation ops' ``device=``) means the device under test, like the tensors.
        if isinstance(value, torch.device) and value.type == "cpu":
            return device
        if isinstance(value, list):
            return [place(item) for item in value]
        if isinstance(value, tuple):
            return tuple(place(item) for item in value)
        if isinstance(value, dict):
            return {key: place(item) for key, item in value.items()}
        return value

    return Call(args=place(_map_tensors(call.args, move)), kwargs=place(_map_tensors(call.kwargs, move)))


class _Judgement:
    def __init__(self, job: JudgeJob, options: JudgeOptions) -> None:
        self.job = job
        self.options = options
        self.secret = os.urandom(32)
        self.checks: dict[str, CheckOutcome] = {}
        self.case_results: list[CaseResult] = []
        self.environment: dict[str, Any] = {"chip": job.chip_slug, "device_type": job.device_type}
        self.stage_seconds: dict[str, float] = {}
        self.sandbox: Sandbox | None = None
        self.deadline = time.monotonic() + job.time_budget_s
        self.reference_device = torch.device("cpu")
        self.flagged = False
        self.poison_keys: dict[str, list[Any]] = {}  # per case: mutated args that are pure outputs
        self.expected_meta: dict[str, tuple[Any, ...]] = {}  # per case: expected outputs on "meta" (roofline)
        self.case_bytes: dict[str, int] = {}  # per case: input + output bytes (which cases to time)
        self.backend = backend_for(job.device_type)
        # Correctness shares the GPU with other judges on this host; timing holds it alone (device_lock).
        self.device_lock = DeviceLock(job.device_type) if (
            job.device_type != "cpu" or options.device_lock_on_cpu_for_tests) else None
        self._lent_at = 0.0  # when a gated request last gave the GPU up (compiling, or its device work done)
        self._held_at = 0.0  # when a gated request last got the GPU
        self._gate_label = ""  # the gated request's op, for the lock trace
        self.speedup: float | None = None
        self.speedup_ci95: tuple[float, float] | None = None

    # ------------------------------------------------------------------ helpers

    def add_stage(self, name: str, seconds: float) -> None:
        """Accumulate a sub-stage's seconds (``correctness.reference``, ``sandbox.call``...) into the
        environment's ``stage_breakdown``: where the main stages' time goes, for benchmarks and tuning."""
        breakdown = self.environment.setdefault("stage_breakdown", {})
        breakdown[name] = round(breakdown.get(name, 0.0) + seconds, 4)

    def check(self, name: str, outcome: str, detail: str = "") -> None:
        self.checks[name] = CheckOutcome(name, outcome, detail)

    def result(self, status: str, reason: str, failed_case: dict[str, Any] | None = None,
               retryable: bool = False) -> JudgeResult:
        passed = sum(1 for case in self.case_results if case.passed)
        return JudgeResult(
            status=status, reason=reason, cases_total=len(self.cases) if hasattr(self, "cases") else 0,
            cases_passed=passed, failed_case=failed_case, case_results=self.case_results,
            speedup=self.speedup if status == "passed" else None,
            speedup_ci95=self.speedup_ci95 if status == "passed" else None, flagged=self.flagged,
            checks=list(self.checks.values()), environment=self.environment, stage_seconds=self.stage_seconds,
            retryable=retryable,
        )

    # ------------------------------------------------------------------ the run

    def run(self) -> JudgeResult:
        from evaluation.judge.records import find_operator

        try:
            self.spec = self.options.spec or find_operator(self.job.operator_id)
        except KeyError as error:
            return JudgeResult(status="error", reason=str(error.args[0]))
        if self.job.device_type != "cpu" and self.backend.is_available():
            self.reference_device = torch.device(self.job.device_type)
        self.environment["reference_device"] = str(self.reference_device)
        self.trusted_cache_bytes, self.sandbox_keep_alive_bytes = device_memory_budget(
            self.backend.total_memory() if self.reference_device.type != "cpu" else None,
            self.job.judges_sharing_device)
        self.cases = self._collect_cases()
        try:
            self._scan()
            if not self.cases:
                raise Verdict("failed_correctness", "the operator has no cases in the requested tiers")
            self._start_sandbox()
            self._correctness()
            if self.job.measure_timing and (self.job.device_type != "cpu" or self.options.timing_on_cpu_for_tests):
                self._timing()
            else:
                self.check("timing", "skipped", "timing off for this job" if self.job.device_type != "cpu"
                           else "the CPU interpreter's times mean nothing")
        except Verdict as verdict:
            failed_case = None
            if verdict.case is not None:
                failed_case = {"case_id": verdict.case.case_id, "tier": verdict.tier,
                               "params": dict(verdict.case.params), "message": verdict.message}
                self.case_results.append(CaseResult(case_id=verdict.case.case_id, tier=verdict.tier,
                                                    params=dict(verdict.case.params), passed=False,
                                                    message=verdict.message[-2000:]))
            if verdict.check:
                self.check(verdict.check, "failed", verdict.message if verdict.case is None
                           else f"{verdict.case.case_id}: {verdict.message}")
            return self.result(verdict.status, verdict.reason, failed_case, retryable=verdict.retryable)
        except DeviceBusy:
            return self.result("error", f"other judgements on this host held the GPU for over "
                                        f"{self.job.device_wait_limit_s:g} s in all (raise the worker's "
                                        "KGB_DEVICE_WAIT_LIMIT_S or lower its --concurrency)", retryable=True)
        finally:
            self._stop_sandbox()
            if self.reference_device.type != "cpu":
                self.backend.release_cached_memory()
            if self.device_lock is not None:
                self.stage_seconds["device_wait"] = round(self.device_lock.waited_s, 4)
                self.device_lock.close()
        return self.result("passed", f"all {len(self.cases)} cases passed")

    def _collect_cases(self) -> list[tuple[str, Case]]:
        cases: list[tuple[str, Case]] = []
        for tier in self.job.tiers:
            rng = random.Random(_seed(self.secret, "held_out")) if tier == "held_out" else None
            cases.extend((tier, case) for case in self.spec.cases(tier, rng))
        return cases

    def _scan(self) -> None:
        if not self.options.static_scan:
            self.check("static_scan", "skipped", "switched off for this judgement (tests only)")
            return
        scan = scan_source(self.job.source_code)
        if scan.syntax_error:
            raise Verdict("failed_compile", f"syntax error: {scan.syntax_error}")
        if scan.findings:
            detail = "; ".join(str(finding) for finding in scan.findings[:8])
            self.check("static_scan", "failed", detail)
            raise Verdict("rejected", f"static scan: {scan.findings[0]}")
        self.check("static_scan", "passed")

    # ------------------------------------------------------------------ sandbox life

    def _remaining(self) -> float:
        return self.deadline - time.monotonic()

    def _start_sandbox(self) -> None:
        started = time.monotonic()
        self.sandbox = self._new_sandbox()
        self.environment["sandbox"] = {"launcher": self.sandbox.launcher,
                                       "applied": self.sandbox.protections.applied,
                                       "unavailable": self.sandbox.protections.unavailable}
        try:
            if self.sandbox.ready_seconds is None:
                ready = self.sandbox.wait_ready(self.deadline)
                self.environment["sandbox"]["uid"] = ready.get("uid")
                for key in ("prewarm_s", "prewarm_error"):
                    if key in ready:
                        self.environment["sandbox"][key] = ready[key]
        except wire.ChannelTimeout:
            raise Verdict("error", "the sandbox did not start within the budget") from None
        except (wire.PeerClosed, wire.WireError):
            raise Verdict("error", f"the sandbox failed to start ({self.sandbox.exit_status()}): "
                                   f"{self.sandbox.logs()['stderr'][-1500:]}") from None
        self.stage_seconds["process_start"] = round(time.monotonic() - started, 4)
        if self.job.device_type != "cpu" and os.geteuid() == 0:
            # Many judges share a GPU host's cores; a timed loop that waits for the CPU holds the GPU alone
            # for longer and stalls every other judge (on the H200, 16 judges on 16 cores: 41 ms a timing
            # iteration for a 0.08 ms kernel). Correctness and compiling run niced; timing (run_timing) runs
            # ahead of everything. Only root can raise a priority again, so other users change nothing.
            self.environment["sandbox"]["nice"] = CORRECTNESS_NICE if self.sandbox.set_priority(
                CORRECTNESS_NICE) else "unchanged"
        started = time.monotonic()
        entry_points = sorted({case.entry_point for _, case in self.cases})
        path = self.sandbox.write_candidate(self.job.source_code)
        reply = self._request({"op": "start", "token": self.sandbox.token, "device": self._sandbox_device(),
                               "memory_fraction": self.job.device_memory_fraction,
                               "keep_alive_bytes": self.sandbox_keep_alive_bytes, "source_path": path,
                               "entry_points": entry_points, "timing": self.job.measure_timing}, [], None)[0]
        self.environment.update(reply.get("environment", {}))
        self.stage_seconds["compile"] = round(time.monotonic() - started, 4)
        if not reply.get("ok"):
            error = str(reply.get("error", ""))
            if reply.get("missing"):
                raise Verdict("failed_compile", error)
            raise Verdict("failed_compile", import_failure_reason(error))
        self._integrity(reply.get("integrity", []), None, "")
        self.check("entry_points", "passed", ", ".join(entry_points))

    def _new_sandbox(self) -> Sandbox:
        if self.options.sandbox_factory is not None:
            return self.options.sandbox_factory(self.job.device_type)
        if self.options.launcher == "forkserver":
            from evaluation.judge.forkserver import ForkServerError, shared_forkserver

            try:
                server = shared_forkserver(self.job.device_type)
                if self.job.device_type != "cpu" and self.options.isolate:
                    from evaluation.judge.pool import shared_spare

                    return shared_spare(self.job.device_type, server)  # warmed during the last judgement
                return Sandbox(self.job.device_type, isolate=self.options.isolate, forkserver=server)
            except ForkServerError as error:
                self.environment["forkserver_error"] = str(error)
        return Sandbox(self.job.device_type, isolate=self.options.isolate)

    def _sandbox_device(self) -> str:
        return "cpu" if self.job.device_type == "cpu" else f"{self.job.device_type}:0"

    def _stop_sandbox(self) -> None:
        if self.sandbox is None:
            return
        self.environment["candidate_output"] = self.sandbox.logs()
        self.sandbox.close()

    def _request(self, header: dict[str, Any], blobs: list[bytes], case: Case | None, tier: str = "",
                 reply_cap: int = wire.MAX_BLOB_BYTES, gpu: bool = False) -> tuple[dict[str, Any], list[bytes]]:
        """``gpu``: the request uses the GPU outside timing (the sandbox's calls, loading timing sets, its spot
        copies): it holds the GPU shared, but only from the sandbox's ``want_gpu`` to its ``gpu_done`` (not
        while the request and the reply cross the pipe), and lends it out while the sandbox compiles."""
        assert self.sandbox is not None
        where = f" in case {case.case_id}" if case else " while loading"
        lock = self.device_lock
        gated = gpu and lock is not None and not (lock.exclusive_held or lock.shared_held)
        self._gate_label = str(header.get("op", ""))
        try:
            with lock.gated() if gated else contextlib.nullcontext():
                return self.sandbox.request(dict(header, lend_gpu=True, gate_gpu=True) if gated else header, blobs,
                                            lambda: self.deadline, reply_cap,
                                            on_event=self._gate_event if gated else None)
        except wire.ChannelTimeout:
            self.sandbox.kill()
            raise Verdict("timeout", f"the wall-clock budget of {self.job.time_budget_s:g} s ran out{where}",
                          case=case, tier=tier, message="timeout") from None
        except wire.PeerClosed:
            status = self.sandbox.exit_status()
            if "SIGXFSZ" in status:
                status += " (file size limit)"
            if "SIGKILL" in status:
                status += " (killed: memory or process limits)"
            # What the process printed last (the kernel's own output, or the harness's traceback when it
            # failed in a way it could not report) goes with the message, never into the reason.
            stderr = self.sandbox.logs()["stderr"].strip()
            raise Verdict("failed_runtime", f"the sandbox process died{where}: {status}", case=case, tier=tier,
                          message=f"process died: {status}"
                          + (f"\nlast stderr of the kernel's process:\n{stderr[-1500:]}" if stderr else "")) from None
        except wire.WireError as error:
            self.sandbox.kill()
            if "exceed the cap" in str(error):
                raise Verdict("failed_runtime", f"the outputs{where} are far larger than expected: {error}",
                              case=case, tier=tier, message=str(error)) from None
            raise Verdict("rejected", f"the result channel was tampered with{where}: {error}",
                          check="result_channel", case=case, tier=tier, message=str(error)) from None
        except HarnessError as error:
            raise Verdict("error", f"sandbox harness failure{where}: {str(error)[-2000:]}") from None

    def _gate_event(self, event: str) -> None:
        """The sandbox's account of its GPU use inside a gated request (``_request(gpu=True)``).

        ``want_gpu`` / ``compiled``: it is about to use the GPU; it gets it back (queueing like any reader,
        the deadline moved by the wait) before it is told to resume. ``compiling``: Triton compiles (CPU
        work), other judges may use the GPU meanwhile, a waiting timer first. ``gpu_done``: its device work
        for this request is over; encoding and shipping the reply need no GPU. Untrusted: a sandbox that
        lies only holds the GPU longer, or uses it unheld as any process could (docs/judge.md)."""
        lock = self.device_lock
        assert lock is not None
        if event in ("compiling", "gpu_done"):
            if lock.lend():
                now = time.perf_counter()
                self.add_stage("device_lock.shared_held", now - self._held_at)
                self._lent_at = now
            return
        if lock.lent:
            if event == "compiled":
                self.add_stage("device_lock.lent_while_compiling", time.perf_counter() - self._lent_at)
            label = self._gate_label + (".compiled" if event == "compiled" else "")
            self._queue_for_device("shared", lambda give_up_at: lock.take_back(give_up_at, label))
            self._held_at = time.perf_counter()

    def _queue_for_device(self, kind: str, take: Callable[[float], Any]) -> Any:
        """``take(give_up_at)`` the device lock, within what is left of the judgement's device-wait allowance.
        Queueing for the GPU is not the kernel's time: the budget's deadline moves by the wait."""
        assert self.device_lock is not None
        waited_before = self.device_lock.waited_s
        taken = take(time.monotonic() + max(0.0, self.job.device_wait_limit_s - waited_before))
        waited = self.device_lock.waited_s - waited_before
        self.deadline += waited
        self.add_stage(f"device_lock.{kind}_wait", waited)
        return taken

    def _device_shared(self, label: str = "") -> contextlib.AbstractContextManager[None]:
        """Around GPU work outside timing (inputs, references, the sandbox's calls, comparisons): the GPU
        shared with other judges' such work, never with their timed loops. ``label``: for the lock trace."""
        return self._device(exclusive=False, label=label)

    def _device_exclusive(self) -> contextlib.AbstractContextManager[None]:
        """Around an operator's timed loops: no other judge's kernel runs on the GPU meanwhile."""
        return self._device(exclusive=True)

    def _yield_to_timer(self, label: str = "") -> None:
        """Between two GPU steps of one shared hold: let a waiting timer in (see DeviceLock.yield_to_timer)."""
        lock = self.device_lock
        if lock is not None and lock.shared_held and not lock.lent and lock.timer_waiting():
            self._queue_for_device("shared", lambda give_up_at: lock.yield_to_timer(give_up_at, label))

    @contextlib.contextmanager
    def _device(self, exclusive: bool, label: str = "") -> Any:
        lock = self.device_lock
        if lock is None or (not exclusive and (lock.exclusive_held or lock.shared_held)):
            yield  # a shared hold inside a hold: the lock does nothing, and nothing is counted twice
            return
        hold = lock.exclusive if exclusive else functools.partial(lock.shared, label=label)
        kind = "exclusive" if exclusive else "shared"
        with contextlib.ExitStack() as stack:
            self._queue_for_device(kind, lambda give_up_at: stack.enter_context(hold(give_up_at)))
            held_from = time.perf_counter()
            try:
                yield
            finally:
                # How long others were kept off (exclusive) or kept a waiting timer out (shared): the
                # figures that say whether the lock, not the work, sets a busy host's pace.
                self.add_stage(f"device_lock.{kind}_held", time.perf_counter() - held_from)

    def _integrity(self, violations: list[str], case: Case | None, tier: str) -> None:
        if violations:
            raise Verdict("rejected", f"harness integrity: {violations[0]}", check="harness_integrity", case=case,
                          tier=tier, message="; ".join(violations))

    # ------------------------------------------------------------------ correctness

    def _make_call(self, case: Case, seed: int) -> Call:
        generator = torch.Generator().manual_seed(seed)
        # Bulk random values are drawn on the GPU when there is one (a CPU float64 draw of 25M values took
        # longer than judging the case); the call still comes back on the CPU, as records expect.
        with generate_on(self.reference_device if self.reference_device.type != "cpu" else None):
            return self.spec.make_inputs(case, generator)

    def _correctness(self) -> None:
        """Every case, in order. Each takes the GPU twice: one case's comparisons and the next case's inputs
        and reference share a hold (every hold taken is a chance to queue behind a timer: on the H200 with 24
        judges the 40,658 shared holds of a 110-kernel submission waited 3,233 s in all)."""
        started = time.monotonic()
        previous: _CaseInFlight | None = None
        for tier, case in self.cases:
            with self._device_shared("checks+inputs" if previous is not None else "inputs"):
                if previous is not None:
                    self._judge_outputs(previous, record=True)
                    self._yield_to_timer("inputs")
                pending = self._prepare_case(tier, case, _seed(self.secret, tier, case.case_id, 0))
            previous = None
            if self.reference_device.type != "cpu":
                # Sixteen judges' allocator caches (up to 9 GiB each seen) ran the H200 out of memory.
                self.backend.release_cached_memory_over(self.trusted_cache_bytes)
            self._call_sandbox(pending)
            previous = pending
        if previous is not None:
            with self._device_shared("checks"):
                self._judge_outputs(previous, record=True)
        self.stage_seconds["correctness"] = round(time.monotonic() - started, 4)
        for name, detail in (("dispatch_audit", "no compute aten op outside Triton on any call"),
                             ("triton_launched", "every call launched at least one Triton kernel"),
                             ("plain_tensor_outputs", "every output was a plain dense torch.Tensor"),
                             ("inputs_unchanged", "inputs not in the mutates list kept their bits"),
                             ("harness_integrity", "timers, synchronize, launch hooks and dispatch mode "
                                                   "unchanged; no new threads"),
                             ("result_channel", "every reply carried the run token on the private pipe")):
            self.check(name, "passed", detail)
        if "ghost_replay" not in self.checks:
            self.check("ghost_replay", "passed" if self.options.ghost_replay else "skipped",
                       "with launches disabled every case's output was wrong" if self.options.ghost_replay
                       else "switched off")

    def _expected(self, case: Case, call: Call) -> tuple[Any, ...]:
        """The reference's outputs for ``call`` (left untouched), kept on the reference device: the
        comparison runs there."""
        private = _to_device(call, self.reference_device)
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        # cuBLAS may otherwise sum fp16/bf16 GEMM partials in half precision (torch's default): on the H200 a
        # 1000x999x1001 bf16 linear then differed from an fp32-accumulating kernel by 0.25 on small outputs.
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        returned = self.spec.reference(case, private)
        if self.reference_device.type != "cpu":
            self.backend.synchronize()
        return _map_tensors(self.spec.outputs_of(case, private, returned), lambda t: t.detach())

    def _check_case(self, tier: str, case: Case, seed: int, record: bool, ghost: bool = True) -> None:
        """One case, real call and ghost replays, on its own (the post-timing recheck). ``_correctness``
        runs the same three steps, with one case's comparisons and the next case's inputs in one hold."""
        with self._device_shared("inputs"):
            pending = self._prepare_case(tier, case, seed, ghost)
        self._call_sandbox(pending)
        with self._device_shared("checks"):
            self._judge_outputs(pending, record)

    def _prepare_case(self, tier: str, case: Case, seed: int, ghost: bool = True) -> _CaseInFlight:
        """Inputs, reference and the request for one case. Uses the GPU: the caller holds it shared."""
        entry = self.spec.entry_point(case.entry_point)
        started = time.perf_counter()
        sent = self._make_call(case, seed)  # built once: the reference works on a private copy of it
        built = time.perf_counter()
        self.add_stage("correctness.inputs", built - started)
        expected = self._expected(case, sent)
        if case.case_id not in self.poison_keys:  # a property of the case, not of the seed: once per case
            self.poison_keys[case.case_id] = self._pure_output_keys(case, sent, entry, expected)
            self.expected_meta[case.case_id] = _map_tensors(expected, lambda t: t.to("meta"))
            self.case_bytes[case.case_id] = _call_bytes(sent) + sum(
                item.numel() * item.element_size() for item in flat_tensors(expected))
        self.add_stage("correctness.reference", time.perf_counter() - built)
        expected_tensors = flat_tensors(expected)
        return _CaseInFlight(
            tier=tier, case=case, entry=entry, sent=sent, expected=expected,
            wants_ghost=ghost and self.options.ghost_replay and self.spec.judgement != "metadata" and any(
                item.numel() > 0 for item in expected_tensors),
            # Random operators are called twice on the same inputs: two draws must differ (when the
            # reference's do).
            wants_repeat=self.spec.judgement == "statistical" and any(item.numel() > 1 for item in expected_tensors),
            # Integers and bools have no never-right poison: two variants, convicted only if right under both.
            variants=1 if all(item.dtype.is_floating_point or item.dtype.is_complex for item in expected_tensors)
            else 2)

    def _call_sandbox(self, pending: _CaseInFlight) -> None:
        """Send the case, check what the sandbox says about the call, decode its outputs (ghosts' included).
        Host work and a gated request: the caller holds no device lock."""
        case, tier, entry = pending.case, pending.tier, pending.entry
        poison_keys = self.poison_keys[case.case_id]
        for key in poison_keys:
            poison_tree(pending.sent.get(key))
        before = pending.before = Call(args=_map_tensors(pending.sent.args, lambda t: t.clone()),
                                       kwargs=_map_tensors(pending.sent.kwargs, lambda t: t.clone()))
        encoder = wire.Encoder()
        payload = encoder.encode({"args": pending.sent.args, "kwargs": pending.sent.kwargs})
        pending.sent = None  # the sandbox has its copy, ``before`` the untouched one
        asked = time.perf_counter()
        # Ghost replays send back only what is compared (the return value, mutated arguments).
        reply, blobs = self._request({"op": "call", "entry_point": case.entry_point, "payload": payload,
                                      "ghost": pending.wants_ghost, "ghost_variants": pending.variants,
                                      "poison_keys": poison_keys, "ghost_keep": list(entry.mutates),
                                      "repeat": pending.wants_repeat},
                                     encoder.blobs, case, tier,
                                     reply_cap=_reply_cap(encoder.blobs, pending.expected, pending.variants), gpu=True)
        answered = pending.answered_at = time.perf_counter()
        self.add_stage("correctness.sandbox_round_trip", answered - asked)
        self._note_sandbox_phases(reply)
        real = reply.get("real", {})
        if real.get("error"):
            error = str(real["error"])
            if device_was_full(error):
                raise Verdict("error", f"case {case.case_id}: {DEVICE_FULL}", case=case, tier=tier,
                              message=error[-2000:], retryable=True)
            memory = any(word in error for word in ("out of memory", "can't allocate memory", "MemoryError",
                                                    "DefaultCPUAllocator"))
            reason = "ran out of memory" if memory else "raised"
            raise Verdict("failed_runtime", f"case {case.case_id} {reason}: {error.strip().splitlines()[-1][:500]}",
                          case=case, tier=tier, message=error[-2000:])
        if real.get("not_plain"):
            raise Verdict("rejected", f"output is not a plain tensor: {real['not_plain'][0]}",
                          check="plain_tensor_outputs", case=case, tier=tier, message="; ".join(real["not_plain"]))
        if real.get("compute_ops"):
            ops = ", ".join(real["compute_ops"])
            raise Verdict("rejected", f"computed outside Triton: {ops}", check="dispatch_audit", case=case,
                          tier=tier, message=f"aten ops outside Triton: {ops}")
        if int(real.get("launches", 0)) < 1:
            raise Verdict("rejected", "no Triton kernel was launched", check="triton_launched", case=case,
                          tier=tier, message="the call launched no Triton kernel")
        self._integrity(list(reply.get("integrity", [])), case, tier)
        offsets = [int(item) for item in reply.get("ghost_blob_offsets", [])]
        offset = offsets[0] if offsets else len(blobs)
        repeat_offset = int(reply.get("repeat_blob_offset", offset)) if pending.wants_repeat else offset
        decoded = wire.Decoder(blobs[:repeat_offset]).decode(real.get("value"))
        after = Call(args=list(decoded["args"]), kwargs=dict(decoded["kwargs"]))
        changed = self._mutated_inputs(entry, before, after)
        if changed:
            raise Verdict("rejected", f"the call modified input {changed}", check="inputs_unchanged", case=case,
                          tier=tier, message=f"input {changed} is not in the operator's mutates list but changed")
        pending.outputs = self.spec.outputs_of(case, after, decoded["returned"])
        pending.reply, pending.repeat_blobs = reply, blobs[repeat_offset:offset]
        if pending.wants_ghost:
            pending.ghost_outputs = self._decode_ghosts(reply, blobs, offsets, case)

    def _judge_outputs(self, pending: _CaseInFlight, record: bool) -> None:
        """Compare the case's outputs (and ghosts', and a random operator's second draw) with the reference
        on the GPU: the caller holds it shared."""
        case, tier, before, outputs, expected = (pending.case, pending.tier, pending.before, pending.outputs,
                                                 pending.expected)
        message = compare_outputs(self.spec, case, before, outputs, expected)
        if message:
            raise Verdict("failed_correctness", f"case {case.case_id} failed: {message}", case=case, tier=tier,
                          message=message)
        if self.spec.fp64_relative_bound is not None:
            self._fp64_opinion(case, tier, before, outputs)
        if pending.wants_repeat:
            self._draws_differ(pending.reply, pending.repeat_blobs, case, tier, before, outputs, expected)
        if pending.wants_ghost:
            self._ghost(pending.ghost_outputs, case, tier, before, expected)
        if record:
            self.case_results.append(CaseResult(case_id=case.case_id, tier=tier, params=dict(case.params),
                                                passed=True))
        self.add_stage("correctness.checks", time.perf_counter() - pending.answered_at)

    def _note_sandbox_phases(self, reply: dict[str, Any]) -> None:
        """The sandbox's own account of a call (decode, call, encode; ghosts apart; Triton compilations).
        Untrusted numbers, used only to show where time goes; malformed ones are ignored."""
        for kind, outcomes in (("sandbox", [reply.get("real", {})]), ("sandbox.ghost", reply.get("ghosts", []))):
            for outcome in outcomes if isinstance(outcomes, list) else []:
                phases = outcome.get("phase_s") if isinstance(outcome, dict) else None
                if not isinstance(phases, dict):
                    continue
                for phase in ("decode", "call", "encode"):
                    value = phases.get(phase)
                    if isinstance(value, (int, float)) and 0 <= value < 1e6:
                        self.add_stage(f"{kind}.{phase}", float(value))
                compiles = outcome.get("compiles")
                if kind == "sandbox" and isinstance(compiles, int) and 0 <= compiles < 1e6:
                    self.environment["triton_compilations"] = self.environment.get("triton_compilations", 0) + compiles
                    call_s = phases.get("call")
                    if compiles and isinstance(call_s, (int, float)) and 0 <= call_s < 1e6:
                        # Calls that compiled: mostly Triton compilation, done while the GPU is held shared.
                        self.add_stage("sandbox.call_compiling", float(call_s))

    def _draws_differ(self, reply: dict[str, Any], blobs: list[bytes], case: Case, tier: str, before: Call,
                      outputs: tuple[Any, ...], expected: tuple[Any, ...]) -> None:
        """A random operator's second call on the same inputs must also pass its statistical check and must
        not repeat the first call's draws (a fixed seed, or a pattern derived from the inputs), unless the
        reference itself repeats them (rrelu in eval mode is deterministic)."""
        repeat = reply.get("repeat")
        if not isinstance(repeat, dict):
            raise Verdict("error", f"case {case.case_id}: the sandbox did not make the second call")
        if repeat.get("error"):
            raise Verdict("failed_runtime", f"case {case.case_id}: the second call raised: "
                          f"{str(repeat['error']).strip().splitlines()[-1][:500]}", case=case, tier=tier,
                          message=str(repeat["error"])[-2000:])
        if repeat.get("compute_ops") or int(repeat.get("launches", 0)) < 1 or repeat.get("not_plain"):
            raise Verdict("rejected", f"case {case.case_id}: the second call computed outside Triton or launched "
                          "nothing", check="dispatch_audit", case=case, tier=tier,
                          message=f"second call: ops {repeat.get('compute_ops')}, launches {repeat.get('launches')}")
        decoded = wire.Decoder(blobs).decode(repeat.get("value"))
        second = self.spec.outputs_of(case, Call(args=list(decoded["args"]), kwargs=dict(decoded["kwargs"])),
                                      decoded["returned"])
        message = compare_outputs(self.spec, case, before, second, expected)
        if message:
            raise Verdict("failed_correctness", f"case {case.case_id}, second call: {message}", case=case,
                          tier=tier, message=message)
        if not bit_identical(list(outputs), list(second)):
            self.check("random_draws_differ", "passed", "two calls on the same inputs drew different values")
            return
        # Two reference draws on the very inputs the candidate got (pure outputs poisoned alike).
        first, again = self._expected(case, before), self._expected(case, before)
        if bit_identical(list(flat_tensors(first)), list(flat_tensors(again))):
            return  # the reference repeats itself here too: nothing random to demand
        raise Verdict("failed_correctness", f"case {case.case_id}: two calls on the same inputs returned identical "
                      "draws (a fixed seed, or values derived from the inputs)", check="random_draws_differ",
                      case=case, tier=tier, message="identical outputs from two calls of a random operator")

    def _mutated_inputs(self, entry: Any, before: Call, after: Call) -> str:
        # Scratch arguments (workspaces such as paged_attention_v2's tmp_out) may change and are never judged.
        mutates = set(entry.mutates) | set(entry.scratch)
        for index, value in enumerate(before.args):
            if index not in mutates and index < len(after.args) and not bit_identical(value, after.args[index]):
                return f"#{index}"
        for key, value in before.kwargs.items():
            if key not in mutates and not bit_identical(value, after.kwargs.get(key)):
                return repr(key)
        return ""

    def _fp64_opinion(self, case: Case, tier: str, before: Call, outputs: tuple[Any, ...]) -> None:
        # float64 on the reference device (a GPU's fp64 units are exact enough and far faster than a CPU), on
        # the inputs the candidate got (pure outputs poisoned: the reference ignores them, _pure_output_keys).
        call64 = _to_device(before, self.reference_device)
        call64 = Call(args=_map_tensors(call64.args, _widen), kwargs=_map_tensors(call64.kwargs, _widen))
        expected64 = _map_tensors(self.spec.outputs_of(case, call64, self.spec.reference(case, call64)),
                                  lambda t: t.detach())
        error = fp64_relative_error(outputs, expected64)
        bound = self.spec.fp64_relative_bound
        if error is not None and error > bound:
            raise Verdict("failed_correctness", f"case {case.case_id}: relative error {error:.3g} against a float64 "
                          f"reference exceeds {bound:g} (precision loss)", check="fp64_second_opinion", case=case,
                          tier=tier, message=f"||out-ref64||/||ref64|| = {error:.3g} > {bound:g}")
        self.check("fp64_second_opinion", "passed", f"bound {bound:g}")

    def _pure_output_keys(self, case: Case, sent: Call, entry: Any, expected: tuple[Any, ...]) -> list[Any]:
        """Mutated arguments whose prior contents the reference ignores (``out=`` buffers, vLLM ``out``):
        those are poisoned before the call. In-out arguments (in-place ``self``, BLAS ``y``) are not. A record
        that says ``mutated_are_inputs`` (cuBLAS: C = alpha*AB + beta*C, padding that must stay) is taken at
        its word; for the others the reference run on a poisoned copy tells them apart."""
        if entry.mutated_are_inputs:
            return []
        keys = []
        for key in entry.mutates:
            if sum(tensor.numel() for tensor in flat_tensors(sent.get(key))) == 0:
                continue
            private = _to_device(sent, self.reference_device)  # a copy: ``sent`` itself stays as drawn
            poison_tree(private.get(key))
            returned = self.spec.reference(case, private)
            outputs = _map_tensors(self.spec.outputs_of(case, private, returned), lambda t: t.detach())
            if self.spec.judgement == "statistical" or compare_outputs(
                    self.spec, case, sent, outputs, expected) is None:
                keys.append(key)
        return keys

    def _decode_ghosts(self, reply: dict[str, Any], blobs: list[bytes], offsets: list[int],
                       case: Case) -> list[tuple[Any, ...] | None]:
        """Each ghost replay's compared outputs, in order; None for a replay that raised or returned something
        other than plain tensors (its launches mattered). Empty when the reply holds no usable replays."""
        ghosts = reply.get("ghosts", [])
        if not ghosts or len(ghosts) != len(offsets):
            return []
        bounds = [*offsets, len(blobs)]
        decoded_outputs: list[tuple[Any, ...] | None] = []
        for index, ghost in enumerate(ghosts):
            if ghost.get("error") or ghost.get("not_plain"):
                decoded_outputs.append(None)
                continue
            decoded = wire.Decoder(blobs[bounds[index]:bounds[index + 1]]).decode(ghost.get("value"))
            decoded_outputs.append(self.spec.outputs_of(
                case, Call(args=list(decoded["args"]), kwargs=dict(decoded["kwargs"])), decoded["returned"]))
        return decoded_outputs

    def _ghost(self, ghost_outputs: list[tuple[Any, ...] | None], case: Case, tier: str, before: Call,
               expected: tuple[Any, ...]) -> None:
        if not ghost_outputs:
            return
        for outputs in ghost_outputs:
            if outputs is None:
                return  # no output, or an exception: the launches mattered
            if compare_outputs(self.spec, case, before, outputs, expected, explain=False) is not None:
                return  # wrong without launches: the launches did the work
        if self._doing_nothing_is_correct(case, before, expected):
            return  # e.g. x.add_(y, alpha=0.001) in bfloat16 leaves x as it was: the replay proves nothing
        if self._poison_is_correct(case, before, expected, len(ghost_outputs)):
            return  # e.g. fmax(NaN, NaN) where NaN is allowed: poisoned fresh memory is the right answer
        raise Verdict("rejected", f"case {case.case_id}: the output is still correct with every Triton launch "
                      "turned into a no-op", check="ghost_replay", case=case, tier=tier,
                      message="correct output without any Triton launch (fallback or precomputed result)")

    def _poison_is_correct(self, case: Case, before: Call, expected: tuple[Any, ...], variants: int) -> bool:
        """True when outputs made wholly of the replay's poison would pass under every variant the replay
        used: a no-op replay then proves nothing (a 0-dim fmax of two NaNs is NaN, which is also the float
        poison; seen on the H200, 2026-11-29, where it rejected an honest kernel)."""
        for variant in range(variants):
            poisoned = tuple(poison_tree(_map_tensors([item], lambda t: t.clone())[0], variant)
                             if isinstance(item, (torch.Tensor, list, tuple)) else item for item in expected)
            if compare_outputs(self.spec, case, before, poisoned, expected, explain=False) is not None:
                return False
        return True

    def _doing_nothing_is_correct(self, case: Case, before: Call, expected: tuple[Any, ...]) -> bool:
        """True when an in-place call's right answer is its untouched inputs, so a no-op replay must pass."""
        entry = self.spec.entry_point(case.entry_point)
        if entry.compare_return or not entry.mutates:
            return False
        untouched = tuple(before.get(key) for key in entry.mutates)
        return compare_outputs(self.spec, case, before, untouched, expected) is None

    # ------------------------------------------------------------------ timing

    def _timing(self) -> None:
        from evaluation.judge.timing_trusted import run_timing

        started = time.monotonic()
        run_timing(self)  # takes the device alone for its timed loops (device_lock)
        self.stage_seconds["timing"] = round(time.monotonic() - started, 4)


DEVICE_FULL = ("the GPU had no memory left for a modest allocation: other judgements held it, not this "
               "kernel (judge again)")
_OOM_FIGURES = re.compile(r"Tried to allocate ([\d.]+) (\w?i?B)\b.*? of which ([\d.]+) (\w?i?B) is free", re.S)
_UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}


def device_was_full(error: str) -> bool:
    """True for a CUDA out-of-memory error where the device as a whole was nearly exhausted (under 1 GiB
    free, less than the allocation asked for): with several judges on one GPU that is the neighbours'
    memory, not the kernel's (seen on the H200, 2026-11-30: 165 MiB free, 256 MiB asked for, 16 judges).
    A kernel asking for more than the device has fails with plenty still free and stays ``failed_runtime``."""
    found = _OOM_FIGURES.search(error)
    if not found:
        return False
    asked = float(found.group(1)) * _UNITS.get(found.group(2), 1)
    free = float(found.group(3)) * _UNITS.get(found.group(4), 1)
    return free < asked and free < 1024**3


def import_failure_reason(error: str) -> str:
    """The exception first (pages and the API truncate reasons), then the traceback's tail."""
    lines = [line for line in error.strip().splitlines() if line.strip()]
    summary = lines[-1].strip() if lines else "unknown error"
    return f"the kernel file raised on import: {summary[:500]}\n" + error.strip()[-3000:]


def _reply_cap(sent: list[bytes], expected: tuple[Any, ...], variants: int) -> int:
    """Most bytes a call's reply may carry: inputs and outputs for the real call and each ghost, with slack
    (a reply beyond it is a protocol violation, not a reason to exhaust the judge's memory)."""
    expected_bytes = sum(item.numel() * item.element_size() for item in flat_tensors(expected))
    return 64 * 1024 * 1024 + 4 * (1 + variants) * (sum(len(blob) for blob in sent) + expected_bytes)


def _call_bytes(call: Call) -> int:
    """Bytes of the distinct storages a call's tensors use (a view counts its whole buffer once)."""
    seen: dict[int, int] = {}
    for tensor in flat_tensors(list(call.args)) + flat_tensors(list(call.kwargs.values())):
        storage = tensor.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def _widen(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.dtype in (torch.float16, torch.bfloat16, torch.float32):
        return tensor.to(torch.float64)
    if tensor.dtype in (torch.complex32, torch.complex64):
        return tensor.to(torch.complex128)
    return tensor

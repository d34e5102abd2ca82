"""``judge(job)``: the trusted side of one judgement, from static scan to verdict.

The trusted side draws a secret seed, builds every case's inputs from it, computes references on private
copies, sends the inputs to a fresh sandbox, and compares what comes back. The sandbox never holds an
expected output, the comparison or the seed. See docs/judge.md for the whole design.

This module holds the judgement itself (its sandbox, the device lock, the verdict); its two stages live
beside it: correctness.py (every case, and what the outputs mean) and timing_trusted.py (GPU timing).
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
    flat_tensors,
    map_tensors,
    storage_copier,
)
from evaluation.judge.device_lock import DeviceBusy, DeviceLock
from evaluation.judge.job import CaseResult, CheckOutcome, JudgeJob, JudgeResult
from evaluation.judge.sandbox import HarnessError, Sandbox
from evaluation.judge.static_scan import scan_source

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
# Loading a kernel: the per-call floor plus this (device context, memory caps, the module's own import).
START_ALLOWANCE_S = 20.0
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


class Verdict(Exception):
    """Raised inside a judgement to stop it with a verdict."""

    def __init__(self, status: str, reason: str, *, check: str = "", case: Case | None = None,
                 tier: str = "", message: str = "", retryable: bool = False) -> None:
        super().__init__(reason)
        self.status, self.reason, self.check, self.case, self.tier = status, reason, check, case, tier
        self.message = message or reason
        self.retryable = retryable  # see JudgeResult.retryable


def judge(job: JudgeJob) -> JudgeResult:
    """Judge one kernel file. Never raises for anything the kernel does; ``error`` means our fault.

    ``KGB_STATIC_SCAN=off`` in a worker's environment judges without the static scan: for proving, on a
    private deployment, that containment and the run-time checks hold on their own (they must)."""
    return judge_with(job, JudgeOptions(static_scan=os.environ.get("KGB_STATIC_SCAN", "on").lower() != "off"))


def judge_with(job: JudgeJob, options: JudgeOptions) -> JudgeResult:
    try:
        return _Judgement(job, options).run()
    except Exception:
        return JudgeResult(status="error", reason="judge infrastructure failure:\n" + traceback.format_exc()[-3000:])


def _seed(secret: bytes, *parts: object) -> int:
    digest = hashlib.sha256(secret + "\x00".join(str(part) for part in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


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

    return Call(args=place(map_tensors(call.args, move)), kwargs=place(map_tensors(call.kwargs, move)))


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
        # The request in flight's own limit (``_request(call_limit_s=...)``): moved, like the budget's
        # deadline, by waits for the GPU and by compilations; None between requests.
        self.call_deadline: float | None = None
        self.reference_seconds: dict[str, float] = {}  # per case: the reference's time (per-call limits)
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
            self.check("static_scan", "skipped", "switched off for this judgement (KGB_STATIC_SCAN=off or a test)")
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
        if self.sandbox.view:
            self.environment["sandbox"]["view"] = self.sandbox.view
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
        reply = self._request({"op": "start", "token": self.sandbox.token, "device": self._sandbox_device(),
                               "memory_fraction": self.job.device_memory_fraction,
                               "keep_alive_bytes": self.sandbox_keep_alive_bytes, "source": self.job.source_code,
                               "entry_points": entry_points, "timing": self.job.measure_timing}, [], None,
                              call_limit_s=self.job.call_limit_s(0.0) + START_ALLOWANCE_S)[0]
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
                 reply_cap: int = wire.MAX_BLOB_BYTES, gpu: bool = False,
                 call_limit_s: float | None = None) -> tuple[dict[str, Any], list[bytes]]:
        """``gpu``: the request uses the GPU outside timing (the sandbox's calls, loading timing sets, its spot
        copies): it holds the GPU shared, but only from the sandbox's ``want_gpu`` to its ``gpu_done`` (not
        while the request and the reply cross the pipe), and lends it out while the sandbox compiles."""
        assert self.sandbox is not None
        where = f" in case {case.case_id}" if case else " while loading"
        lock = self.device_lock
        gated = gpu and lock is not None and not (lock.exclusive_held or lock.shared_held)
        self._gate_label = str(header.get("op", ""))
        self.call_deadline = None if call_limit_s is None else time.monotonic() + call_limit_s
        try:
            with lock.gated() if gated else contextlib.nullcontext():
                return self.sandbox.request(dict(header, lend_gpu=True, gate_gpu=True) if gated else header, blobs,
                                            self._request_deadline, reply_cap,
                                            on_event=self._gate_event if gated else None)
        except wire.ChannelTimeout:
            self.sandbox.kill()
            if self.call_deadline is not None and self.call_deadline < self.deadline:
                what = f"case {case.case_id}" if case else "loading the kernel"
                raise Verdict("timeout", f"{what}: the call did not return within {call_limit_s:.3g} s "
                              "(the per-call limit: max(floor, factor x the reference's time))", case=case,
                              tier=tier, message=f"per-call limit of {call_limit_s:.3g} s") from None
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
        finally:
            self.call_deadline = None

    def _request_deadline(self) -> float:
        return self.deadline if self.call_deadline is None else min(self.deadline, self.call_deadline)

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
                compiling_s = time.perf_counter() - self._lent_at
                self.add_stage("device_lock.lent_while_compiling", compiling_s)
                if self.call_deadline is not None:  # compiling is not the call's running time
                    self.call_deadline += compiling_s
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
        if self.call_deadline is not None:
            self.call_deadline += waited
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
        if lock is not None and lock.timer_waiting():  # the rest is yield_to_timer's to decide
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

    # ------------------------------------------------------------------ cases: inputs and references

    def _make_call(self, case: Case, seed: int) -> Call:
        generator = torch.Generator().manual_seed(seed)
        # Bulk random values are drawn on the GPU when there is one (a CPU float64 draw of 25M values took
        # longer than judging the case); the call still comes back on the CPU, as records expect.
        with generate_on(self.reference_device if self.reference_device.type != "cpu" else None):
            return self.spec.make_inputs(case, generator)

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
        return map_tensors(self.spec.outputs_of(case, private, returned), lambda t: t.detach())

    # ------------------------------------------------------------------ the stages

    def _correctness(self) -> None:
        from evaluation.judge.correctness import run_correctness

        run_correctness(self)  # every case: inputs, the sandbox's calls, the comparisons

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


def _call_bytes(call: Call) -> int:
    """Bytes of the distinct storages a call's tensors use (a view counts its whole buffer once)."""
    seen: dict[int, int] = {}
    for tensor in flat_tensors(list(call.args)) + flat_tensors(list(call.kwargs.values())):
        storage = tensor.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())

"""The sandbox session of one judgement: the sandbox process, the host's device lock, the budget's deadline
and each request's own limit, and what a failure on the wire means as a verdict.

Correctness shares the GPU with other judges on this host; timing holds it alone (device_lock). Waiting for
the GPU is not the kernel's time: every wait moves the deadlines by as much.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import time
from collections.abc import Callable
from typing import Any

from evaluation.catalog.spec import Case
from evaluation.judge import faults, protocol, wire
from evaluation.judge.device_lock import DeviceLock
from evaluation.judge.job import JudgeJob
from evaluation.judge.sandbox import HarnessError, Sandbox
from evaluation.judge.untrusted import audit_hook
from evaluation.judge.verdicts import DEVICE_FULL, Verdict, device_was_full_by_our_reading

# CPU priorities of a GPU sandbox (root only): correctness and compiling yield to other work, timed loops
# come first (see runner.start_sandbox and timing_trusted.run_timing).
CORRECTNESS_NICE = 10
TIMING_NICE = -10
# A gated request whose device work comes in pieces (a chunk's timing sets, a batch of spot copies) gives
# the GPU back between two pieces once it has held it this long, so a timer that queued meanwhile goes
# first (protocol.GatedRequest.gate_pause_s, untrusted/gpu_gate.GpuGate.next_piece).
GATE_PAUSE_S = 0.05


def _tampered(error: wire.WireError, where: str, case: Case | None, tier: str) -> Verdict:
    """What a reply that breaks the protocol means: the kernel's process forged or corrupted it."""
    return Verdict(
        "rejected",
        f"the result channel was tampered with{where}: {error}",
        check="result_channel",
        case=case,
        tier=tier,
        message=str(error),
    )


class SandboxSession:
    def __init__(self, job: JudgeJob, device_lock: DeviceLock | None, add_stage: Callable[[str, float], None]) -> None:
        self.job = job
        self.device_lock = device_lock
        self.add_stage = add_stage
        self.sandbox: Sandbox | None = None
        self.deadline = time.monotonic() + job.time_budget_s
        # The request in flight's own limit (``request(call_limit_s=...)``): moved, like the budget's
        # deadline, by waits for the GPU and by compilations; None between requests.
        self.call_deadline: float | None = None
        # While the sandbox says Triton compiles, the call's own limit is suspended (compiling is not the
        # call's running time; a compile can outlast the limit): when it began, None otherwise.
        self.compiling_since: float | None = None
        self._lent_at = 0.0  # when a gated request last gave the GPU up (compiling, or its device work done)
        self._held_at = 0.0  # when a gated request last got the GPU
        self._gate_label = ""  # the gated request's op, for the lock trace

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def request(
        self,
        message: protocol.Request,
        blobs: list[bytes],
        case: Case | None,
        tier: str = "",
        reply_cap: int = wire.MAX_BLOB_BYTES,
        gpu: bool = False,
        call_limit_s: float | None = None,
    ) -> tuple[Any, list[bytes]]:
        """Send ``message``; its reply (protocol.REPLIES), decoded, and the reply's blobs. A reply that does not
        decode is the kernel's tampering, as a forged frame is (WireError below).

        ``gpu``: the request uses the GPU outside timing (the sandbox's calls, loading timing sets, its spot
        copies; a protocol.GatedRequest): it holds the GPU shared, but only from the sandbox's ``want_gpu`` to
        its ``gpu_done`` (not while the request and the reply cross the pipe), and lends it out while the
        sandbox compiles."""
        assert self.sandbox is not None
        where = f" in case {case.case_id}" if case else " while loading"
        lock = self.device_lock
        gated = gpu and lock is not None and not (lock.exclusive_held or lock.shared_held)
        if gated:
            message = dataclasses.replace(message, lend_gpu=True, gate_gpu=True, gate_pause_s=GATE_PAUSE_S)
        self._gate_label = message.OP
        self.call_deadline = None if call_limit_s is None else time.monotonic() + call_limit_s
        self.compiling_since = None
        try:
            with lock.gated() if gated else contextlib.nullcontext():
                header, reply_blobs = self.sandbox.request(
                    message.to_header(),
                    blobs,
                    self._request_deadline,
                    reply_cap,
                    on_event=self._gate_event if gated else None,
                )
            return protocol.decode_reply(message, header), reply_blobs
        except wire.ChannelTimeout:
            self.sandbox.kill()
            if self.call_deadline is not None and self.call_deadline < self.deadline:
                what = f"case {case.case_id}" if case else "loading the kernel"
                raise Verdict(
                    "timeout",
                    f"{what}: the call did not return within {call_limit_s:.3g} s "
                    "(the per-call limit: max(floor, factor x the reference's time))",
                    case=case,
                    tier=tier,
                    message=f"per-call limit of {call_limit_s:.3g} s",
                ) from None
            raise Verdict(
                "timeout",
                f"the wall-clock budget of {self.job.time_budget_s:g} s ran out{where}",
                case=case,
                tier=tier,
                message="timeout",
            ) from None
        except wire.PeerClosed:
            status = self.sandbox.exit_status()
            if "SIGXFSZ" in status:
                status += " (file size limit)"
            if "SIGKILL" in status:
                status += " (killed: memory or process limits)"
            if "SIGSEGV" in status or "SIGBUS" in status:
                status += (
                    " (a memory access outside the process's memory: on the CPU interpreter, a load or store"
                    " outside the kernel's buffers)"
                )
            # What the process printed last (the kernel's own output, or the harness's traceback when it
            # failed in a way it could not report) goes with the message, never into the reason.
            stderr = self.sandbox.logs()["stderr"].strip()
            refused = audit_hook.refused_event(stderr) if status == f"exit code {audit_hook.REFUSED_EXIT}" else None
            if refused:
                raise Verdict(
                    "rejected",
                    f"the kernel's process used {refused}, which the sandbox refuses{where}: work the audit of "
                    "torch cannot see (raw memory, another process or thread, the judge's own objects)",
                    check="sandbox_audit_hook",
                    case=case,
                    tier=tier,
                    message=f"audit hook refused {refused}",
                ) from None
            raise Verdict(
                "failed_runtime",
                f"the sandbox process died{where}: {status}",
                case=case,
                tier=tier,
                message=f"process died: {status}"
                + (f"\nlast stderr of the kernel's process:\n{stderr[-1500:]}" if stderr else ""),
            ) from None
        except wire.WireError as error:
            self.sandbox.kill()
            if "exceed the cap" in str(error):
                raise Verdict(
                    "failed_runtime",
                    f"the outputs{where} are far larger than expected: {error}",
                    case=case,
                    tier=tier,
                    message=str(error),
                ) from None
            raise _tampered(error, where, case, tier) from None
        except HarnessError as error:
            text = str(error)
            if isinstance(message, protocol.Start):  # only the judge's code has run in the process yet
                raise Verdict("error", f"sandbox harness failure{where}: {faults.tail_lines(text)}") from None
            raise harness_failure_after_the_kernel_ran(text, self.job.device_type, where, case, tier) from None
        finally:
            self.call_deadline = None

    @contextlib.contextmanager
    def decoding_reply(self, case: Case | None, tier: str = "", where: str | None = None) -> Any:
        """Around decoding what a decoded reply carries (its wire trees, their tensors; wire.Decoder and the
        caller's checks of the tree's structure): that comes from the kernel's process as the header does,
        so a WireError there is the same tampering as a reply that does not decode (request)."""
        try:
            yield
        except wire.WireError as error:
            where = where if where is not None else (f" in case {case.case_id}" if case else " while loading")
            raise _tampered(error, where, case, tier) from None

    def _request_deadline(self) -> float:
        if self.call_deadline is None or self.compiling_since is not None:
            return self.deadline
        return min(self.deadline, self.call_deadline)

    def _gate_event(self, event: str) -> None:
        """The sandbox's account of its GPU use inside a gated request (``request(gpu=True)``).

        ``want_gpu`` / ``compiled``: it is about to use the GPU; it gets it back (queueing like any reader,
        the deadline moved by the wait) before it is told to resume. ``compiling``: Triton compiles (CPU
        work), other judges may use the GPU meanwhile, a waiting timer first. ``gpu_done``: its device work
        for this request is over; encoding and shipping the reply need no GPU. Untrusted: a sandbox that
        lies only holds the GPU longer, or uses it unheld as any process could (docs/judge.md)."""
        lock = self.device_lock
        assert lock is not None
        if event == "compiling" and self.compiling_since is None:
            self.compiling_since = time.monotonic()
        elif event == "compiled" and self.compiling_since is not None:
            if self.call_deadline is not None:
                self.call_deadline += time.monotonic() - self.compiling_since
            self.compiling_since = None
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

    def device_shared(self, label: str = "") -> contextlib.AbstractContextManager[None]:
        """Around GPU work outside timing (inputs, references, the sandbox's calls, comparisons): the GPU
        shared with other judges' such work, never with their timed loops. ``label``: for the lock trace."""
        return self._device(exclusive=False, label=label)

    def device_exclusive(self) -> contextlib.AbstractContextManager[None]:
        """Around an operator's timed loops: no other judge's kernel runs on the GPU meanwhile."""
        return self._device(exclusive=True)

    def yield_to_timer(self, label: str = "") -> None:
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


def harness_failure_after_the_kernel_ran(
    text: str, device_type: str, where: str, case: Case | None, tier: str
) -> Verdict:
    """The verdict when the judge's code in the sandbox failed once the kernel's code had run there."""
    if device_was_full_by_our_reading(text, device_type):
        # The judge's own allocation in the sandbox on a device its neighbours filled (a timed case's inputs,
        # seen on an H100 with 13 judges): ours, transient (verdicts.device_was_full).
        return Verdict(
            "error", f"{DEVICE_FULL}{where}", case=case, tier=tier, message=faults.tail_lines(text), retryable=True
        )
    # Whatever else broke the harness (a device fault that poisoned the context, or the kernel's tampering)
    # is the kernel's, never an error to retry.
    cause = faults.device_fault(text) or f"the judge's code in the kernel's process failed: {faults.last_line(text)}"
    return Verdict(
        "failed_runtime",
        f"the kernel's process failed{where}: {cause}",
        case=case,
        tier=tier,
        message=faults.tail_lines(text),
    )

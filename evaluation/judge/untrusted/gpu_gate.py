"""The sandbox's account of its GPU use to the trusted side: when Triton compiles (the GPU is lent to other
judges meanwhile, CompileWindows) and when a gated request uses the device (GpuGate), with the compilation
and launcher-build counters the evidence reports."""

from __future__ import annotations

import contextlib
import time
from typing import Any, Protocol

from evaluation.judge import protocol


class Channel(Protocol):
    """What the gates need of the harness: its device backend and the result pipe."""

    backend: Any

    def reply(self, message: protocol.Reply, blobs: list[bytes] = ...) -> None: ...

    def report_and_wait(self, event: str) -> None: ...


# Triton compilations in this sandbox (diagnostics: a first call per specialisation pays for one).
COMPILES = [0]


# Seconds spent building Triton's C launchers while the GPU was lent (diagnostics: prebuild_launcher).
LAUNCHER_SECONDS = [0.0]


def prebuild_launcher(hook_kwargs: dict[str, Any]) -> bool:
    """Build the C launcher of the kernel Triton just compiled (``jit_post_compile_hook``'s arguments), now.

    Triton builds one launcher per kernel signature with the host's C compiler (gcc: 0.13-0.2 s each on an
    idle 2-core box, more on a loaded host) when the kernel is first launched, which is after the
    compilation, inside the GPU hold the sandbox has taken back. On the H200 the holds that followed a
    compilation were 426 s in all for a 110-kernel submission (run k, NOTES.md), and timers queued behind
    them. Built here while the GPU is still lent, the launch finds it in the run's own Triton cache and only
    loads it. Pure host work: the launcher module's initialisation makes no CUDA call. False (nothing done;
    the launch builds it, as before) when this Triton is laid out differently or the build fails."""
    try:
        from triton.runtime.driver import driver

        device = hook_kwargs["compile"]["device"]
        kernel = hook_kwargs["fn"].jit_function.device_caches[device][0][hook_kwargs["key"]]
        started = time.perf_counter()
        driver.active.launcher_cls(kernel.src, kernel.metadata)
    except Exception:  # noqa: BLE001 - an optimisation only: any failure leaves Triton's own path
        return False
    LAUNCHER_SECONDS[0] += time.perf_counter() - started
    return True


class CompileWindows:
    """Tell the trusted side when Triton compiles, so it can lend the GPU to other judges meanwhile.

    A correctness call holds the GPU shared (device_lock), and a timing judge waiting for it alone must
    wait for every such hold to end. A candidate's first calls spend most of their time compiling (on the
    H200, 917 of 922 s of sandbox call time over the whole catalog, 16 judges at once), which is CPU work:
    holding the GPU through it stalled every judge behind each waiting timer (NOTES.md). Around each
    compilation this process sends ``compiling`` / ``compiled`` on the result pipe, and after ``compiled``
    waits for the trusted side's ``resume``, sent once it holds the GPU again: no kernel of this process
    runs while the GPU is lent. Only for calls whose request asked for it (``lend_gpu``).

    Untrusted like everything here: a process that lies can only delay itself or disturb other judges' GPU
    use, never forge its own result (docs/judge.md)."""

    def __init__(self, harness: Channel) -> None:
        self.harness = harness
        self.enabled = False
        self.lent = False

    def before(self, *args: Any, **kwargs: Any) -> bool:
        if self.enabled and not self.lent:
            # Kernels this call launched before the compilation must not run on into another judge's timed
            # loop once the GPU is lent out.
            self.harness.backend.synchronize()
            self.harness.reply(protocol.GpuEvent(event="compiling"))
            self.lent = True
        return False  # falsy: Triton goes on and compiles

    def after(self, *args: Any, **kwargs: Any) -> None:
        COMPILES[0] += 1
        if self.lent:
            prebuild_launcher(kwargs)  # host work: before the GPU is taken back, not inside the hold
        self.take_back()

    def take_back(self) -> None:
        """Wait until the GPU is ours again (also after a compilation that raised: no ``after`` then)."""
        if not self.lent:
            return
        self.lent = False
        self.harness.report_and_wait("compiled")


class GpuGate:
    """The device part of a gated request (``gate_gpu``: correctness calls, loading timing sets, spot copies).

    The trusted side holds the GPU shared for such requests, but only while this process uses it: ``open``
    says ``want_gpu`` and waits for ``resume`` before the first device copy, ``close`` waits for this
    process's device work to end and says ``gpu_done`` before the reply is written, so a large request or
    reply crossing the pipe, and the host-side encoding, never keep another judge's timer waiting."""

    def __init__(self, harness: Channel) -> None:
        self.harness = harness
        self.open_now = False
        self.pause_s = 0.0
        self.opened_at = 0.0
        self.piece_begun = False  # a piece of device work has begun since the gate opened

    def open(self, gate_gpu: bool, pause_s: float = 0.0) -> None:
        """``gate_gpu``, ``pause_s``: the request's (protocol.GatedRequest: gate_gpu, gate_pause_s); without
        ``gate_gpu`` the trusted side holds no gate."""
        if not gate_gpu or self.open_now:
            return
        self.harness.report_and_wait("want_gpu")
        self.open_now, self.pause_s, self.opened_at, self.piece_begun = True, pause_s, time.perf_counter(), False

    def next_piece(self) -> None:
        """Before each piece of a gated request's device work (a case's timing sets, a case's spot copies):
        between two pieces, once the GPU has been held ``pause_s``, give it back and ask for it again. A
        timer that declared itself meanwhile then goes first (the trusted side's lock makes readers stand
        back for it), instead of waiting for the whole request: on the H200 a chunk's timing sets held the
        GPU 0.46 s on average and the spot copies 0.31 s, and timers waited 34 holder-seconds a submission
        behind them (docs/measurements/h200-2026-12-02-night-final-loop/). Each pause costs a synchronize
        and two messages, hence only once the hold has lasted ``pause_s``."""
        if not self.open_now:
            return
        if self.piece_begun and self.pause_s > 0 and time.perf_counter() - self.opened_at >= self.pause_s:
            self.close()
            self.open(True, self.pause_s)
        self.piece_begun = True

    def close(self) -> None:
        if not self.open_now:
            return
        self.open_now = False
        # Every stream: nothing of ours still runs once we say so. A device the kernel broke raises here: the
        # reply says so, and the hold ends anyway.
        with contextlib.suppress(Exception):
            self.harness.backend.synchronize()
        self.harness.reply(protocol.GpuEvent(event="gpu_done"))

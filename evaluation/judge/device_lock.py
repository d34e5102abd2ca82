"""One GPU, many judges: correctness shares the device, timing holds it alone.

Several judgements run at once on a GPU host (a worker's pool children, or ``--jobs`` in the scripts):
building inputs, compiling and checking correctness overlap well, but a timed call must not share the device
with anyone else's kernels. This is a readers-writer lock across processes made of two ``flock`` files per
device: the GPU parts of every correctness case take the device lock shared, an operator's timed loops take it
exclusively, once, back to back (their inputs are prepared before and the replies checked after). A
"turnstile" taken briefly by readers and held by a waiting writer keeps a stream of short shared holds from
starving the timing (flock itself queues nobody fairly). Time spent waiting moves the judgement's deadline
(JudgeJob.device_wait_limit_s).

Timers chain: a writer first declares its intent (a shared flock on a third file) and readers stand back
while any intent is declared, so a timer queued behind another gets the device the moment the first lets
go, instead of waiting again for correctness holds that slipped in between to drain. On the H200 with 16
judges, 110 timers waited 120 s in all for such drains, while most other judges were blocked behind them
(2026-11-30, NOTES.md).

Locks are advisory and per host: every judge on the host must use them (the judge does, always).

With ``KGB_DEVICE_LOCK_TRACE`` set to a file, every judge appends one line per wait, hold and release
(``monotonic-seconds pid event kind [label]``; the label says what a shared hold was for) to it:
scripts/gpu/lock_timeline.py turns that into how much of a run's wall time the GPU was held alone, shared,
or by nobody, and which holds kept timers waiting.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


def _trace(event: str, kind: str, label: str = "") -> None:
    path = os.environ.get("KGB_DEVICE_LOCK_TRACE")
    if not path:
        return
    # One short O_APPEND write per line: lines from many processes never interleave mid-line.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
    try:
        line = f"{time.monotonic():.6f} {os.getpid()} {event} {kind}" + (f" {label}" if label else "")
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


class DeviceBusy(TimeoutError):
    """The device could not be had before the judgement's deadline."""


class DeviceLock:
    def __init__(self, device_type: str, directory: str | None = None) -> None:
        from evaluation.judge.backends import BACKENDS

        backend = BACKENDS.get(device_type)
        visible = (backend.visible_devices() if backend else "0").replace(",", "_") or "0"
        base = Path(directory or os.environ.get("KGB_DEVICE_LOCK_DIR") or tempfile.gettempdir())
        stem = f"kgb-device-{device_type}-{visible}"
        self.paths = (base / f"{stem}.turnstile.lock", base / f"{stem}.lock", base / f"{stem}.timers.lock")
        self._files: tuple[int, int, int] | None = None
        self.exclusive_held = False
        self.shared_held = False
        self.lent = False  # a shared hold given up for a while (the sandbox compiling): lend / take_back
        self.waited_s = 0.0  # total time spent waiting for the device (reported with the stages)

    def _fds(self) -> tuple[int, int, int]:
        if self._files is None:
            self._files = tuple(os.open(path, os.O_RDWR | os.O_CREAT, 0o666) for path in self.paths)  # type: ignore[assignment]
        return self._files  # type: ignore[return-value]

    def close(self) -> None:
        if self._files is not None:
            for fd in self._files:
                os.close(fd)
            self._files = None

    def _acquire(self, fd: int, mode: int, deadline: float) -> None:
        started = time.monotonic()
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                self.waited_s += time.monotonic() - started
                return
            except BlockingIOError:
                if time.monotonic() > deadline:
                    self.waited_s += time.monotonic() - started
                    raise DeviceBusy("the device stayed busy with other judgements until the deadline") from None
                time.sleep(0.002)

    @contextlib.contextmanager
    def shared(self, deadline: float, label: str = "") -> Iterator[None]:
        """Held around one correctness case. A no-op inside ``exclusive`` (the post-timing recheck)."""
        if self.exclusive_held or self.shared_held:
            yield
            return
        self._take_shared(deadline, label)
        self.shared_held = True
        try:
            yield
        finally:
            self._end_shared_hold()

    def _end_shared_hold(self) -> None:
        self.shared_held = False
        if self.lent:
            self.lent = False  # already given up
        else:
            self._release_shared()

    def _release_shared(self) -> None:
        fcntl.flock(self._fds()[1], fcntl.LOCK_UN)
        _trace("release", "shared")

    def _take_shared(self, deadline: float, label: str = "") -> None:
        turnstile, device, _ = self._fds()
        _trace("wait", "shared", label)
        started, waited_before = time.monotonic(), self.waited_s
        try:
            self._stand_back_then_share(turnstile, device, deadline)
        finally:
            self.waited_s = waited_before + (time.monotonic() - started)  # turnstile, standing back, device
        _trace("hold", "shared", label)

    def _stand_back_then_share(self, turnstile: int, device: int, deadline: float) -> None:
        while True:
            self._acquire(turnstile, fcntl.LOCK_EX, deadline)
            # Any timer queued (intent declared)? Then stand back: it goes first, with nothing to drain.
            waiting = self.timer_waiting()
            fcntl.flock(turnstile, fcntl.LOCK_UN)
            if not waiting:
                break
            if time.monotonic() > deadline:
                raise DeviceBusy("the device stayed busy with other judgements until the deadline")
            time.sleep(0.002)
        self._acquire(device, fcntl.LOCK_SH, deadline)

    @contextlib.contextmanager
    def gated(self) -> Iterator[None]:
        """A shared hold that starts lent: ``take_back`` when the sandbox asks for the GPU (after the request
        has crossed the pipe), ``lend`` when it says its device work is done (before the reply crosses it),
        so pipe transfers and host-side encoding never keep a waiting timer out. A no-op inside a hold."""
        if self.exclusive_held or self.shared_held:
            yield
            return
        self.shared_held, self.lent = True, True
        try:
            yield
        finally:
            self._end_shared_hold()

    def lend(self) -> bool:
        """Inside ``shared``: give the device up while this judge's sandbox does CPU-only work (Triton
        compiling), so a waiting timer need not wait for it. False (nothing done) outside a shared hold."""
        if not self.shared_held or self.lent or self.exclusive_held:
            return False
        self._release_shared()
        self.lent = True
        return True

    def take_back(self, deadline: float, label: str = "") -> None:
        """Hold the device shared again after ``lend`` (queueing behind a waiting timer like any reader)."""
        if self.lent:
            self._take_shared(deadline, label)
            self.lent = False

    def timer_waiting(self) -> bool:
        """Whether a timer has declared its intent (it waits for this judge's shared hold to end)."""
        timers = self._fds()[2]
        try:
            fcntl.flock(timers, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(timers, fcntl.LOCK_UN)
        return False

    def yield_to_timer(self, deadline: float, label: str = "") -> bool:
        """Inside ``shared``, between two GPU steps: when a timer waits, let go and queue again behind it, so
        a hold made of many steps keeps the timer waiting for one step only. True when it yielded."""
        if not self.shared_held or self.lent or self.exclusive_held or not self.timer_waiting():
            return False
        self._release_shared()
        self._take_shared(deadline, label)
        return True

    @contextlib.contextmanager
    def exclusive(self, deadline: float) -> Iterator[None]:
        """Held around an operator's timed loops: no other judge's kernel runs on the device meanwhile."""
        turnstile, device, timers = self._fds()
        _trace("wait", "exclusive")
        # Intent: readers stand back from now on (blocks only for a reader's instant test of it).
        fcntl.flock(timers, fcntl.LOCK_SH)
        try:
            self._acquire(turnstile, fcntl.LOCK_EX, deadline)
            try:
                self._acquire(device, fcntl.LOCK_EX, deadline)
                _trace("hold", "exclusive")
                self.exclusive_held = True
                try:
                    yield
                finally:
                    self.exclusive_held = False
                    fcntl.flock(device, fcntl.LOCK_UN)
                    _trace("release", "exclusive")
            finally:
                fcntl.flock(turnstile, fcntl.LOCK_UN)
        finally:
            fcntl.flock(timers, fcntl.LOCK_UN)

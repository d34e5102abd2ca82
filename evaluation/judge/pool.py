"""Pre-started sandboxes: the ~4 s torch import happens before the job arrives (design point 6).

Each sandbox in the pool has imported torch and triton and installed its hooks, but has not touched the
device nor loaded a candidate; ``acquire`` hands one out for exactly one job and immediately starts its
replacement, so the import of the next one overlaps the current judgement. Popen returns at once, so no
thread is needed: the child imports in the background and ``wait_ready`` collects it later.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections import deque
from typing import Any

from evaluation.judge.sandbox import Sandbox


class SandboxPool:
    def __init__(
        self, device_type: str, size: int = 1, isolate: bool = True, forkserver: Any = None, prewarm: bool = False
    ) -> None:
        self.device_type = device_type
        self.size = max(0, size)
        self.isolate = isolate
        self.forkserver = forkserver
        self.prewarm = prewarm
        self._ready: deque[Sandbox] = deque()
        self._lock = threading.Lock()
        self._closed = False
        self._fill()

    def _fill(self) -> None:
        while not self._closed and len(self._ready) < self.size:
            self._ready.append(self._new())

    def acquire(self, device_type: str | None = None) -> Sandbox:
        """A fresh sandbox for one job (never one that served another); refills the pool."""
        if device_type is not None and device_type != self.device_type:
            return Sandbox(device_type, isolate=self.isolate)
        with self._lock:
            sandbox = None
            while self._ready:
                candidate = self._ready.popleft()
                if candidate.process.poll() is None:
                    sandbox = candidate
                    break
                candidate.close()  # died while waiting: never hand it out
            if sandbox is None:
                sandbox = self._new()
            self._fill()
        return sandbox

    def _new(self) -> Sandbox:
        return Sandbox(self.device_type, isolate=self.isolate, forkserver=self.forkserver, prewarm=self.prewarm)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            while self._ready:
                self._ready.popleft().close()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


_SPARES: dict[tuple[int, str], SandboxPool] = {}
_SPARES_LOCK = threading.Lock()


def shared_spare(device_type: str, forkserver: Any) -> Sandbox:
    """A fresh fork-server sandbox for one GPU job, taken from a one-sandbox pool of this process whose spare
    was forked during the previous judgement and has warmed its device context and Triton's compiler since
    (prewarm.py). Keyed by pid, like the zygotes; a pool whose zygote was replaced is replaced with it."""
    key = (os.getpid(), device_type)
    with _SPARES_LOCK:
        pool = _SPARES.get(key)
        if pool is None or pool.forkserver is not forkserver:
            if pool is not None:
                pool.close()
            pool = _SPARES[key] = SandboxPool(device_type, size=1, forkserver=forkserver, prewarm=True)
    return pool.acquire()


@atexit.register
def close_spares() -> None:
    """Close this process's warm spares (at exit; or before checking that no sandbox is left running)."""
    with _SPARES_LOCK:
        for key in list(_SPARES):
            if key[0] == os.getpid():
                _SPARES.pop(key).close()

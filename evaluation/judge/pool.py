"""Pre-started sandboxes: the ~4 s torch import happens before the job arrives (design point 6).

Each sandbox in the pool has imported torch and triton and installed its hooks, but has not touched the
device nor loaded a candidate; ``acquire`` hands one out for exactly one job and immediately starts its
replacement, so the import of the next one overlaps the current judgement. Popen returns at once, so no
thread is needed: the child imports in the background and ``wait_ready`` collects it later.
"""

from __future__ import annotations

import threading
from collections import deque

from evaluation.judge.sandbox import Sandbox


class SandboxPool:
    def __init__(self, device_type: str, size: int = 1, isolate: bool = True) -> None:
        self.device_type = device_type
        self.size = max(0, size)
        self.isolate = isolate
        self._ready: deque[Sandbox] = deque()
        self._lock = threading.Lock()
        self._closed = False
        self._fill()

    def _fill(self) -> None:
        while not self._closed and len(self._ready) < self.size:
            self._ready.append(Sandbox(self.device_type, isolate=self.isolate))

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
                sandbox = Sandbox(self.device_type, isolate=self.isolate)
            self._fill()
        return sandbox

    def close(self) -> None:
        with self._lock:
            self._closed = True
            while self._ready:
                self._ready.popleft().close()

    def __enter__(self) -> SandboxPool:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

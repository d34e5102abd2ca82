"""The judge's handle on its zygote (forkserver_main): one per judging process and device type.

``shared_forkserver(device_type)`` starts the zygote on first use (torch import, ~4 s) and reuses it; a
zygote that died is replaced. Sandboxes forked from it behave like freshly started ones (see sandbox.py)
but start in milliseconds. The zygote itself never holds a job's data.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from evaluation.judge import wire
from evaluation.judge.launch import isolation_prefix, zygote_env
from evaluation.judge.protocol import zygote

_SHARED: dict[tuple[int, str], ForkServer] = {}
_SHARED_LOCK = threading.Lock()


class ForkServerError(Exception):
    pass


class ForkServer:
    def __init__(self, device_type: str, env: dict[str, str], prefix: list[str] | None = None) -> None:
        """``prefix`` (``unshare -n setpriv ...``) puts the zygote, and so every fork, in a network namespace
        and under user nobody from the start: a root zygote could not import the rest of its standard
        library after its children drop privileges, and the drop is then inherited, not repeated."""
        self.device_type = device_type
        self.prefix = list(prefix or [])
        self._lock = threading.Lock()
        self._sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.workdir = tempfile.mkdtemp(prefix="kgb-zygote-")
        # Marked with the judging process's pid: a worker's start sweeps the folders of dead ones.
        with open(os.path.join(self.workdir, ".owner-pid"), "w") as marker:
            marker.write(str(os.getpid()))
        self.process = subprocess.Popen(
            [
                *self.prefix,
                sys.executable,
                "-s",
                "-P",
                "-m",
                "evaluation.judge.untrusted.forkserver_main",
                "--sock-fd",
                str(child.fileno()),
                "--parent-pid",
                str(os.getpid()),
            ],
            cwd=self.workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(child.fileno(),),
            start_new_session=True,
        )
        child.close()
        self._ready = False
        self.started_at = time.monotonic()
        self.ready_seconds: float | None = None

    def _receive(self, timeout: float, kind: Any = zygote.ZygoteReply) -> Any:
        """The zygote's next message, decoded as ``kind``; ForkServerError when it is late or malformed."""
        self._sock.settimeout(timeout)
        try:
            data = self._sock.recv(zygote.DATAGRAM_BYTES)
        except (TimeoutError, OSError) as error:
            raise ForkServerError(f"zygote did not answer: {error}") from None
        if not data:
            raise ForkServerError("zygote closed its socket")
        try:
            message = kind.decode(zygote.from_datagram(data))
        except wire.WireError as error:
            raise ForkServerError(f"zygote broke the protocol: {error}") from None
        if getattr(message, "error", None):
            raise ForkServerError(f"zygote refused the request: {message.error}")
        return message

    def wait_ready(self, timeout: float = 120.0) -> None:
        if not self._ready:
            hello = self._receive(timeout, zygote.ZygoteReady)
            if hello.cuda_initialized:
                raise ForkServerError("the zygote initialised CUDA before forking")
            self._ready = True
            self.ready_seconds = time.monotonic() - self.started_at

    def fork(self, request: zygote.ForkSandbox, fds: list[int], timeout: float = 60.0) -> int:
        with self._lock:
            self.wait_ready(timeout)
            socket.send_fds(self._sock, [zygote.to_datagram(request)], fds)
            pid = self._receive(timeout).pid
            if pid is None:
                raise ForkServerError("zygote broke the protocol: a fork without a pid")
            return pid

    def returncode(self, pid: int) -> int | None:
        with self._lock:
            try:
                self._sock.send(zygote.to_datagram(zygote.StatusQuery(pid=pid)))
                return self._receive(30.0).returncode
            except (OSError, ForkServerError):
                return None

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        try:
            self._sock.close()
        finally:
            if self.process.poll() is None:
                self.process.kill()
            self.process.wait(timeout=10)
            shutil.rmtree(self.workdir, ignore_errors=True)


class ForkedProcess:
    """The part of ``subprocess.Popen`` a Sandbox uses, for a child of the zygote."""

    def __init__(self, server: ForkServer, pid: int) -> None:
        self.server = server
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self.returncode = self.server.returncode(self.pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("forked sandbox", timeout)
            time.sleep(0.02)
        return self.returncode  # type: ignore[return-value]


def shared_forkserver(device_type: str) -> ForkServer:
    """This process's zygote for ``device_type`` (started on first use, replaced when it died).

    Keyed by pid: a process forked after the zygote started (a Celery prefork child of a parent that
    warmed one) never talks to its parent's zygote; it starts its own on first use.
    """
    key = (os.getpid(), device_type)
    with _SHARED_LOCK:
        server = _SHARED.get(key)
        if server is None or not server.alive():
            server = ForkServer(device_type, zygote_env(device_type), isolation_prefix(isolate=True))
            _SHARED[key] = server
        return server


def warm_forkserver(device_type: str, timeout: float = 120.0) -> float:
    """Start this process's zygote for ``device_type`` now and wait until it has imported torch and
    triton; returns its start-up seconds. For a Celery worker, once per pool child at start-up:

        @worker_process_init.connect
        def _warm_judge(**_): warm_forkserver(detect_chip()[1])

    (``worker_process_init`` runs in each prefork child; ``worker_init`` would run in the parent, whose
    zygote the children cannot use.) Safe to call again: a live zygote is reused, a dead one replaced.
    """
    server = shared_forkserver(device_type)
    server.wait_ready(timeout)
    return float(server.ready_seconds or 0.0)


@atexit.register
def close_forkservers() -> None:
    """Stop the zygotes this process started (a clean exit; a killed process's zygote dies by
    PR_SET_PDEATHSIG instead, and its sandboxes with it)."""
    with _SHARED_LOCK:
        mine = [key for key in _SHARED if key[0] == os.getpid()]
        for key in mine:
            with contextlib.suppress(Exception):
                _SHARED.pop(key).close()

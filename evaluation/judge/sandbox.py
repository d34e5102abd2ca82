"""The trusted side's handle on one sandbox process: how it is started, limited, talked to and killed.

Start: ``python -s -P -m evaluation.judge.sandbox_main`` in a fresh temporary directory (cwd, HOME, TMPDIR,
TRITON_CACHE_DIR), with an environment built from an allow-list (no SECRET_KEY, DATABASE_URL, broker URLs),
``start_new_session`` (own process group, killed as a whole), rlimits set in ``preexec_fn`` and, when this
process is root, a new network namespace (``unshare -n``) and a drop to user ``nobody`` (``setpriv``).
Results arrive on a private pipe; stdout/stderr go to files that end up, truncated, in the evidence.
A ``Sandbox`` serves one job and is then killed: a process that loaded a candidate is never reused.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pwd
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.judge import wire

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ENV_ALLOW = ("PATH", "LANG", "LC_ALL", "CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH",
             "NVIDIA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "MUSA_VISIBLE_DEVICES",
             "MACA_VISIBLE_DEVICES", "TRITON_PTXAS_PATH", "TRITON_LIBCUDA_PATH")
LOG_LIMIT = 4000


@dataclass(frozen=True)
class Limits:
    # RLIMIT_NPROC counts every thread of every process of the user, and all sandboxes (and their zygotes)
    # run as ``nobody``: the cap is shared by every judgement on the host. 256 was too few for ten judges at
    # once on the H200 (CUDA, torch and Triton each start threads; ptxas runs as a child): the likely reason
    # a sandbox died at about 60 s in two parallel runs (not confirmed there). 4096 still stops a fork bomb.
    nproc: int = int(os.environ.get("KGB_SANDBOX_NPROC", "4096"))
    nofile: int = 256
    fsize_bytes: int = 64 * 1024 * 1024
    address_space_bytes: int = 24 * 1024 * 1024 * 1024  # CPU only: RLIMIT_AS breaks the CUDA driver
    cpu_threads: int = 1


@dataclass
class Protections:
    """Which protections applied to this sandbox, for the evidence."""

    applied: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)


@functools.cache
def _netns_available() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    try:
        return subprocess.run(["unshare", "-n", "true"], timeout=10, capture_output=True).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _nobody() -> tuple[int, int] | None:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def _preexec(limits: Limits, device_type: str) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.nofile, limits.nofile))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.fsize_bytes, limits.fsize_bytes))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.nproc, limits.nproc))
    if device_type == "cpu":
        resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes, limits.address_space_bytes))


def base_env(device_type: str, limits: Limits = Limits()) -> dict[str, str]:
    """The allow-listed environment every sandbox (and the zygote) starts from: no secrets, no URLs."""
    env = {key: os.environ[key] for key in ENV_ALLOW if key in os.environ}
    env.setdefault("PATH", "/usr/bin:/bin")
    env.update({"PYTHONPATH": str(PROJECT_ROOT), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "random",
                "PYTHONUNBUFFERED": "1"})
    if device_type == "cpu":
        env.update({"TRITON_INTERPRET": "1", "OMP_NUM_THREADS": str(limits.cpu_threads)})
    else:
        env["OMP_NUM_THREADS"] = "2"  # the candidate's host work is small; threads count against nproc
    return env


def zygote_env(device_type: str) -> dict[str, str]:
    env = base_env(device_type)
    if os.geteuid() == 0 and _nobody() is not None and not shutil.which("setpriv"):
        env["KGB_SANDBOX_SETUID"] = str(_nobody()[0])
    return env


def isolation_prefix(isolate: bool) -> list[str]:
    """``unshare -n`` (new network namespace) and ``setpriv`` (user nobody) where this process may use them."""
    prefix: list[str] = ["unshare", "-n"] if isolate and _netns_available() else []
    nobody = _nobody() if isolate and os.geteuid() == 0 else None
    if nobody is not None and shutil.which("setpriv"):
        prefix += ["setpriv", f"--reuid={nobody[0]}", f"--regid={nobody[1]}", "--clear-groups", "--"]
    return prefix


# What a sandbox may report about its use of the GPU before its reply (see Sandbox.request).
SANDBOX_GPU_EVENTS = ("compiling", "compiled", "want_gpu", "gpu_done")


class Sandbox:
    """One sandbox process. Create, ``request`` messages, ``close``.

    ``forkserver`` given: the process is forked from that zygote (fast); otherwise a fresh interpreter is
    started with Popen. Both get the same protections.
    """

    def __init__(self, device_type: str, limits: Limits = Limits(), isolate: bool = True,
                 forkserver: Any = None, prewarm: bool = False) -> None:
        """``prewarm``: a spare forked ahead of need initialises its device and Triton's compiler before it
        says it is ready (fork-server sandboxes on a GPU only; see prewarm.py and pool.shared_spare)."""
        self.device_type = device_type
        self.limits = limits
        self.protections = Protections()
        self.token = secrets.token_hex(16)
        self.workdir = Path(tempfile.mkdtemp(prefix="kgb-sandbox-"))
        self.logdir = Path(tempfile.mkdtemp(prefix="kgb-logs-"))  # outside the sandbox's reach when dropped
        self.started_at = time.monotonic()
        self.ready_seconds: float | None = None
        self.launcher = "forkserver" if forkserver is not None else "popen"
        cmd_read, self.cmd_write = os.pipe()
        self.res_read, res_write = os.pipe()
        wire.widen_pipe(self.cmd_write)
        wire.widen_pipe(self.res_read)
        os.set_blocking(self.cmd_write, False)  # sends honour the deadline (wire._write_all)
        for path in ("home", "tmp", "triton-cache"):
            (self.workdir / path).mkdir()
        run_env = {"HOME": str(self.workdir / "home"), "TMPDIR": str(self.workdir / "tmp"),
                   "TRITON_CACHE_DIR": str(self.workdir / "triton-cache")}
        if prewarm and forkserver is not None:  # (on the CPU only in tests: the interpreter has nothing to warm)
            run_env["KGB_SANDBOX_PREWARM"] = device_type
        env = dict(base_env(device_type, limits), **run_env)
        self.protections.applied += ["scrubbed environment (allow-list)", "fresh temp cwd/HOME/TRITON_CACHE_DIR",
                                     "own process group", "rlimits: core=0, nofile, fsize, nproc",
                                     "dies with the judging process (PR_SET_PDEATHSIG)"]
        if device_type == "cpu":
            self.protections.applied.append("rlimit address space")
        else:
            self.protections.unavailable.append("rlimit address space (breaks the CUDA driver; GPU memory capped "
                                                "with set_per_process_memory_fraction instead)")
        is_root = os.geteuid() == 0
        netns = isolate and _netns_available()
        if netns and forkserver is not None:
            self.protections.applied.append("no network (network namespace of the zygote, shared by its forks)")
        elif netns:
            self.protections.applied.append("no network (new network namespace)")
        else:
            self.protections.unavailable.append("network namespace (needs root and unshare)")
        nobody = _nobody() if isolate and is_root else None
        if nobody is not None:
            for path in [self.workdir, *self.workdir.iterdir()]:
                os.chown(path, *nobody)
            self.protections.applied.append("runs as user nobody")
        else:
            self.protections.unavailable.append("privilege drop (not root)" if not is_root else "privilege drop")
        self.stdout_path = self.logdir / "stdout.log"
        self.stderr_path = self.logdir / "stderr.log"
        with open(self.stdout_path, "wb") as stdout, open(self.stderr_path, "wb") as stderr:
            if forkserver is not None:
                from evaluation.judge.forkserver import ForkedProcess

                # The zygote already runs in its network namespace and as nobody (isolation_prefix).
                request = {"workdir": str(self.workdir), "env": run_env, "netns": False, "uid": None, "gid": None,
                           "limits": {"nofile": limits.nofile, "fsize": limits.fsize_bytes, "nproc": limits.nproc,
                                      "address_space": limits.address_space_bytes if device_type == "cpu" else 0}}
                pid = forkserver.fork(request, [cmd_read, res_write, stdout.fileno(), stderr.fileno()])
                self.process: Any = ForkedProcess(forkserver, pid)
            else:
                prefix: list[str] = ["unshare", "-n"] if netns else []
                if nobody is not None:
                    if shutil.which("setpriv"):
                        prefix += ["setpriv", f"--reuid={nobody[0]}", f"--regid={nobody[1]}", "--clear-groups", "--"]
                    else:
                        env["KGB_SANDBOX_SETUID"] = str(nobody[0])
                command = [*prefix, sys.executable, "-s", "-P", "-m", "evaluation.judge.sandbox_main",
                           "--cmd-fd", str(cmd_read), "--res-fd", str(res_write), "--parent-pid", str(os.getpid())]
                self.process = subprocess.Popen(
                    command, cwd=self.workdir, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                    pass_fds=(cmd_read, res_write), start_new_session=True, close_fds=True,
                    preexec_fn=functools.partial(_preexec, limits, device_type),
                )
        os.close(cmd_read)
        os.close(res_write)

    # ---------------------------------------------------------------- messages

    def wait_ready(self, deadline: float) -> dict[str, Any]:
        header, _ = wire.receive(self.res_read, deadline)
        if header.get("event") != "ready":
            raise wire.WireError(f"unexpected first message {header.get('event')!r}")
        self.ready_seconds = time.monotonic() - self.started_at
        return header

    def request(self, header: dict[str, Any], blobs: list[bytes], deadline: float | Callable[[], float],
                max_blob_bytes: int = wire.MAX_BLOB_BYTES,
                on_event: Callable[[str], None] | None = None) -> tuple[dict[str, Any], list[bytes]]:
        """Send a command and read its reply; the reply must carry this run's token. ``deadline``: a
        monotonic time, or a function giving it (read again after each event: waiting for the GPU moves it).

        Before its reply the sandbox may report on its use of the GPU (sandbox_worker.GpuGate and
        CompileWindows): ``want_gpu`` (a gated request: nothing touched the device yet), ``gpu_done`` (its
        device work is over), ``compiling`` and ``compiled`` (Triton compiles: CPU work). ``on_event`` sees
        each; after ``want_gpu`` and ``compiled`` it must return holding the GPU, and the sandbox is told to
        resume. Without ``on_event`` the sandbox resumes at once."""
        deadline_of = deadline if callable(deadline) else (lambda: deadline)
        wire.send(self.cmd_write, header, blobs, deadline_of())
        while True:
            reply, reply_blobs = wire.receive(self.res_read, deadline_of(), max_blob_bytes)
            if reply.get("token") != self.token:
                raise wire.WireError("reply without this run's token")
            event = reply.get("event")
            if event not in SANDBOX_GPU_EVENTS:
                break
            if on_event is not None:
                on_event(event)
            if event in ("compiled", "want_gpu"):
                wire.send(self.cmd_write, {"op": "resume"}, [], deadline_of())
        if reply.get("event") == "harness_error":
            raise HarnessError(str(reply.get("error", "")))
        return reply, reply_blobs

    def set_priority(self, nice: int) -> bool:
        """Set the CPU priority of the sandbox's process group (its compilers included); False where this
        process may not (only root may raise a priority again, so callers that are not root change none)."""
        try:
            os.setpriority(os.PRIO_PGRP, self.process.pid, nice)
            return True
        except (OSError, AttributeError):
            return False

    def write_candidate(self, source: str) -> str:
        path = self.workdir / "candidate_kernel.py"
        path.write_text(source)
        nobody = _nobody() if os.geteuid() == 0 else None
        if nobody is not None and "runs as user nobody" in self.protections.applied:
            os.chown(path, *nobody)
        return str(path)

    # ---------------------------------------------------------------- end of life

    def exit_status(self, wait_s: float = 2.0) -> str:
        """How the process ended, in words ("exit code 3", "killed by signal SIGSEGV")."""
        try:
            code = self.process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return "still running"
        if code < 0:
            try:
                return f"killed by signal {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        if code > 128 and code - 128 < 65:  # unshare/setpriv report a child's signal as 128 + n
            try:
                return f"exit code {code} (signal {signal.Signals(code - 128).name})"
            except ValueError:
                pass
        return f"exit code {code}"

    def logs(self) -> dict[str, str]:
        out = {}
        for name, path in (("stdout", self.stdout_path), ("stderr", self.stderr_path)):
            try:
                with open(path, "rb") as handle:
                    data = handle.read(LOG_LIMIT + 1)
                truncated = "\n[truncated]" if len(data) > LOG_LIMIT else ""
                out[name] = data[:LOG_LIMIT].decode(errors="replace") + truncated
            except OSError:
                out[name] = ""
        return out

    def kill(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        if os.geteuid() == 0:
            # A candidate running as nobody may have left processes behind in its own new session.
            nobody = _nobody()
            if nobody is not None and "runs as user nobody" in self.protections.applied:
                _kill_strays(self.process.pid)

    def close(self) -> None:
        self.kill()
        for fd in (self.cmd_write, self.res_read):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.workdir, ignore_errors=True)
        shutil.rmtree(self.logdir, ignore_errors=True)


class HarnessError(Exception):
    """The sandbox harness (our code) failed, not the candidate."""


def _kill_strays(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)

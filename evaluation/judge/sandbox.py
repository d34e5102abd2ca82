"""The trusted side's handle on one sandbox process: how it is started, contained, talked to and killed.

Start: ``python -s -P -m evaluation.judge.untrusted.sandbox_main`` (or a fork of the zygote, forkserver_main) with an
environment built from an allow-list (no SECRET_KEY, DATABASE_URL, broker URLs), its own session and rlimits.
Where this process is root, the sandbox is contained by the operating system (isolation.py): its own slot
uid, PID / mount / network / IPC namespaces, a read-only view of only what the judge needs, private
size-capped tmpfs for its work dir, /tmp and /dev/shm, and a cgroup where the host has one. Elsewhere the
older, weaker protections apply (a drop to ``nobody``, a network namespace when ``unshare`` works) and the
evidence lists what was unavailable. The candidate's source travels on the private pipe and is written
inside the sandbox's own work dir: nothing of it is left in a shared place. Results arrive on the pipe;
stdout/stderr go to files that end up, truncated, in the evidence.
A ``Sandbox`` serves one job and is then killed: a process that loaded a candidate is never reused.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluation.judge import isolation, protocol, wire
from evaluation.judge.launch import Limits, Protections, base_env, netns_available, nobody_ids, preexec
from evaluation.judge.protocol import zygote

LOG_LIMIT = 4000


class Sandbox:
    """One sandbox process. Create, ``request`` messages, ``close``.

    ``forkserver`` given: the process is forked from that zygote (fast); otherwise a fresh interpreter is
    started with Popen. Both get the same protections.
    """

    def __init__(
        self,
        device_type: str,
        limits: Limits = Limits(),
        isolate: bool = True,
        forkserver: Any = None,
        prewarm: bool = False,
        containment: isolation.ContainmentLimits | None = None,
    ) -> None:
        """``prewarm``: a spare forked ahead of need initialises its device and Triton's compiler before it
        says it is ready (fork-server sandboxes on a GPU only; see prewarm.py and pool.shared_spare).
        ``isolate``: contain it (tests of the judge's own logic may switch it off; production never does)."""
        self.device_type = device_type
        self.limits = limits
        self.protections = Protections()
        self.token = secrets.token_hex(16)
        self.started_at = time.monotonic()
        self.ready_seconds: float | None = None
        self.launcher = "forkserver" if forkserver is not None else "popen"
        self.lease: isolation.SlotLease | None = None
        self.leased_at = 0.0  # wall clock when the identity was leased (evidence)
        self.cgroup: isolation.Cgroup | None = None
        self.workdir: Path | None = None
        self.view: list[str] = []  # host paths the sandbox sees (read-only), for the evidence
        self.logdir = _owned_tempdir("kgb-logs-")  # root's, outside every sandbox's view
        why_not = isolation.containment_available() if isolate else "switched off for this judgement (tests only)"
        self.contained = why_not is None
        view: isolation.ViewPlan | None = None
        try:
            if self.contained:
                containment = containment or isolation.ContainmentLimits()
                self.lease = isolation.lease_slot()
                self.leased_at = time.time()
                self.cgroup = isolation.Cgroup.create(self.lease.slot, containment)
                view = isolation.plan_view(device_type, self.lease, self.cgroup, containment)
                run_env = isolation.contained_environment()
                self.view = list(view.read_only)
                self._note_containment(view, containment)
            else:
                self.workdir = _owned_tempdir("kgb-sandbox-")
                for path in ("home", "tmp", "triton-cache"):
                    (self.workdir / path).mkdir()
                run_env = {
                    "HOME": str(self.workdir / "home"),
                    "TMPDIR": str(self.workdir / "tmp"),
                    "TRITON_CACHE_DIR": str(self.workdir / "triton-cache"),
                }
                self.protections.unavailable.append(f"containment by the operating system ({why_not})")
            self._start(device_type, limits, isolate, forkserver, prewarm, run_env, view)
        except BaseException:
            self._release()
            raise

    def _note_containment(self, view: isolation.ViewPlan, containment: isolation.ContainmentLimits) -> None:
        assert self.lease is not None and self.cgroup is not None
        self.protections.applied += [
            f"own uid {self.lease.uid} (host slot {self.lease.slot}), no capabilities, no_new_privs",
            "own PID namespace (one kill ends every process it started)",
            "own mount namespace: read-only view of Python, torch, triton and the judge only",
            f"private tmpfs: work dir {containment.workdir_bytes >> 20} MiB, /tmp {containment.tmp_bytes >> 20} MiB, "
            f"/dev/shm {containment.shm_bytes >> 20} MiB",
            "no network (own network namespace)",
            "own IPC and UTS namespaces",
        ]
        self.protections.applied += self.cgroup.applied
        self.protections.unavailable += self.cgroup.unavailable
        if not self.cgroup.paths:
            self.protections.applied.append(f"process cap: rlimit nproc {self.limits.nproc} for the slot's own uid")

    def _start(
        self,
        device_type: str,
        limits: Limits,
        isolate: bool,
        forkserver: Any,
        prewarm: bool,
        run_env: dict[str, str],
        view: isolation.ViewPlan | None,
    ) -> None:
        cmd_read, self.cmd_write = os.pipe()
        self.res_read, res_write = os.pipe()
        wire.widen_pipe(self.cmd_write)
        wire.widen_pipe(self.res_read)
        os.set_blocking(self.cmd_write, False)  # sends honour the deadline (wire._write_all)
        if prewarm and forkserver is not None:  # (on the CPU only in tests: the interpreter has nothing to warm)
            run_env = dict(run_env, KGB_SANDBOX_PREWARM=device_type)
        env = dict(base_env(device_type, limits), **run_env)
        self.protections.applied += [
            "scrubbed environment (allow-list)",
            "own session and process group",
            "rlimits: core=0, nofile, fsize, nproc",
            "dies with the judging process (PR_SET_PDEATHSIG)",
        ]
        if device_type == "cpu":
            self.protections.applied.append("rlimit address space")
        else:
            self.protections.unavailable.append(
                "rlimit address space (breaks the CUDA driver; GPU memory capped "
                "with set_per_process_memory_fraction instead)"
            )
        nobody = None
        if view is None:
            is_root = os.geteuid() == 0
            netns = isolate and netns_available()
            if netns:
                self.protections.applied.append("no network (network namespace)")
            else:
                self.protections.unavailable.append("network namespace (needs root and unshare)")
            nobody = nobody_ids() if isolate and is_root else None
            if nobody is not None and self.workdir is not None:
                for path in [self.workdir, *self.workdir.iterdir()]:
                    os.chown(path, *nobody)
                self.protections.applied.append("runs as user nobody")
            else:
                self.protections.unavailable.append("privilege drop" + ("" if is_root else " (not root)"))
        self.stdout_path = self.logdir / "stdout.log"
        self.stderr_path = self.logdir / "stderr.log"
        with open(self.stdout_path, "wb") as stdout, open(self.stderr_path, "wb") as stderr:
            if forkserver is not None:
                from evaluation.judge.forkserver import ForkedProcess

                request = zygote.ForkSandbox(
                    workdir=str(self.workdir) if self.workdir else None,
                    env=run_env,
                    view=view.to_json() if view else None,
                    limits=zygote.ForkLimits(
                        nofile=limits.nofile,
                        fsize=limits.fsize_bytes,
                        nproc=limits.nproc,
                        address_space=limits.address_space_bytes if device_type == "cpu" else 0,
                    ),
                )
                pid = forkserver.fork(request, [cmd_read, res_write, stdout.fileno(), stderr.fileno()])
                self.process: Any = ForkedProcess(forkserver, pid)
            else:
                prefix: list[str] = []
                if view is not None:
                    env["KGB_SANDBOX_VIEW"] = json.dumps(view.to_json())
                else:
                    prefix = ["unshare", "-n"] if isolate and netns_available() else []
                    if nobody is not None:
                        if shutil.which("setpriv"):
                            prefix += [
                                "setpriv",
                                f"--reuid={nobody[0]}",
                                f"--regid={nobody[1]}",
                                "--clear-groups",
                                "--",
                            ]
                        else:
                            env["KGB_SANDBOX_SETUID"] = str(nobody[0])
                command = [
                    *prefix,
                    sys.executable,
                    "-s",
                    "-P",
                    "-m",
                    "evaluation.judge.untrusted.sandbox_main",
                    "--cmd-fd",
                    str(cmd_read),
                    "--res-fd",
                    str(res_write),
                    "--parent-pid",
                    str(os.getpid()),
                ]
                self.process = subprocess.Popen(
                    command,
                    cwd=self.workdir or "/",
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=stdout,
                    stderr=stderr,
                    pass_fds=(cmd_read, res_write),
                    start_new_session=True,
                    close_fds=True,
                    preexec_fn=functools.partial(preexec, limits, device_type),
                )
        os.close(cmd_read)
        os.close(res_write)

    # ---------------------------------------------------------------- messages

    def wait_ready(self, deadline: float) -> protocol.Ready:
        header, _ = wire.receive(self.res_read, deadline)
        event = protocol.Envelope.decode(header).event
        if event != "ready":
            raise wire.WireError(f"unexpected first message {event!r}")
        ready = protocol.Ready.decode(header)
        self.ready_seconds = time.monotonic() - self.started_at
        return ready

    def request(
        self,
        header: dict[str, Any],
        blobs: list[bytes],
        deadline: float | Callable[[], float],
        max_blob_bytes: int = wire.MAX_BLOB_BYTES,
        on_event: Callable[[str], None] | None = None,
    ) -> tuple[dict[str, Any], list[bytes]]:
        """Send a command (a protocol request's header) and read its reply's header, which must carry this
        run's token (the caller decodes the rest: session.SandboxSession.request). ``deadline``: a
        monotonic time, or a function giving it (read again after each event: waiting for the GPU moves it).

        Before its reply the sandbox may report on its use of the GPU (harness.GpuGate and
        CompileWindows): ``want_gpu`` (a gated request: nothing touched the device yet), ``gpu_done`` (its
        device work is over), ``compiling`` and ``compiled`` (Triton compiles: CPU work). ``on_event`` sees
        each; after ``want_gpu`` and ``compiled`` it must return holding the GPU, and the sandbox is told to
        resume. Without ``on_event`` the sandbox resumes at once."""
        deadline_of = deadline if callable(deadline) else (lambda: deadline)
        wire.send(self.cmd_write, header, blobs, deadline_of())
        while True:
            reply, reply_blobs = wire.receive(self.res_read, deadline_of(), max_blob_bytes)
            envelope = protocol.Envelope.decode(reply)
            if envelope.token != self.token:
                raise wire.WireError("reply without this run's token")
            if envelope.event not in protocol.GPU_EVENTS:
                break
            event = protocol.GpuEvent.decode(reply).event
            if on_event is not None:
                on_event(event)
            if event in ("compiled", "want_gpu"):
                wire.send(self.cmd_write, protocol.Resume().to_header(), [], deadline_of())
        if envelope.event == protocol.HarnessFailure.EVENT:
            raise HarnessError(protocol.HarnessFailure.decode(reply).error)
        return reply, reply_blobs

    def set_priority(self, nice: int) -> bool:
        """Set the CPU priority of the sandbox's process group (its compilers included); False where this
        process may not (only root may raise a priority again, so callers that are not root change none)."""
        try:
            os.setpriority(os.PRIO_PGRP, self.process.pid, nice)
            return True
        except (OSError, AttributeError):
            return False

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
        """End every process of this sandbox: its process group, then (contained) its cgroup and every
        process of its slot's uid, which also catches children that left the group with ``setsid``."""
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)
        if self.cgroup is not None:
            self.cgroup.kill_and_remove()
        if self.lease is not None:
            isolation.kill_uid(self.lease.uid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        if self.lease is None and os.geteuid() == 0 and "runs as user nobody" in self.protections.applied:
            # A candidate running as nobody may have left processes behind in its own new session.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.process.pid, signal.SIGKILL)

    def _release(self) -> None:
        if self.cgroup is not None:
            self.cgroup.kill_and_remove()
        if self.lease is not None:
            self.lease.release()
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)
        shutil.rmtree(self.logdir, ignore_errors=True)

    def close(self) -> None:
        self.kill()
        for fd in (self.cmd_write, self.res_read):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._release()


class HarnessError(Exception):
    """The sandbox harness (our code) failed, not the candidate."""


def _owned_tempdir(prefix: str) -> Path:
    """A private temp folder marked with this process's pid, so a worker's start can sweep the folders of
    judging processes that died (isolation.sweep_host)."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    (path / ".owner-pid").write_text(str(os.getpid()))
    return path

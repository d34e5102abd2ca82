"""A zygote: imports torch and triton once, then forks one sandbox per job (design point 6).

``python -s -P -m evaluation.judge.untrusted.forkserver_main --sock-fd N`` is started by evaluation.judge.forkserver
with the same scrubbed environment as a sandbox. It never initialises a device, never loads a candidate and
never sees a job's seed or inputs: it only receives, over its unix socket, the fds and settings of the next
sandbox, forks, and reports pids and exit statuses. The forked child applies the same protections a
freshly started sandbox gets (new session, rlimits, network namespace, user nobody, fresh directories),
then runs the sandbox harness. Forking costs milliseconds where a fresh interpreter costs seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import signal
import socket
import sys
import traceback
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluation.judge.protocol import zygote


def _child(request: zygote.ForkSandbox, fds: list[int], sock: socket.socket, zygote_pid: int) -> None:
    """Runs in the forked child: become a sandbox, serve one job, never return."""
    code = 3
    try:
        cmd_read, res_write, stdout_fd, stderr_fd = fds
        sock.close()
        os.setsid()
        os.dup2(stdout_fd, 1)
        os.dup2(stderr_fd, 2)
        os.close(stdout_fd)
        os.close(stderr_fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for key, value in request.env.items():
            os.environ[key] = value
        limits = request.limits
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NOFILE, (limits.nofile, limits.nofile))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.fsize, limits.fsize))
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.nproc, limits.nproc))
        if limits.address_space:
            resource.setrlimit(resource.RLIMIT_AS, (limits.address_space, limits.address_space))
        from evaluation.judge.untrusted.lifeline import die_with_parent

        if request.view:
            from evaluation.judge.untrusted.confine import ViewPlan, enter_sandbox

            # This process stays behind as the keeper; what returns is the contained sandbox.
            die_with_parent(zygote_pid)
            enter_sandbox(ViewPlan(**request.view), close_in_keeper=[cmd_read, res_write])
        else:
            os.chdir(request.workdir)
            die_with_parent(zygote_pid)  # the zygote (our parent) dies: we die
        sys.argv = ["evaluation.judge.untrusted.sandbox_main", "--cmd-fd", str(cmd_read), "--res-fd", str(res_write)]
        from evaluation.judge import protocol, wire
        from evaluation.judge.untrusted import guard
        from evaluation.judge.untrusted.harness import Harness

        hooks = guard.install_launch_hooks()
        guard.install_host_read_counters()
        prewarm_s = prewarm_error = None
        prewarm_device = os.environ.pop("KGB_SANDBOX_PREWARM", "")
        if prewarm_device:  # a spare GPU sandbox: context and compiler warmed before any job (prewarm.py)
            try:
                from evaluation.judge.untrusted.prewarm import prewarm

                prewarm_s = prewarm(prewarm_device)
            except Exception as error:  # the job then pays for it, as without a spare
                prewarm_error = f"{type(error).__name__}: {error}"[:300]
        ready = protocol.Ready(pid=os.getpid(), uid=os.getuid(), prewarm_s=prewarm_s, prewarm_error=prewarm_error)
        wire.send(res_write, ready.to_header())
        harness = Harness(cmd_read, res_write, hooks)
        try:
            harness.serve()
            code = 0
        except wire.PeerClosed:
            code = 0
        except BaseException:
            traceback.print_exc()  # in the sandbox's stderr, which the judge quotes if the report below fails
            with contextlib.suppress(Exception):
                failure = protocol.HarnessFailure(error=traceback.format_exc()[-4000:])
                wire.send(res_write, dict(failure.to_header(), token=harness.token))
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sock-fd", type=int, required=True)
    parser.add_argument("--parent-pid", type=int, default=None)
    options = parser.parse_args()
    uid = os.environ.pop("KGB_SANDBOX_SETUID", "")
    if uid and os.geteuid() == 0:
        os.setgroups([])
        os.setgid(int(uid))
        os.setuid(int(uid))
    from evaluation.judge.untrusted.lifeline import die_with_parent

    # The judging process went away (even by SIGKILL): so do we, and our forks follow us (see _child).
    # Armed after the uid change, which would clear it.
    die_with_parent(options.parent_pid)
    import triton  # noqa: F401
    import triton.runtime.interpreter  # noqa: F401
    import triton.runtime.jit  # noqa: F401

    import evaluation.catalog.spec  # noqa: F401
    from evaluation.catalog import registry
    from evaluation.judge.backends import ACCELERATOR_FAMILIES, BACKENDS
    from evaluation.judge.protocol import zygote
    from evaluation.judge.untrusted import guard
    from evaluation.judge.wire import WireError

    guard.warm_up()
    # The timed loops look up the operator's record for its reference (timing.reference_callable):
    # importing every record module took 0.66 s, paid by each operator's first timed case while it held the
    # GPU alone (on the H200, 35 s of exclusive holds outside the timed loops in a 110-kernel submission).
    # A broken record module is the judge's concern (records.find_operator), not the zygote's.
    with contextlib.suppress(Exception):
        registry.all_operators()
    import evaluation.judge.untrusted.harness

    # The timing loops among them: the zygote's children import nothing of the judge's later.
    evaluation.judge.untrusted.harness.import_the_judges_own_ctypes_callers()

    sock = socket.socket(fileno=options.sock_fd)
    statuses: dict[int, int] = {}
    zygote_pid = os.getpid()
    # Forking after CUDA initialisation breaks the children's CUDA: the client refuses such a zygote.
    cuda_initialized = any(BACKENDS[family].is_initialized() for family in ACCELERATOR_FAMILIES)
    sock.send(zygote.to_datagram(zygote.ZygoteReady(pid=os.getpid(), cuda_initialized=cuda_initialized)))
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, zygote.DATAGRAM_BYTES, 8)
        except OSError:
            return 0
        if not message:
            return 0
        _reap(statuses)
        try:
            request = zygote.decode_zygote_request(zygote.from_datagram(message))
        except WireError as error:  # say what was wrong; the judge's handle raises ForkServerError
            request = None
            reply = zygote.ZygoteReply(error=str(error))
        if isinstance(request, zygote.ForkSandbox):
            pid = os.fork()
            if pid == 0:
                _child(request, fds, sock, zygote_pid)
            reply = zygote.ZygoteReply(pid=pid)
        elif isinstance(request, zygote.StatusQuery):
            reply = zygote.ZygoteReply(pid=request.pid, returncode=statuses.get(request.pid))
        for fd in fds:  # the child has its copies; with anything but a fork, none are kept
            os.close(fd)
        sock.send(zygote.to_datagram(reply))


def _reap(statuses: dict[int, int]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        statuses[pid] = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main())

"""Entering the sandbox (in the child, as root, before any candidate code exists in the process): join the
cgroups, unshare the mount, PID, network, IPC and UTS namespaces, build the read-only view the trusted side
planned (isolation.plan_view), pivot into it, drop every capability and become the slot's uid. The
trusted side knows the keeper, the namespace's parent, which ends the way the sandbox ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import signal
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from evaluation.judge.untrusted.lifeline import die_with_parent

CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
LAST_CAPABILITY = 63
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}.get(platform.machine(), 155)

SANDBOX_WORKDIR = "/sandbox"  # the candidate's cwd and HOME, inside its view


class IsolationError(Exception):
    """The sandbox could not be contained; the message says what to change."""


@dataclass
class ViewPlan:
    """What a sandbox sees, planned on the trusted side and sent to the child as plain data."""

    read_only: list[str]  # host paths bound read-only at the same path
    symlinks: dict[str, str]  # path -> target (merged-/usr layouts: /bin -> usr/bin)
    devices: list[str]  # host device nodes bound at the same path
    sys: bool  # /sys read-only (GPU drivers read topology from it)
    uid: int
    gid: int
    limits: dict[str, int]
    cgroups: list[str]
    newroot: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise IsolationError(f"{what}: {os.strerror(code)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(
        _libc().mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {source} on {target}",
    )


def _make_mountpoint(path: str, like: str) -> None:
    if os.path.isdir(like):
        os.makedirs(path, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if not os.path.exists(path):
            open(path, "w").close()  # noqa: SIM115 - an empty file to bind a file or device over


def _bind(source: str, root: str, read_only: bool, device: bool = False) -> None:
    target = root + source
    _make_mountpoint(target, source)
    _mount(source, target, None, MS_BIND | MS_REC)
    flags = MS_BIND | MS_REMOUNT | MS_NOSUID | (MS_RDONLY if read_only else 0) | (0 if device else MS_NODEV)
    _mount("none", target, None, flags)


def _build_root(plan: ViewPlan) -> None:
    root = plan.newroot
    limits = plan.limits
    _mount("none", "/", None, MS_REC | MS_PRIVATE)  # nothing we mount propagates back to the host
    _mount("kgb-root", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0755")
    for path in plan.read_only:
        _bind(path, root, read_only=True)
    for path, target in plan.symlinks.items():
        os.symlink(target, root + path)
    os.makedirs(root + "/dev", exist_ok=True)
    _mount("kgb-dev", root + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755")
    for device in plan.devices:
        if os.path.exists(device):
            _bind(device, root, read_only=False, device=True)
    for name, target in (
        ("fd", "/proc/self/fd"),
        ("stdin", "/proc/self/fd/0"),
        ("stdout", "/proc/self/fd/1"),
        ("stderr", "/proc/self/fd/2"),
    ):
        os.symlink(target, f"{root}/dev/{name}")
    owner = f"uid={plan.uid},gid={plan.gid},mode=0700"
    for path, size in (
        ("/dev/shm", limits["shm_bytes"]),
        ("/tmp", limits["tmp_bytes"]),
        (SANDBOX_WORKDIR, limits["workdir_bytes"]),
    ):
        os.makedirs(root + path, exist_ok=True)
        _mount(
            "kgb-" + path.strip("/").replace("/", "-"),
            root + path,
            "tmpfs",
            MS_NOSUID | MS_NODEV,
            f"size={size},{owner}",
        )
    if plan.sys and os.path.isdir("/sys"):
        _bind("/sys", root, read_only=True)
    os.makedirs(root + "/proc", exist_ok=True)
    os.makedirs(root + "/etc", exist_ok=True)
    # getpwuid() (Python's getpass, some compilers) must find the sandbox user.
    with open(root + "/etc/passwd", "w") as handle:
        handle.write(
            f"root:x:0:0::/nonexistent:/usr/sbin/nologin\n"
            f"sandbox:x:{plan.uid}:{plan.gid}::{SANDBOX_WORKDIR}/home:/usr/sbin/nologin\n"
        )
    with open(root + "/etc/group", "w") as handle:
        handle.write(f"root:x:0:\nsandbox:x:{plan.gid}:\n")
    with open(root + "/etc/hosts", "w") as handle:
        handle.write("127.0.0.1 localhost\n")
    old = root + "/.old-root"
    os.makedirs(old, exist_ok=True)
    _check(_libc().syscall(SYS_PIVOT_ROOT, root.encode(), old.encode()), "pivot_root")
    os.chdir("/")
    _check(_libc().umount2(b"/.old-root", MNT_DETACH), "detach the host's root")
    os.rmdir("/.old-root")
    _mount("none", "/", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def _keep(child: int, close_fds: list[int]) -> None:
    """The keeper: the process the trusted side knows. It waits for the sandbox (PID 1 of its namespace)
    and exits as it did; killed, it takes the sandbox with it (PR_SET_PDEATHSIG)."""
    for fd in close_fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: os.kill(child, signal.SIGKILL))
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:
            os._exit(3)
        except InterruptedError:
            continue
    if os.WIFSIGNALED(status):  # end the same way, so the trusted side reads the signal itself
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
        os._exit(128 + os.WTERMSIG(status))
    os._exit(os.WEXITSTATUS(status))


def enter_sandbox(plan: ViewPlan, close_in_keeper: list[int]) -> None:
    """Become the contained sandbox (see the module's docstring). Called as root in a process that holds no
    candidate code; returns in the sandbox; the caller's original process never returns from here."""

    os.umask(0o022)  # the view's folders must be traversable by the slot uid, whatever the judge's umask
    for path in plan.cgroups:  # joined before the fork: the sandbox and all it starts are counted there
        Path(path, "cgroup.procs").write_text(str(os.getpid()))
    _check(
        _libc().unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS),
        "unshare (mount, PID, network, IPC and UTS namespaces)",
    )
    keeper = os.getpid()
    child = os.fork()
    if child:
        _keep(child, close_in_keeper)
    # PID 1 of the new namespace, still root in it: build the view, then drop to the slot's uid.
    _build_root(plan)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    with contextlib.suppress(OSError):
        _libc().sethostname(b"sandbox", 7)
    for capability in range(LAST_CAPABILITY + 1):  # none can come back, whatever it executes
        _libc().prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)
    os.setgroups([])
    os.setresgid(plan.gid, plan.gid, plan.gid)
    os.setresuid(plan.uid, plan.uid, plan.uid)  # from root to another uid: every capability is dropped
    _check(_libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(no_new_privs)")
    os.chdir(SANDBOX_WORKDIR)
    for folder in ("home", "triton-cache"):
        os.makedirs(f"{SANDBOX_WORKDIR}/{folder}", exist_ok=True)
    # The keeper is our parent in the outer namespace (getppid() reads 0 from inside this one).
    die_with_parent(None)
    if os.getppid() != 0 and os.getppid() != keeper:
        os._exit(75)

"""Containment of a sandbox by the operating system: one identity, one private view, one kill.

Both launchers use this module: the fork server's child (forkserver_main) and a freshly started sandbox
(sandbox_main) call ``enter_sandbox`` as root before any candidate code exists in the process. It leaves the
calling process waiting as a tiny *keeper* and returns in a new process that is:

- PID 1 of a new PID namespace (``/proc`` shows only the sandbox's own processes, and when PID 1 dies the
  kernel kills every process of the namespace, detached or not);
- in new mount, network, IPC and UTS namespaces, its root a fresh read-only tmpfs into which only what the
  judge needs is bound read-only at the same paths (Python and its packages, torch and triton, the
  ``evaluation`` package, ``/usr``, device nodes on GPU hosts): not the project's ``var/``, the database, the
  broker, home directories or other sandboxes. The writable places are size-capped tmpfs mounts private to
  this sandbox: the work dir ``/sandbox``, ``/tmp`` and ``/dev/shm``;
- running as its slot's own unprivileged uid (``SlotLease``: one uid per concurrent sandbox of the *host*,
  so two sandboxes never share an identity), with no capabilities and ``no_new_privs``;
- inside its own cgroup where the host offers one (caps on processes and memory, tmpfs pages included).

The trusted side (sandbox.Sandbox) plans the view (``plan_view``), leases a slot, creates the cgroup, and
afterwards kills and sweeps (``SlotLease.release``, ``sweep_host``). Nothing here reads the candidate's code.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import platform
import secrets
import signal
import stat
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]
JUDGE_PACKAGE = PROJECT_ROOT / "evaluation"

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
DEVICE_NODES = ("null", "zero", "full", "random", "urandom")
GPU_DEVICE_PREFIXES = ("nvidia", "kfd", "dri", "davinci", "musa", "mthreads")


class IsolationError(Exception):
    """The sandbox could not be contained; the message says what to change."""


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


@dataclass(frozen=True)
class ContainmentLimits:
    """Per-sandbox caps. Sizes of the private tmpfs mounts bound the bytes a sandbox can write in all."""

    workdir_bytes: int = _env_int("KGB_SANDBOX_WORKDIR_BYTES", 512 << 20)
    tmp_bytes: int = _env_int("KGB_SANDBOX_TMP_BYTES", 256 << 20)
    shm_bytes: int = _env_int("KGB_SANDBOX_SHM_BYTES", 64 << 20)
    processes: int = _env_int("KGB_SANDBOX_PROCESSES", 1024)  # threads count too (CUDA, torch, ptxas)
    memory_bytes: int = _env_int("KGB_SANDBOX_MEMORY_BYTES", 16 << 30)

    @property
    def written_bytes(self) -> int:
        return self.workdir_bytes + self.tmp_bytes + self.shm_bytes


# ---------------------------------------------------------------------------------------------------- host state


def state_dir() -> Path:
    """Host-wide folder of the slot locks (one per host, whatever the number of workers on it)."""
    configured = os.environ.get("KGB_SANDBOX_STATE_DIR")
    path = Path(configured) if configured else Path("/run/kgb-sandbox" if os.path.isdir("/run") else "/tmp/kgb-sandbox")
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    (path / "slots").mkdir(mode=0o700, exist_ok=True)
    (path / "newroot").mkdir(mode=0o700, exist_ok=True)
    return path


def slot_count() -> int:
    return max(1, _env_int("KGB_SANDBOX_SLOTS", 256))


def uid_base() -> int:
    """First uid of the sandbox range (uid = base + slot); chosen far above ordinary and system users."""
    return _env_int("KGB_SANDBOX_UID_BASE", 2_100_000)


@dataclass
class SlotLease:
    """One sandbox slot of this host, held by an ``flock`` on its file: a crashed holder frees it by dying.

    Taking a slot first kills whatever still runs under its uid (a sandbox of a worker that was killed before
    it could clean up); releasing it kills again, so nothing of a judgement outlives it."""

    slot: int
    uid: int
    fd: int
    released: bool = False

    @property
    def gid(self) -> int:
        return self.uid

    def release(self) -> None:
        if self.released:
            return
        self.released = True
        kill_uid(self.uid)
        with contextlib.suppress(OSError):
            os.close(self.fd)


def lease_slot(timeout_s: float = 60.0) -> SlotLease:
    """A free slot of this host (non-blocking tries over every slot from a random start, then waits)."""
    slots_dir = state_dir() / "slots"
    count = slot_count()
    deadline = time.monotonic() + timeout_s
    while True:
        start = secrets.randbelow(count)
        for step in range(count):
            slot = (start + step) % count
            fd = os.open(slots_dir / f"{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            uid = uid_base() + slot
            kill_uid(uid)
            return SlotLease(slot=slot, uid=uid, fd=fd)
        if time.monotonic() > deadline:
            raise IsolationError(f"all {count} sandbox slots of this host are busy (KGB_SANDBOX_SLOTS)")
        time.sleep(0.05)


def processes_of_uid(uid: int) -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{entry}").st_uid == uid:
                pids.append(int(entry))
    return pids


def kill_uid(uid: int, wait_s: float = 5.0) -> int:
    """SIGKILL every process of ``uid`` until none is left (a fork loop needs several rounds; a killed
    process stays listed until it is reaped); returns how many signals were sent. Only for sandbox uids:
    nothing else ever runs under them."""
    if uid < uid_base():
        raise ValueError(f"refusing to kill processes of uid {uid}: not a sandbox uid")
    killed = 0
    deadline = time.monotonic() + wait_s
    while True:
        pids = processes_of_uid(uid)
        if not pids or time.monotonic() > deadline:
            return killed
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                killed += 1
        time.sleep(0.005)


def sweep_host() -> dict[str, int]:
    """At worker start: kill processes of sandbox uids whose slot nobody holds, remove stale cgroups and the
    temp folders of sandboxes and zygotes whose judging process is gone. Returns what was cleaned."""
    cleaned = {"processes": 0, "cgroups": 0, "folders": 0}
    if os.geteuid() != 0:
        return cleaned
    slots_dir = state_dir() / "slots"
    for slot in range(slot_count()):
        path = slots_dir / f"{slot}.lock"
        if not path.exists():
            continue
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # held: a live sandbox
        else:
            cleaned["processes"] += kill_uid(uid_base() + slot)
            for directory in Cgroup.stale_dirs(slot):
                with contextlib.suppress(OSError):
                    directory.rmdir()
                    cleaned["cgroups"] += 1
        finally:
            os.close(fd)
    import shutil
    import tempfile

    for folder in Path(tempfile.gettempdir()).glob("kgb-*"):
        owner = folder / ".owner-pid"
        try:
            pid = int(owner.read_text())
        except (OSError, ValueError):
            continue
        if not Path(f"/proc/{pid}").exists():
            shutil.rmtree(folder, ignore_errors=True)
            cleaned["folders"] += 1
    return cleaned


# ---------------------------------------------------------------------------------------------------- cgroups


@dataclass
class Cgroup:
    """A cgroup per sandbox (v2, else the v1 ``pids`` and ``memory`` hierarchies), where this host lets us
    make one. ``paths``: the folders whose ``cgroup.procs`` the sandbox joins."""

    paths: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)

    ROOT = Path("/sys/fs/cgroup")

    @staticmethod
    def _own_path(controller: str) -> str:
        """This process's cgroup in ``controller``'s hierarchy ("" for v2), from /proc/self/cgroup."""
        with contextlib.suppress(OSError):
            for line in Path("/proc/self/cgroup").read_text().splitlines():
                _, controllers, path = line.split(":", 2)
                if controllers.split(",") == [controller] or (controller == "" and controllers == ""):
                    return path.lstrip("/")
        return ""

    @classmethod
    def _bases(cls) -> list[tuple[str, Path]]:
        """Where sandbox cgroups may go: below this process's own cgroup, else (a hierarchy that does not
        delegate it to us) below the hierarchy's root."""
        if (cls.ROOT / "cgroup.controllers").exists():
            return [("v2", cls.ROOT / cls._own_path(""))] + ([("v2", cls.ROOT)] if cls._own_path("") else [])
        bases = []
        for name in ("pids", "memory"):
            if (cls.ROOT / name / "cgroup.procs").exists():
                bases.append((name, cls.ROOT / name / cls._own_path(name)))
                if cls._own_path(name):
                    bases.append((name, cls.ROOT / name))
        return bases

    @classmethod
    def stale_dirs(cls, slot: int) -> list[Path]:
        found = []
        for _, base in cls._bases():
            found += sorted(base.glob(f"kgb-sandbox-{slot}-*"))
        return found

    @classmethod
    def create(cls, slot: int, limits: ContainmentLimits) -> Cgroup:
        group = cls()
        if os.geteuid() != 0:
            group.unavailable.append("cgroup (needs root)")
            return group
        name = f"kgb-sandbox-{slot}-{secrets.token_hex(4)}"
        made: set[str] = set()
        failures: dict[str, str] = {}
        for kind, base in cls._bases():
            if kind in made:
                continue  # already placed below this process's own cgroup
            directory = base / name
            try:
                directory.mkdir()
                if kind == "v2":
                    (directory / "pids.max").write_text(str(limits.processes))
                    (directory / "memory.max").write_text(str(limits.memory_bytes))
                    (directory / "memory.swap.max").exists() and (directory / "memory.swap.max").write_text("0")
                    group.applied.append(f"cgroup v2: pids.max {limits.processes}, memory.max {limits.memory_bytes}")
                elif kind == "pids":
                    (directory / "pids.max").write_text(str(limits.processes))
                    group.applied.append(f"cgroup v1 pids.max {limits.processes}")
                else:
                    (directory / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
                    group.applied.append(f"cgroup v1 memory.limit_in_bytes {limits.memory_bytes}")
                group.paths.append(str(directory))
                made.add(kind)
            except OSError as error:
                with contextlib.suppress(OSError):
                    directory.rmdir()
                failures[kind] = f"cgroup {kind} ({os.strerror(error.errno or errno.EPERM)})"
        group.unavailable += [why for kind, why in failures.items() if kind not in made]
        if not group.paths and not group.unavailable:
            group.unavailable.append("cgroup (none mounted)")
        return group

    def kill_and_remove(self) -> None:
        for path in self.paths:
            directory = Path(path)
            for _ in range(200):
                with contextlib.suppress(OSError):
                    kill_file = directory / "cgroup.kill"
                    if kill_file.exists():
                        kill_file.write_text("1")
                    for pid in (directory / "cgroup.procs").read_text().split():
                        with contextlib.suppress(ProcessLookupError, PermissionError):
                            os.kill(int(pid), signal.SIGKILL)
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)
        self.paths = []


# ---------------------------------------------------------------------------------------------------- the view


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


def _python_paths() -> list[str]:
    """Python's own tree, the virtual environment and every import path outside the project; the project
    itself contributes only the ``evaluation`` package (its settings, data and other apps stay outside)."""
    paths = {
        sys.base_prefix,
        sys.base_exec_prefix,
        sys.prefix,
        sys.exec_prefix,
        str(Path(sys.executable).parent),
        str(Path(os.path.realpath(sys.executable)).parent),
    }
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        real = os.path.realpath(entry)
        if real == str(PROJECT_ROOT) or (
            real.startswith(str(PROJECT_ROOT) + os.sep) and not real.startswith(os.path.realpath(sys.prefix))
        ):
            continue
        paths.add(entry)
    paths.add(str(JUDGE_PACKAGE))
    return sorted(path for path in paths if os.path.exists(path))


def _library_paths() -> list[str]:
    found = []
    for variable in ("LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "TRITON_LIBCUDA_PATH"):
        for entry in os.environ.get(variable, "").split(":"):
            if entry and os.path.isdir(entry):
                found.append(entry)
    ptxas = os.environ.get("TRITON_PTXAS_PATH")
    if ptxas and os.path.exists(ptxas):
        found.append(os.path.dirname(ptxas))
    return found


def _collapse(paths: list[str]) -> list[str]:
    """Drop paths already inside another listed path (one bind covers them)."""
    kept: list[str] = []
    for path in sorted({os.path.normpath(p) for p in paths}, key=len):
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return sorted(kept)


def readable_by_others(path: str) -> bool:
    """Whether an unprivileged uid can read ``path`` itself (its parents are replaced in the view)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & need == need


def check_readable(paths: list[str]) -> None:
    """Fail early, in words a person can act on, when the sandbox uid could not read the judge's code."""
    untrusted = JUDGE_PACKAGE / "judge" / "untrusted"
    probes = [
        JUDGE_PACKAGE,
        JUDGE_PACKAGE / "judge",
        untrusted,
        untrusted / "harness.py",
        Path(os.path.realpath(sys.executable)),
        Path(os.__file__),
    ]
    for path in [*map(str, probes), *paths]:
        if os.path.exists(path) and not readable_by_others(path):
            mode = stat.S_IMODE(os.stat(path).st_mode)
            raise IsolationError(
                f"the sandbox cannot start: its unprivileged user cannot read {path} (mode {mode:o}). The "
                f"judge's code, Python and its packages must be readable by other users; for example "
                f"`chmod -R o+rX {path}` (only the folders above them may stay private)."
            )


def plan_view(device_type: str, lease: SlotLease, cgroup: Cgroup, limits: ContainmentLimits) -> ViewPlan:
    read_only = list(_python_paths())
    read_only += [
        "/usr",
        "/etc/ld.so.cache",
        "/etc/ld.so.conf",
        "/etc/ld.so.conf.d",
        "/etc/alternatives",
        "/etc/localtime",
    ]
    symlinks = {}
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            symlinks[top] = os.readlink(top)
        elif os.path.isdir(top):
            read_only.append(top)
    devices = [f"/dev/{name}" for name in DEVICE_NODES]
    if device_type != "cpu":
        read_only += _library_paths()
        read_only += [path for path in ("/usr/local/nvidia", "/usr/local/cuda", "/opt/rocm") if os.path.isdir(path)]
        for name in sorted(os.listdir("/dev")):
            if name.startswith(GPU_DEVICE_PREFIXES):
                devices.append(f"/dev/{name}")
    read_only = _collapse([path for path in read_only if os.path.lexists(path)])
    check_readable([path for path in read_only if path.startswith(str(PROJECT_ROOT))])
    return ViewPlan(
        read_only=read_only,
        symlinks=symlinks,
        devices=devices,
        sys=device_type != "cpu",
        uid=lease.uid,
        gid=lease.gid,
        limits=asdict(limits),
        cgroups=list(cgroup.paths),
        newroot=str(state_dir() / "newroot"),
    )


# ---------------------------------------------------------------------------------------------------- entering


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
    from evaluation.judge.untrusted.lifeline import die_with_parent

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


def contained_environment() -> dict[str, str]:
    """Where the contained sandbox keeps its own files (inside its private tmpfs)."""
    return {"HOME": f"{SANDBOX_WORKDIR}/home", "TMPDIR": "/tmp", "TRITON_CACHE_DIR": f"{SANDBOX_WORKDIR}/triton-cache"}


def containment_available() -> str | None:
    """None when sandboxes can be contained here; otherwise why not, in words."""
    if os.geteuid() != 0:
        return "the judging process is not root (it needs root to give each sandbox its own uid and namespaces)"
    if not sys.platform.startswith("linux"):
        return "not Linux"
    return None

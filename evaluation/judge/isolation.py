"""Containment of a sandbox by the operating system: one identity, one private view, one kill.

This module is the trusted side's half: slots, the view's plan, the kill and the sweep (cgroups.py the
cgroups). The child's half is untrusted/confine.py: the fork server's child (forkserver_main) and a freshly
started sandbox (sandbox_main) call its ``enter_sandbox`` as root before any candidate code exists in the
process. It leaves the calling process waiting as a tiny *keeper* and returns in a new process that is:

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
import fcntl
import os
import secrets
import signal
import stat
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from evaluation.judge.cgroups import Cgroup, ContainmentLimits, env_int
from evaluation.judge.untrusted.confine import SANDBOX_WORKDIR, IsolationError, ViewPlan

PROJECT_ROOT = Path(__file__).resolve().parents[2]
JUDGE_PACKAGE = PROJECT_ROOT / "evaluation"

DEVICE_NODES = ("null", "zero", "full", "random", "urandom")
GPU_DEVICE_PREFIXES = ("nvidia", "kfd", "dri", "davinci", "musa", "mthreads")


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
    return max(1, env_int("KGB_SANDBOX_SLOTS", 256))


def uid_base() -> int:
    """First uid of the sandbox range (uid = base + slot); chosen far above ordinary and system users."""
    return env_int("KGB_SANDBOX_UID_BASE", 2_100_000)


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


def slot_in_use(uid: int) -> bool:
    """Whether a live sandbox of this host holds the slot of ``uid`` now (any judge process, any worker)."""
    path = state_dir() / "slots" / f"{uid - uid_base()}.lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops a lock taken here
    return False


def processes_of_uid(uid: int) -> list[int]:
    """Live processes of ``uid``. A zombie (dead, its last thread gone, waiting for its parent to collect
    it) holds nothing and runs nothing, so it is not counted: the zygote collects its children only when it
    next serves a request, and waiting for that cost every judgement over a second."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            if os.stat(f"/proc/{entry}").st_uid == uid and not _finished_zombie(entry):
                pids.append(int(entry))
    return pids


def _finished_zombie(pid: str) -> bool:
    with open(f"/proc/{pid}/stat") as handle:
        state = handle.read().rsplit(")", 1)[1].split()[0]
    # A zombie thread-group leader may still have live threads: those are a running process.
    return state == "Z" and len(os.listdir(f"/proc/{pid}/task")) <= 1


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


# ---------------------------------------------------------------------------------------------------- the view


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

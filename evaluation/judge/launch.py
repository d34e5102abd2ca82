"""How a sandbox process is started, shared by both launchers (sandbox.Sandbox's Popen and forkserver's
zygote): the allow-listed environment, the rlimits, and the weaker fallback prefix (``unshare -n``,
``setpriv`` to ``nobody``) where the operating-system containment of isolation.py is unavailable."""

from __future__ import annotations

import functools
import os
import pwd
import resource
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from evaluation.judge import isolation

PROJECT_ROOT = Path(__file__).resolve().parents[2]
ENV_ALLOW = (
    "PATH",
    "LANG",
    "LC_ALL",
    "CUDA_VISIBLE_DEVICES",
    "LD_LIBRARY_PATH",
    "CUDA_HOME",
    "CUDA_PATH",
    "NVIDIA_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "ASCEND_RT_VISIBLE_DEVICES",
    "MUSA_VISIBLE_DEVICES",
    "MACA_VISIBLE_DEVICES",
    "TRITON_PTXAS_PATH",
    "TRITON_LIBCUDA_PATH",
)


@dataclass(frozen=True)
class Limits:
    # RLIMIT_NPROC counts every thread of every process of a uid. Contained sandboxes each run as their own
    # slot uid, so this is a per-sandbox cap (beside the cgroup's pids.max where there is one); CUDA, torch
    # and Triton start threads of their own and ptxas runs as a child, so it cannot be small. In the
    # fallback (every sandbox as ``nobody``) it is shared by the host's sandboxes.
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
def netns_available() -> bool:
    if os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    try:
        return subprocess.run(["unshare", "-n", "true"], timeout=10, capture_output=True).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def nobody_ids() -> tuple[int, int] | None:
    try:
        entry = pwd.getpwnam("nobody")
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def preexec(limits: Limits, device_type: str) -> None:
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
    env.update(
        {
            "PYTHONPATH": str(PROJECT_ROOT),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "random",
            "PYTHONUNBUFFERED": "1",
        }
    )
    if device_type == "cpu":
        env.update({"TRITON_INTERPRET": "1", "OMP_NUM_THREADS": str(limits.cpu_threads)})
    else:
        env["OMP_NUM_THREADS"] = "2"  # the candidate's host work is small; threads count against nproc
    return env


def zygote_env(device_type: str) -> dict[str, str]:
    env = base_env(device_type)
    if isolation.containment_available() is None:
        return env  # a root zygote: each fork contains itself (untrusted.confine.enter_sandbox)
    if os.geteuid() == 0 and nobody_ids() is not None and not shutil.which("setpriv"):
        env["KGB_SANDBOX_SETUID"] = str(nobody_ids()[0])
    return env


def isolation_prefix(isolate: bool) -> list[str]:
    """How the zygote is started. Where sandboxes are contained, it stays root with nothing around it: it
    runs only our code and each fork builds its own namespaces and takes its slot's uid. Elsewhere the
    weaker fallback: ``unshare -n`` and ``setpriv`` (user nobody) where this process may use them."""
    if isolate and isolation.containment_available() is None:
        return []
    prefix: list[str] = ["unshare", "-n"] if isolate and netns_available() else []
    nobody = nobody_ids() if isolate and os.geteuid() == 0 else None
    if nobody is not None and shutil.which("setpriv"):
        prefix += ["setpriv", f"--reuid={nobody[0]}", f"--regid={nobody[1]}", "--clear-groups", "--"]
    return prefix

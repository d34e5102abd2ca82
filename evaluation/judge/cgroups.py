"""The cgroup of one sandbox slot (memory, pids, CPU weight where the host delegates them): created per
judgement, read for the evidence, removed after; stale ones swept at worker start."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path


def env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


@dataclass(frozen=True)
class ContainmentLimits:
    """Per-sandbox caps. Sizes of the private tmpfs mounts bound the bytes a sandbox can write in all."""

    workdir_bytes: int = env_int("KGB_SANDBOX_WORKDIR_BYTES", 512 << 20)
    tmp_bytes: int = env_int("KGB_SANDBOX_TMP_BYTES", 256 << 20)
    shm_bytes: int = env_int("KGB_SANDBOX_SHM_BYTES", 64 << 20)
    processes: int = env_int("KGB_SANDBOX_PROCESSES", 1024)  # threads count too (CUDA, torch, ptxas)
    memory_bytes: int = env_int("KGB_SANDBOX_MEMORY_BYTES", 16 << 30)

    @property
    def written_bytes(self) -> int:
        return self.workdir_bytes + self.tmp_bytes + self.shm_bytes


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

"""Sample the host's CPU use and the GPU's utilisation, SM clock and memory in use once a second, until killed or a
``--seconds`` limit: how busy a many-judge run keeps the machine (is it the CPUs or the GPU that set the pace?).

CPU use is also split by role, in cores: trusted judges (the pool's spawned processes), sandboxes (a slot uid
of the host's sandbox range, or user nobody forked from a zygote where containment is unavailable), the
compilers sandboxes ran (ptxas and the like: their children's time, counted
when reaped) and the rest. A process's last second before it exits is not seen.

    python3 scripts/gpu/sample_load.py OUT.csv [--seconds N] &      # ... then: --summary OUT.csv
"""

from __future__ import annotations

import argparse
import os
import pwd
import statistics
import subprocess
import sys
import time
from pathlib import Path

try:
    NOBODY = pwd.getpwnam("nobody").pw_uid
except KeyError:
    NOBODY = -1

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from evaluation.judge.isolation import slot_count, uid_base  # noqa: E402  (light: no torch)

# Contained sandboxes run as a slot uid each (isolation.SlotLease); without this range they read as "other",
# and a submission's sandboxes and their compilers went uncounted (2026-12-03: "sandbox 0, compilers 0").
SANDBOX_UIDS = range(uid_base(), uid_base() + slot_count())


def cpu_times() -> tuple[int, int]:
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def gpu_sample() -> tuple[str, str, str]:
    """Utilisation (%), SM clock (MHz) and device memory in use (MiB), as nvidia-smi reports them."""
    try:
        out = (
            subprocess.run(
                [
                    "nvidia-smi",
                    "--query-gpu=utilization.gpu,clocks.sm,memory.used,memory.total",
                    "--format=csv,noheader,nounits",
                ],
                capture_output=True,
                text=True,
                timeout=5,
            )
            .stdout.strip()
            .splitlines()[0]
        )
        utilisation, clock, used, _total = (part.strip() for part in out.split(","))
        return utilisation, clock, used
    except (OSError, IndexError, ValueError, subprocess.SubprocessError):
        return "", "", ""


ROLES = ("trusted", "sandbox", "compilers", "other")
TICKS = os.sysconf("SC_CLK_TCK")


def process_ticks() -> dict[int, tuple[str, int, int]]:
    """pid -> (role, own CPU ticks, reaped children's CPU ticks) for every process now alive."""
    found: dict[int, tuple[str, int, int]] = {}
    owners: dict[int, int] = {}  # pid -> uid
    parents: dict[int, int] = {}
    rows = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
            uid = entry.stat().st_uid
        except OSError:
            continue
        comm = stat[stat.index("(") + 1 : stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2 :].split()
        own, children = int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])
        pid = int(entry.name)
        owners[pid], parents[pid] = uid, int(fields[1])
        if comm != "ptxas":  # a compiler is counted through its parent's children's time when reaped
            rows.append((pid, uid, cmdline, own, children))
    for pid, uid, cmdline, own, children in rows:
        if uid in SANDBOX_UIDS:
            role = "sandbox"
        elif uid == NOBODY and owners.get(parents[pid]) == NOBODY:
            role = "sandbox"  # forked by a zygote that runs as nobody too
        elif uid == NOBODY:
            role = "other"  # the zygote: its children's time is whole dead sandboxes, not compilers
        elif b"spawn_main" in cmdline:
            role = "trusted"
        else:
            role = "other"
        found[pid] = (role, own, children)
    return found


def role_cores(
    before: dict[int, tuple[str, int, int]], after: dict[int, tuple[str, int, int]], seconds: float
) -> dict[str, float]:
    cores = dict.fromkeys(ROLES, 0.0)
    for pid, (role, own, children) in after.items():
        old = before.get(pid)
        own_before, children_before = (old[1], old[2]) if old else (own, children)  # new: from the next sample
        cores[role] += (own - own_before) / TICKS / seconds
        if role == "sandbox":
            cores["compilers"] += (children - children_before) / TICKS / seconds
    return cores


def sample(path: Path, seconds: float) -> None:
    started = time.monotonic()
    busy_before, total_before = cpu_times()
    ticks_before, at_before = process_ticks(), time.monotonic()
    with path.open("w") as out:
        out.write("seconds,cpu_busy,gpu_util,sm_mhz,gpu_mem_mib," + ",".join(f"cores_{role}" for role in ROLES) + "\n")
        while time.monotonic() - started < seconds:
            time.sleep(1.0)
            busy, total = cpu_times()
            share = (busy - busy_before) / max(1, total - total_before)
            busy_before, total_before = busy, total
            ticks, at = process_ticks(), time.monotonic()
            cores = role_cores(ticks_before, ticks, at - at_before)
            ticks_before, at_before = ticks, at
            utilisation, clock, used = gpu_sample()
            out.write(
                f"{time.monotonic() - started:.1f},{share:.3f},{utilisation},{clock},{used},"
                + ",".join(f"{cores[role]:.2f}" for role in ROLES)
                + "\n"
            )
            out.flush()


def summary(path: Path) -> str:
    lines = path.read_text().splitlines()
    header = lines[0].split(",") if lines else []
    rows = [line.split(",") for line in lines[1:] if line.count(",") == len(header) - 1]
    cpu = [float(row[1]) for row in rows]
    gpu = [float(row[2]) for row in rows if row[2]]
    memory_column = header.index("gpu_mem_mib") if "gpu_mem_mib" in header else None  # older CSVs lack it
    memory = [float(row[memory_column]) for row in rows if memory_column is not None and row[memory_column]]
    if not cpu:
        return "no samples"
    deciles = statistics.quantiles(cpu, n=10) if len(cpu) > 1 else cpu
    roles = [(name[len("cores_") :], index) for index, name in enumerate(header) if name.startswith("cores_")]
    return (
        f"{len(rows)} samples: CPU busy mean {100 * statistics.mean(cpu):.0f}% (median "
        f"{100 * statistics.median(cpu):.0f}%, 90th percentile {100 * deciles[-1]:.0f}%)"
        + (f", GPU utilisation mean {statistics.mean(gpu):.0f}% (median {statistics.median(gpu):.0f}%)" if gpu else "")
        + (
            f", device memory in use peak {max(memory) / 1024:.1f} GiB (median {statistics.median(memory) / 1024:.1f})"
            if memory
            else ""
        )
        + (
            "; core-seconds by role: "
            + ", ".join(f"{role} {sum(float(row[index]) for row in rows):.0f}" for role, index in roles)
            if roles
            else ""
        )
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", type=Path)
    parser.add_argument("--seconds", type=float, default=3600.0)
    parser.add_argument("--summary", action="store_true", help="print the summary of an existing CSV")
    args = parser.parse_args()
    if args.summary:
        print(summary(args.csv))
    else:
        sample(args.csv, args.seconds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

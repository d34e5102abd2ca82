"""Sample the host's CPU use and the GPU's utilisation and SM clock once a second, until killed or a
``--seconds`` limit: how busy a many-judge run keeps the machine (is it the CPUs or the GPU that set the pace?).

    python3 scripts/gpu/sample_load.py OUT.csv [--seconds N] &      # ... then: --summary OUT.csv
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import time
from pathlib import Path


def cpu_times() -> tuple[int, int]:
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


def gpu_sample() -> tuple[str, str]:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=utilization.gpu,clocks.sm", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=5).stdout.strip().splitlines()[0]
        utilisation, clock = (part.strip() for part in out.split(","))
        return utilisation, clock
    except (OSError, IndexError, ValueError, subprocess.SubprocessError):
        return "", ""


def sample(path: Path, seconds: float) -> None:
    started = time.monotonic()
    busy_before, total_before = cpu_times()
    with path.open("w") as out:
        out.write("seconds,cpu_busy,gpu_util,sm_mhz\n")
        while time.monotonic() - started < seconds:
            time.sleep(1.0)
            busy, total = cpu_times()
            share = (busy - busy_before) / max(1, total - total_before)
            busy_before, total_before = busy, total
            utilisation, clock = gpu_sample()
            out.write(f"{time.monotonic() - started:.1f},{share:.3f},{utilisation},{clock}\n")
            out.flush()


def summary(path: Path) -> str:
    rows = [line.split(",") for line in path.read_text().splitlines()[1:] if line.count(",") == 3]
    cpu = [float(row[1]) for row in rows]
    gpu = [float(row[2]) for row in rows if row[2]]
    if not cpu:
        return "no samples"
    deciles = statistics.quantiles(cpu, n=10) if len(cpu) > 1 else cpu
    return (f"{len(rows)} samples: CPU busy mean {100 * statistics.mean(cpu):.0f}% (median "
            f"{100 * statistics.median(cpu):.0f}%, 90th percentile {100 * deciles[-1]:.0f}%)"
            + (f", GPU utilisation mean {statistics.mean(gpu):.0f}% (median {statistics.median(gpu):.0f}%)"
               if gpu else ""))


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

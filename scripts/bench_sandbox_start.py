"""How long a sandbox takes to start, from ``Sandbox(...)`` to its ``ready`` message, N times in a row.

Run against any checkout of the judge (the import path decides which), so that the cost of containment is
measured before and after in the same session on the same host:

    PYTHONPATH=. python3 scripts/bench_sandbox_start.py --device cpu --count 20
    PYTHONPATH=/path/to/older/checkout python3 scripts/bench_sandbox_start.py --device cuda --count 20

Prints one line per launcher (``forkserver``: forked from the warm zygote, what a worker uses; ``popen``: a
fresh interpreter), with the median, minimum and maximum in milliseconds, and the containment the sandboxes
got. No Django.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


def measure(device: str, count: int, launcher: str) -> tuple[list[float], list[str]]:
    from evaluation.judge.sandbox import Sandbox

    server = None
    if launcher == "forkserver":
        from evaluation.judge.forkserver import shared_forkserver

        server = shared_forkserver(device)
        server.wait_ready(180)
    seconds, applied = [], []
    for _ in range(count):
        started = time.perf_counter()
        sandbox = Sandbox(device, forkserver=server)
        try:
            sandbox.wait_ready(time.monotonic() + 120)
            seconds.append(time.perf_counter() - started)
            applied = sandbox.protections.applied
        finally:
            sandbox.close()
    return seconds, applied


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--launchers", default="forkserver,popen")
    parser.add_argument("--label", default="")
    options = parser.parse_args()
    import evaluation.judge.sandbox as module

    print(f"judge at {module.__file__}")
    for launcher in options.launchers.split(","):
        count = options.count if launcher == "forkserver" else max(3, options.count // 4)
        seconds, applied = measure(options.device, count, launcher)
        ms = sorted(value * 1000 for value in seconds)
        print(
            f"{options.label}sandbox start {launcher}: median {statistics.median(ms):.1f} ms, min {ms[0]:.1f}, "
            f"max {ms[-1]:.1f} (n={len(ms)}, {options.device})"
        )
        print(f"  protections: {'; '.join(applied)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

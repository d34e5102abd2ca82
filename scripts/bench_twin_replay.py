"""What the twin replay costs: corpus files judged with it and without it, alternately, in one process.

    .venv/bin/python scripts/bench_twin_replay.py [--files N] [--rounds R] [--device cpu]

Judges the first N honest corpus files (smoke tier on the CPU interpreter; public tiers on a GPU with
``--device cuda``) R times each way, the two ways alternating file by file so that a load that comes and
goes hits both, and prints per file the median seconds each way and their ratio, then the ratio of the
totals. Every judgement must pass both ways (a twin replay that refuses an honest file is a defect, not a
cost). No Django: the judge and the catalog only.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts" / "gpu"))

from corpus_h200 import build_job, load_manifest  # noqa: E402

from evaluation.judge.runner import JudgeOptions, judge_with  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    arguments = parser.parse_args()
    chip, tiers = "cpu-interpreter", ("smoke",)
    if arguments.device != "cpu":
        from evaluation.judge.backends import detect_chip

        chip, tiers = detect_chip()[0], ("public", "held_out")
    entries = [entry for entry in load_manifest().values() if entry.kind == "honest"][: arguments.files]
    seconds: dict[str, dict[bool, list[float]]] = {entry.relative: {True: [], False: []} for entry in entries}
    for _ in range(arguments.rounds):
        for entry in entries:
            for twin in (True, False):
                job = build_job(entry, chip=chip, device_type=arguments.device, tiers=tiers)
                started = time.perf_counter()
                result = judge_with(job, JudgeOptions(static_scan=False, twin_replay=twin))
                seconds[entry.relative][twin].append(time.perf_counter() - started)
                if result.status != "passed":
                    print(f"{entry.relative}: {result.status} with twin_replay={twin}: {result.reason[:200]}")
                    return 1
    total = {True: 0.0, False: 0.0}
    print(f"{'file':60s} {'with':>8s} {'without':>8s} {'ratio':>6s}")
    for relative, runs in seconds.items():
        with_twin, without = statistics.median(runs[True]), statistics.median(runs[False])
        total[True] += with_twin
        total[False] += without
        print(f"{relative:60s} {with_twin:8.2f} {without:8.2f} {with_twin / without:6.2f}")
    ratio = total[True] / total[False]
    print(f"total: {total[True]:.1f} s with the twin replay, {total[False]:.1f} s without: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

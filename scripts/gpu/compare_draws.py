"""Two runs of the same submission compared over the kernels both judged (run_all.sh draw_compare).

    python3 scripts/gpu/compare_draws.py A.json.gz B.json.gz

Each file is judge_reference_kernels.py's JSON (``results``: file, seconds, finished_s, result). A kernel
judged twice in a run (the submission's repeats) is matched by its occurrence. Prints, for the kernels both
runs finished: their count, verdicts that differ, and per run the summed judge-seconds, stage seconds and
the stage breakdown's largest parts, with B's figure over A's; then how many kernels each run finished by
a few elapsed times. Ratios over the same kernels, not totals: runs cut off at the same cap finish
different kernels.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import json
from pathlib import Path

BREAKDOWN_KEYS = (
    "protocol_timing.input_sets",
    "timing.input_sets",
    "correctness.sandbox_round_trip",
    "device_lock.shared_wait",
    "device_lock.exclusive_wait",
    "timing.checks",
    "correctness.checks",
)


def load(path: str) -> dict[tuple[str, int], dict]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as handle:
        rows = json.load(handle)["results"]
    seen: collections.Counter[str] = collections.Counter()
    keyed = {}
    for row in rows:
        seen[row["file"]] += 1
        keyed[(row["file"], seen[row["file"]])] = row
    return keyed


def summed(rows: list[dict]) -> dict[str, float]:
    total: collections.Counter[str] = collections.Counter()
    for row in rows:
        result = row["result"]
        total["judge_seconds"] += row["seconds"]
        for name, seconds in (result.get("stage_seconds") or {}).items():
            total[f"stage:{name}"] += seconds
        breakdown = (result.get("environment") or {}).get("stage_breakdown") or {}
        for name in BREAKDOWN_KEYS:
            total[name] += breakdown.get(name, 0.0)
        drawn = (result.get("environment") or {}).get("timing_sets_drawn_by_sandbox") or {}
        total["sets drawn by the sandbox (count)"] += sum(drawn.values())
    return dict(total)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    options = parser.parse_args()
    a, b = load(options.a), load(options.b)
    common = sorted(set(a) & set(b))
    names = (Path(options.a).name.split("-")[0], Path(options.b).name.split("-")[0])
    print(f"kernels judged by both: {len(common)} ({names[0]} {len(a)}, {names[1]} {len(b)})")
    differ = [key for key in common if a[key]["result"]["status"] != b[key]["result"]["status"]]
    for key in differ:
        print(f"  verdicts differ: {key[0]}: {a[key]['result']['status']} / {b[key]['result']['status']}")
    sums = summed([a[key] for key in common]), summed([b[key] for key in common])
    print(f"{'summed over them':44s} {names[0]:>10s} {names[1]:>10s} {names[1] + '/' + names[0]:>10s}")
    for name in sorted(set(sums[0]) | set(sums[1])):
        x, y = sums[0].get(name, 0.0), sums[1].get(name, 0.0)
        ratio = f"{y / x:10.3f}" if x else f"{'-':>10s}"
        print(f"{name:44s} {x:10.1f} {y:10.1f} {ratio}")
    for at in (120, 180, 220, 240, 300, 360):
        counts = [sum(1 for row in run.values() if row.get("finished_s", 1e9) <= at) for run in (a, b)]
        print(f"finished by {at:3d} s: {names[0]} {counts[0]:3d}, {names[1]} {counts[1]:3d}")


if __name__ == "__main__":
    main()

"""The protocol speedup against do_bench, split by whether do_bench agreed with itself on a case.

    python3 scripts/gpu/agreement_split.py agree.json[.gz]

Reads ``judge_h200.py --sections protocol_dobench --dobench-twice``'s JSON (run_all.sh agree_quiet). Per
operator, the geometric mean over its cases of (the judge's protocol speedup / do_bench's) and of (do_bench's
second run / its first): over every case, and over the steady cases only, those where do_bench's two runs
agreed within 5 %. A launch-bound case's figure is the outcome of a race between the host's launch path and
the device's L2 flush; where do_bench's own two runs part, no timer can be expected to agree with it there.
Then, over the steady cases of every operator, how many the judge was within 10 % of.
"""

from __future__ import annotations

import gzip
import json
import math
import sys

STEADY = 0.05
WITHIN = 0.10


def geometric_mean(values: list[float]) -> float:
    return math.exp(sum(math.log(value) for value in values) / len(values)) if values else float("nan")


def split_by_steadiness(data: dict) -> tuple[list[dict], int, int]:
    """Per operator: its cases, the judge's and do_bench's second run's geometric ratios to do_bench over all
    of them and over the steady ones; then the steady cases' count and how many the judge was within
    WITHIN of."""
    rows, steady_total, steady_within = [], 0, 0
    for operator in data["protocol_dobench"]:
        cases = [c for c in operator["cases"] if c.get("do_bench") and c.get("judge") and c.get("do_bench_again")]
        steady = [c for c in cases if abs(c["do_bench_again"] / c["do_bench"] - 1) <= STEADY]
        steady_total += len(steady)
        steady_within += sum(abs(c["judge"] / c["do_bench"] - 1) <= WITHIN for c in steady)
        rows.append(
            {
                "operator": operator["operator"],
                "cases": len(cases),
                "judge": geometric_mean([c["judge"] / c["do_bench"] for c in cases]),
                "self": geometric_mean([c["do_bench_again"] / c["do_bench"] for c in cases]),
                "steady": len(steady),
                "steady_judge": geometric_mean([c["judge"] / c["do_bench"] for c in steady]),
                "steady_self": geometric_mean([c["do_bench_again"] / c["do_bench"] for c in steady]),
            }
        )
    return rows, steady_total, steady_within


def main() -> None:
    path = sys.argv[1]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as handle:
        data = json.load(handle)
    rows, steady_total, steady_within = split_by_steadiness(data)
    print(f"{'operator':<20}{'cases':>6}{'judge':>8}{'self':>8} | {'steady':>6}{'judge':>8}{'self':>8}")
    for row in rows:
        print(
            f"{row['operator']:<20}{row['cases']:>6}{row['judge']:>8.3f}{row['self']:>8.3f} | {row['steady']:>6}"
            f"{row['steady_judge']:>8.3f}{row['steady_self']:>8.3f}"
        )
    print(f"steady cases: {steady_total}; the judge within {WITHIN:.0%} of do_bench on {steady_within}")


if __name__ == "__main__":
    main()

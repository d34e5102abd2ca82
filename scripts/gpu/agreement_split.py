"""The protocol speedup against do_bench, split by whether do_bench agreed with itself on a case, and by
whether a case's kernels outlast the launch race.

    python3 scripts/gpu/agreement_split.py agree.json[.gz] [--flush-us 66]

Reads ``judge_h200.py --sections protocol_dobench --dobench-twice``'s JSON (run_all.sh agree_quiet). Per
operator, the geometric mean over its cases of (the judge's protocol speedup / do_bench's) and of (do_bench's
second run / its first): over every case, and over the steady cases only, those where do_bench's two runs
agreed within 5 %. A launch-bound case's figure is the outcome of a race between the host's launch path and
the device's L2 flush; where do_bench's own two runs part, no timer can be expected to agree with it there.
Then, over the steady cases of every operator, how many the judge was within 10 % of.

Steadiness within one process does not say a case is out of the race: which side of the race a process
reads is set by its host's speed at the time, so do_bench's two runs in one process can agree with each
other and not with the judge's sandbox (on the H200 a fresh process read the same scalar clone at 3.4 us or
at 30-70 us). The second split does: a case is *past the race* where every reading of it (both timers, both
sides) is at least one L2 flush long (``--flush-us``, do_bench's own 256 MB flush, 65-70 us on the H200).
Such a kernel keeps the device busy at least two flushes an iteration, longer than the host's whole iteration
(32-65 us there: flush launch, two events, the call), so the device runs ahead of the host in both loops and
each reading is the kernel alone; a shorter kernel's reading can be the race's outcome either way. Per
operator with such cases, the judge's protocol speedup over them against do_bench's, within 10 % or not.
"""

from __future__ import annotations

import gzip
import json
import math
import sys

STEADY = 0.05
WITHIN = 0.10
# do_bench's L2 flush on the H200 (launch_race_by_cpu.py measures it in each child: 64.8-70.4 us).
FLUSH_US = 66.0
READINGS = ("judge_reference_ms", "judge_candidate_ms", "do_bench_reference_ms", "do_bench_candidate_ms")


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


def past_the_race(data: dict, flush_us: float = FLUSH_US) -> tuple[list[dict], int, int]:
    """Per operator: its cases, those past the race (every reading at least ``flush_us``; the module's doc
    says why), the judge's protocol speedup over them against do_bench's (ratio of geometric means, as the
    protocol agreement compares operators) and whether that is within WITHIN. Then how many operators have
    such cases and how many of those agree."""
    rows, compared, agree = [], 0, 0
    for operator in data["protocol_dobench"]:
        cases = [c for c in operator["cases"] if c.get("do_bench") and c.get("judge")]
        past = [c for c in cases if all((c.get(key) or 0.0) * 1000 >= flush_us for key in READINGS)]
        ratio = None
        if past:
            ratio = geometric_mean([c["judge"] for c in past]) / geometric_mean([c["do_bench"] for c in past])
            compared += 1
            agree += abs(ratio - 1) <= WITHIN
        rows.append({"operator": operator["operator"], "cases": len(cases), "past": len(past), "ratio": ratio})
    return rows, compared, agree


def main() -> None:
    path = sys.argv[1]
    flush_us = float(sys.argv[sys.argv.index("--flush-us") + 1]) if "--flush-us" in sys.argv else FLUSH_US
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
    rows, compared, agree = past_the_race(data, flush_us)
    print(f"\npast the race (every reading >= {flush_us:g} us, one L2 flush): judge / do_bench over those cases")
    for row in rows:
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.3f}"
        print(f"{row['operator']:<20}{row['past']:>4} of {row['cases']:<4}{ratio:>8}")
    print(f"past the race: {agree} of {compared} operators with such cases within {WITHIN:.0%} of do_bench")


if __name__ == "__main__":
    main()

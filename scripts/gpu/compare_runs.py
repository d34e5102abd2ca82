"""Repeatability across whole reference-kernel runs: the same kernels judged by separate runs (separate
machines, other judges beside them), from the compact JSON files of docs/measurements.

    .venv/bin/python scripts/gpu/compare_runs.py docs/measurements/h200-2026-11-30{d,e,f,g,h,i}-reference-kernels.json

Per operator: the coefficient of variation (sample standard deviation over mean) of its speedup across the
runs where it passed, and of its speedup over only its cases >= 10 us. Per timed case: the same of the
case's speedup, over the cases whose kernels ran 10 us or longer on both sides in every run (the issue's
target: under 1 %). Operators the judge marked host-bound in any run (their timed calls wait on the host:
their speedups swing by design) are counted apart; pass ``--host-bound`` to name them when the files do
not say so.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from evaluation.judge.timing_stats import coefficient_of_variation, geometric_mean  # noqa: E402

# Seen host-bound (``host_bound_sides``) on the H200 in runs d-g: their reference (or, for cublasDgemv, the
# candidate) synchronises with the host inside the timed call.
HOST_BOUND = (
    "aten__masked_fill_.py",
    "vllm13__reshape_and_cache.py",
    "vllm13__reshape_and_cache_flash.py",
    "vllm13__merge_attn_states.py",
    "vllm13__concat_and_cache_mla.py",
    "cublas__cublasDgemv_v2.py",
)


def load(path: Path) -> dict[str, dict]:
    return {row["file"]: row for row in json.loads(path.read_text())}


def spreads(runs: list[dict[str, dict]], min_ms: float = 0.010) -> dict[str, Any]:
    """The CVs across ``runs`` (compact rows by kernel file) of the kernels that passed in every one of them:
    ``operators`` (file -> CV of its speedup), ``long_operators`` (file -> CV of its speedup over its
    cases >= ``min_ms`` on both sides in every run), ``cases`` ((file, case id, CV) of those cases)."""
    operator_cvs: dict[str, float] = {}
    long_operator_cvs: dict[str, float] = {}
    case_cvs: list[tuple[str, str, float]] = []
    for name in sorted(set.intersection(*(set(run) for run in runs))):
        rows = [run[name] for run in runs]
        if any(row["status"] != "passed" or not row.get("speedup") for row in rows):
            continue
        cv = coefficient_of_variation([row["speedup"] for row in rows])
        if cv is not None:
            operator_cvs[name] = cv
        by_case = [{case["case_id"]: case for case in row["timed_cases"]} for row in rows]
        long_ids = []
        for case_id in sorted(set.intersection(*(set(cases) for cases in by_case))):
            cases = [cases[case_id] for cases in by_case]
            if all(case["speedup"] and min(case["reference_ms"], case["candidate_ms"]) >= min_ms for case in cases):
                long_ids.append(case_id)
                case_cv = coefficient_of_variation([case["speedup"] for case in cases])
                if case_cv is not None:
                    case_cvs.append((name, case_id, case_cv))
        if long_ids:
            long_cv = coefficient_of_variation(
                [geometric_mean([cases[case_id]["speedup"] for case_id in long_ids]) for cases in by_case]
            )
            if long_cv is not None:
                long_operator_cvs[name] = long_cv
    return {"operators": operator_cvs, "long_operators": long_operator_cvs, "cases": case_cvs}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--host-bound", default=",".join(HOST_BOUND), help="comma-separated kernel files")
    parser.add_argument("--min-ms", type=float, default=0.010, help="shortest kernel time of a counted case")
    args = parser.parse_args()
    runs = [load(path) for path in args.runs]
    host_bound = set(filter(None, args.host_bound.split(",")))
    files = sorted(set.intersection(*(set(run) for run in runs)))
    found = spreads(runs, args.min_ms)
    operator_cvs, long_operator_cvs, case_cvs = found["operators"], found["long_operators"], found["cases"]

    def summary(values: list[float]) -> str:
        if not values:
            return "none"
        return (
            f"{len(values)}: median {statistics.median(values):.2%}, under 1 % {sum(v < 0.01 for v in values)}, "
            f"under 2 % {sum(v < 0.02 for v in values)}, max {max(values):.2%}"
        )

    print(f"{len(runs)} runs, {len(files)} kernels in all of them, {len(operator_cvs)} passed in every run")
    steady = [cv for name, cv in operator_cvs.items() if name not in host_bound]
    print(f"per-operator speedup CV, all operators      {summary(list(operator_cvs.values()))}")
    print(f"per-operator speedup CV, host-bound excluded {summary(steady)}")
    steady_long = [cv for name, cv in long_operator_cvs.items() if name not in host_bound]
    print(
        f"per-operator speedup CV over its cases >= {args.min_ms * 1000:g} us, host-bound excluded "
        f"{summary(steady_long)}"
    )
    steady_cases = [cv for name, _, cv in case_cvs if name not in host_bound]
    print(f"per-case speedup CV (>= {args.min_ms * 1000:g} us both sides, host-bound excluded) {summary(steady_cases)}")
    print(
        "over 1 % on cases >= 10 us: "
        + (
            ", ".join(
                f"{name.removesuffix('.py')} {cv:.2%}"
                for cv, name in sorted(
                    ((cv, name) for name, cv in long_operator_cvs.items() if name not in host_bound and cv >= 0.01),
                    reverse=True,
                )
            )
            or "none"
        )
    )
    worst = sorted(((cv, name) for name, cv in operator_cvs.items() if name not in host_bound), reverse=True)[:8]
    print(
        "largest per-operator CVs (host-bound excluded): "
        + ", ".join(f"{name.removesuffix('.py')} {cv:.2%}" for cv, name in worst)
    )
    print(
        "host-bound: "
        + ", ".join(
            f"{name.removesuffix('.py')} {operator_cvs[name]:.1%}"
            for name in sorted(host_bound)
            if name in operator_cvs
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

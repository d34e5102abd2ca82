"""Judge every reference kernel in evaluation/catalog/reference_kernels with the production judge.

On an H200: ``PYTHONPATH=. python3 scripts/gpu/judge_reference_kernels.py`` judges the public and held-out
tiers with timing and prints one line per kernel (verdict, cases, speedup and its 95% interval, what it was
timed against, seconds), then totals; with ``$OUT`` set it writes the full results as JSON there.
Here (no GPU): ``--device cpu`` judges the smoke tier on the Triton interpreter, without timing.
No Django: only the judge, torch and triton are needed, so it runs on a bare accelerator host.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evaluation.judge import JudgeJob, judge  # noqa: E402
from evaluation.judge.backends import detect_chip  # noqa: E402

KERNEL_DIR = ROOT / "evaluation" / "catalog" / "reference_kernels"


def operator_id_of(path: Path) -> str:
    namespace, name = path.stem.split("__", 1)
    return f"{namespace}::{name}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--only", default="", help="comma-separated substrings of file names to judge")
    parser.add_argument("--budget", type=float, default=300.0, help="per-kernel wall-clock budget, seconds")
    args = parser.parse_args()

    if args.device == "cpu":
        chip, device_type, tiers, timing = "cpu-interpreter", "cpu", ("smoke",), False
    else:
        chip, device_type = detect_chip()
        tiers, timing = ("public", "held_out"), True
    paths = sorted(KERNEL_DIR.glob("*__*.py"))
    if args.only:
        wanted = args.only.split(",")
        paths = [p for p in paths if any(w in p.name for w in wanted)]

    results = []
    started = time.monotonic()
    print(f"chip {chip}: judging {len(paths)} reference kernels, tiers {tiers}, timing {timing}", flush=True)
    for path in paths:
        job = JudgeJob(operator_id=operator_id_of(path), source_code=path.read_text(), chip_slug=chip,
                       device_type=device_type, tiers=tiers, measure_timing=timing, time_budget_s=args.budget,
                       run_id=path.stem)
        t0 = time.monotonic()
        result = judge(job)
        seconds = time.monotonic() - t0
        ci = result.speedup_ci95
        baseline = result.environment.get("timing_baseline") or result.environment.get("baseline", "")
        print(f"{path.stem:45s} {result.status:18s} {result.cases_passed:4d}/{result.cases_total:<4d} "
              f"speedup {result.speedup if result.speedup is None else round(result.speedup, 3)!s:>7} "
              f"ci {'-' if not ci else f'{ci[0]:.3f}-{ci[1]:.3f}':>13} {seconds:6.1f}s {baseline}"
              + ("" if result.status == "passed" else f"  | {result.reason[:160]!r}"), flush=True)
        results.append({"file": path.name, "operator_id": job.operator_id, "seconds": seconds,
                        "result": result.to_json()})
    total = time.monotonic() - started
    passed = sum(1 for r in results if r["result"]["status"] == "passed")
    print(f"TOTAL {passed}/{len(results)} passed in {total:.1f} s", flush=True)
    out = os.environ.get("OUT")
    if out:
        (Path(out) / f"reference_kernels_{chip}.json").write_text(json.dumps(
            {"chip": chip, "tiers": tiers, "total_seconds": total, "results": results}, indent=1, default=str))
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Where does a judgement's time go? cProfile of the trusted side of the judge on a few operators.

    PYTHONPATH=. python3 scripts/gpu/profile_judge.py [--ops aten::cos,aten::sum,aten::bmm] [--no-timing]

Judges each operator's reference kernel (public + held_out tiers on a GPU, smoke on the CPU), prints the
judge's own stage breakdown per operator, then the functions with the most cumulative and own time over all
of them. The sandbox side is not profiled (it is another process); its share shows up as time spent waiting
in ``wire`` reads. With ``$OUT`` set, the full profile is written there as ``profile_judge.txt``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evaluation.judge import JudgeJob  # noqa: E402
from evaluation.judge.backends import detect_chip, peaks_for  # noqa: E402
from evaluation.judge.runner import JudgeOptions, judge_with  # noqa: E402

KERNEL_DIR = ROOT / "evaluation" / "catalog" / "reference_kernels"


def kernel_path(operator_id: str) -> Path:
    namespace, name = operator_id.split("::", 1)
    return KERNEL_DIR / f"{namespace}__{name}.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default="aten::cos,aten::sum,aten::bmm")
    parser.add_argument("--no-timing", action="store_true")
    parser.add_argument("--top", type=int, default=35)
    args = parser.parse_args()
    chip, device_type = detect_chip()
    tiers = ("smoke",) if device_type == "cpu" else ("public", "held_out")
    timing = device_type != "cpu" and not args.no_timing
    bandwidth, flops = peaks_for(chip)
    profiler = cProfile.Profile()
    print(f"chip {chip}, tiers {tiers}, timing {timing}", flush=True)
    for operator_id in args.ops.split(","):
        job = JudgeJob(
            operator_id=operator_id,
            source_code=kernel_path(operator_id).read_text(),
            chip_slug=chip,
            device_type=device_type,
            tiers=tiers,
            measure_timing=timing,
            time_budget_s=600,
            peak_bandwidth_bytes_per_s=bandwidth,
            peak_flops_by_dtype=flops,
        )
        started = time.monotonic()
        profiler.enable()
        result = judge_with(job, JudgeOptions())
        profiler.disable()
        timed = sum(1 for case in result.case_results if case.timed)
        print(
            f"{operator_id:24s} {result.status:18s} {result.cases_passed}/{result.cases_total} cases, {timed} timed, "
            f"{time.monotonic() - started:6.1f}s  stages {result.stage_seconds}  speedup {result.speedup}",
            flush=True,
        )
        print(
            "    breakdown",
            result.environment.get("stage_breakdown"),
            "compilations",
            result.environment.get("triton_compilations"),
            flush=True,
        )
        if result.status != "passed":
            print("   ", result.reason[:300])
    for key in ("cumulative", "tottime"):
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats(key).print_stats(args.top)
        text = stream.getvalue()
        print(text[text.find("ncalls") :], flush=True)
        if os.environ.get("OUT"):
            with open(Path(os.environ["OUT"]) / "profile_judge.txt", "a") as handle:
                handle.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

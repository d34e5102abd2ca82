"""Judge N kernels and report per-stage wall times: fork-server sandboxes against the naive baseline.

    PYTHONPATH=. python scripts/bench_judge.py [--n 20] [--operator aten::cos] [--launchers forkserver,popen]
                                              [--kernels FILE ...] [--json OUT.json]

Stages (JudgeResult.stage_seconds): process_start (sandbox ready; includes the zygote's own start for the
first fork-server job), compile (candidate import), correctness, timing (GPU only). "popen" starts a fresh
interpreter per kernel (torch import every time): the naive one-process-per-kernel baseline, measured in
the same run. Kernels default to the good fixtures, cycled to N.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.judge.backends import detect_chip, peaks_for  # noqa: E402
from evaluation.judge.job import JudgeJob, JudgeResult  # noqa: E402
from evaluation.judge.runner import JudgeOptions, judge, judge_with  # noqa: E402

STAGES = ("process_start", "compile", "correctness", "timing")


def warm_sandboxes(device_type: str) -> None:
    """Pool initializer: start this process's fork-server zygote now, as a worker does when its pool child
    starts (evaluation.apps), so the measured batch is the steady state a running worker sees."""
    from evaluation.judge.forkserver import warm_forkserver

    warm_forkserver(device_type)  # waits until the zygote has imported torch and triton


def jobs_fitting(requested: int, total: int | None) -> int:
    """``requested`` judgements at once, or as many as a device of ``total`` bytes holds (``detect_device``'s
    third figure; what a worker does: evaluation.judge.context.judges_for_device), saying so when fewer."""
    from evaluation.judge.context import judges_for_device

    fitting = judges_for_device(requested, total)
    if fitting < requested:
        print(f"{requested} judges at once asked for; {fitting} fit the device's {total / 1024**3:.0f} GiB", flush=True)
    return fitting


def judge_pool(jobs: int, device_type: str):
    """``jobs`` spawned judging processes, each with its fork-server zygote started (``warm_sandboxes``): a
    worker's pool with that concurrency. Submitted functions must live at module level (pickled by name)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(
        jobs, mp_context=multiprocessing.get_context("spawn"), initializer=warm_sandboxes, initargs=(device_type,)
    )


def timed_judge(job: JudgeJob) -> tuple[JudgeResult, float]:
    """The production judge on ``job`` and its wall seconds (top level: it runs in ``judge_pool`` processes).
    Through ``runner.judge``, as a worker calls it: the switches a worker reads from its environment
    (``KGB_STATIC_SCAN=off``, ``KGB_PROTOCOL_TIMING=off``) apply here too, inherited by the pool's processes."""
    started = time.perf_counter()
    return judge(job), time.perf_counter() - started


def _judge_one(job: JudgeJob, launcher: str) -> tuple[JudgeJob, dict, float]:
    started = time.perf_counter()
    result = judge_with(job, JudgeOptions(launcher=launcher))
    return (
        job,
        {
            "status": result.status,
            "stages": result.stage_seconds,
            "speedup": result.speedup,
            "breakdown": result.environment.get("stage_breakdown", {}),
            "triton_compilations": result.environment.get("triton_compilations", 0),
            "reason": result.reason[:300],
        },
        time.perf_counter() - started,
    )


def run_batch(
    sources: list[str],
    operator_id: str | list[str],
    launcher: str,
    chip: str,
    device: str,
    jobs: int = 1,
    tiers: tuple[str, ...] | None = None,
) -> dict:
    """Judge ``sources`` (``operator_id``: one id for all or one per source), ``jobs`` at a time.

    ``jobs`` > 1 runs judges in that many warm processes at once (as a worker with that concurrency does):
    correctness overlaps, timing takes the GPU alone (evaluation.judge.device_lock). The pool's start-up
    (zygotes importing torch) is reported apart as ``pool_start_s`` and not counted in ``total_s``."""
    on_gpu = device != "cpu"
    bandwidth, flops = peaks_for(chip)
    operators = [operator_id] * len(sources) if isinstance(operator_id, str) else list(operator_id)
    tiers = tiers or (("public",) if on_gpu else ("smoke",))
    batch = [
        JudgeJob(
            operator_id=operator,
            source_code=source,
            chip_slug=chip,
            device_type=device,
            tiers=tiers,
            measure_timing=on_gpu,
            time_budget_s=600,
            peak_bandwidth_bytes_per_s=bandwidth,
            peak_flops_by_dtype=flops,
            judges_sharing_device=jobs,
        )
        for source, operator in zip(sources, operators, strict=True)
    ]
    rows = []
    pool_start = 0.0
    if jobs > 1:
        from concurrent.futures import wait

        pool_started = time.perf_counter()
        pool = judge_pool(jobs, device)
        wait([pool.submit(time.sleep, 0.5) for _ in range(jobs)])  # every process up (initializer done)
        pool_start = time.perf_counter() - pool_started
        started = time.perf_counter()
        outcomes = list(pool.map(_judge_one, batch, [launcher] * len(batch)))
        total = time.perf_counter() - started
        pool.shutdown()
    else:
        started = time.perf_counter()
        outcomes = [_judge_one(job, launcher) for job in batch]
        total = time.perf_counter() - started
    for job, outcome, wall in outcomes:
        rows.append(dict(outcome, operator=job.operator_id, wall_s=wall))
    summary = {
        "launcher": launcher,
        "jobs": jobs,
        "kernels": len(sources),
        "total_s": total,
        "per_kernel_s": total / len(sources),
        "pool_start_s": pool_start,
        "statuses": {
            status: sum(1 for row in rows if row["status"] == status)
            for status in sorted({row["status"] for row in rows})
        },
    }
    for stage in (*STAGES, "device_wait"):
        values = [row["stages"][stage] for row in rows if stage in row["stages"]]
        if values:
            summary[f"{stage}_total_s"] = sum(values)
            summary[f"{stage}_median_s"] = statistics.median(values)
    breakdown: dict[str, float] = {}
    for row in rows:
        for stage, seconds in row["breakdown"].items():
            breakdown[stage] = breakdown.get(stage, 0.0) + seconds
    summary["breakdown_total_s"] = dict(sorted(breakdown.items()))
    summary["triton_compilations"] = sum(row["triton_compilations"] for row in rows)
    summary["rows"] = rows
    return summary


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--operator", default="aten::cos")
    parser.add_argument("--launchers", default="forkserver,popen")
    parser.add_argument("--jobs", type=int, default=1, help="judges at once for the fork-server batch")
    parser.add_argument("--kernels", nargs="*", default=None)
    parser.add_argument("--chip", default=None)
    parser.add_argument("--json", default=None)
    options = parser.parse_args()
    chip, device = detect_chip()
    if options.chip:
        chip = options.chip
        device = "cpu" if chip == "cpu-interpreter" else device
    files = (
        [Path(path) for path in options.kernels]
        if options.kernels
        else [
            path
            for path in sorted((ROOT / "tests/evaluation/kernels/good").glob("*.py"))
            if "\ndef cos(" in path.read_text()
        ]
    )  # the aten::cos fixtures (cos_inplace.py is for a test record)
    sources = [files[index % len(files)].read_text() for index in range(options.n)]
    results = [
        run_batch(
            sources, options.operator, launcher, chip, device, jobs=options.jobs if launcher == "forkserver" else 1
        )
        for launcher in options.launchers.split(",")
    ]
    header = (
        f"{'launcher':<11}{'kernels':>8}{'total s':>10}{'s/kernel':>10}"
        + "".join(f"{stage + ' s':>17}" for stage in STAGES)
        + "  statuses"
    )
    print(f"chip {chip} ({device}), operator {options.operator}")
    print(header)
    for summary in results:
        print(
            f"{summary['launcher']:<11}{summary['kernels']:>8}{summary['total_s']:>10.2f}"
            f"{summary['per_kernel_s']:>10.2f}"
            + "".join(f"{summary.get(stage + '_total_s', float('nan')):>17.2f}" for stage in STAGES)
            + f"  {summary['statuses']}"
        )
    for summary in results:
        print(
            f"{summary['launcher']} breakdown (s, summed over kernels; sandbox.* as the sandbox reports it; "
            f"{summary['triton_compilations']} Triton compilations): "
            + ", ".join(f"{stage} {seconds:.2f}" for stage, seconds in summary["breakdown_total_s"].items())
        )
    if len(results) == 2:
        print(
            f"speed-up of {results[0]['launcher']} over {results[1]['launcher']}: "
            f"{results[1]['total_s'] / results[0]['total_s']:.2f}x"
        )
    if options.json:
        Path(options.json).write_text(json.dumps({"chip": chip, "device": device, "batches": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

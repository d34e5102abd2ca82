"""The device-time stage (GPU only): a few large cases, device time alone, the kernel audited while timed.

For each timed case that passed, the trusted side builds rotating input sets (candidate and reference get
different ones), asks the sandbox to time them (untrusted.timing) and checks each report
(timed_requests.py). Spot-checked iterations are compared against the reference here. Then per-case
medians, spread and speedup, a bootstrap interval of the geometric mean, the roofline flag, GPU clocks
before/after. Once every timing stage has run, ``recheck_after_timing`` checks one fresh input again.
The protocol's speedup (every timed case, caller latency) is timing_protocol.py's.
"""

from __future__ import annotations

import random
import time
from typing import Any

from evaluation.judge.backends import gpu_state
from evaluation.judge.context import JudgementContext
from evaluation.judge.correctness import check_case
from evaluation.judge.timed_requests import roofline_floor_of, time_cases, timed_grid
from evaluation.judge.timing_spots import fetch_and_check_spots
from evaluation.judge.timing_stats import (
    bootstrap_speedup_ci,
    geometric_mean,
    host_bound_sides,
    median_iqr,
    select_timed_cases,
)
from evaluation.judge.untrusted.timing import relative_standard_error_of_median
from evaluation.judge.verdicts import derive_seed


def run_timing(judgement: JudgementContext) -> None:
    options = judgement.options.timing
    samples: list[tuple[list[float], list[float]]] = []
    speedups: list[float] = []
    results_by_id = {result.case_id: result for result in judgement.case_results}
    timed = device_timed_cases(judgement)
    timed_against: set[str] = set()
    started = time.perf_counter()
    judgement.environment["gpu_before"] = gpu_state(judgement.job.device_type)
    judgement.add_stage("timing.gpu_state", time.perf_counter() - started)
    # Sets drawn and shipped first, the timed loops back to back under one exclusive hold, then the reports
    # checked (timed_requests.time_cases); the spot checks after that hold the GPU shared.
    reports = time_cases(judgement, timed, options)
    for item in reports:
        case, reply, host_ms = item.case, item.reply, item.host_ms
        candidate_ms, reference_ms = list(reply.candidate_ms), list(reply.reference_ms)
        candidate_tail, reference_tail = item.candidate_tail_ms, item.reference_tail_ms
        event_total = sum(candidate_ms) + sum(reference_ms)
        reference_kind = reply.reference_kind
        timed_against.add(reference_kind)
        reference_median, reference_iqr = median_iqr(reference_ms)
        candidate_median, candidate_iqr = median_iqr(candidate_ms)
        speedup = reference_median / candidate_median if candidate_median > 0 else float("inf")
        floor = roofline_floor_of(judgement, item)
        result = results_by_id.get(case.case_id)
        if result is not None:
            result.timed = True
            result.reference_ms, result.candidate_ms, result.speedup = reference_median, candidate_median, speedup
            result.spread = {
                "candidate_iqr_ms": candidate_iqr,
                "reference_iqr_ms": reference_iqr,
                "candidate_rse": relative_standard_error_of_median(candidate_ms),
                "reference_rse": relative_standard_error_of_median(reference_ms),
                "iterations": len(candidate_ms),
                "host_ms": host_ms,
                "event_ms": event_total,
                "stop_reason": reply.stop_reason,
                "candidate_tail_ms": candidate_tail,
                "reference_tail_ms": reference_tail,
                "reference_kind": reference_kind,
                "timed_against": reference_kind,
                "holds": reply.holds,
                "value_rotation": reply.value_rotation,
                # The probe call's kernels alone, without its host time (untrusted.timing.kernel_time_probe);
                # kept below only where the probe call's spot check passed.
                "kernel_device_ms": reply.kernel_ms,
                "probe_note": reply.probe_note,
            }
            bound = host_bound_sides(result.spread["holds"], len(candidate_ms))
            if bound:
                result.spread["host_bound_sides"] = bound
                for side in bound:
                    judgement.environment.setdefault("timing_host_bound", {}).setdefault(side, []).append(case.case_id)
            result.roofline_floor_ms = floor
            result.below_roofline = floor is not None and candidate_median < floor
        if floor is not None and candidate_median < floor:
            judgement.flagged = True
            continue  # flagged cases are not ranked
        samples.append((reference_ms, candidate_ms))
        speedups.append(speedup)
    probed: set[str] = set()
    if options.spot_checks > 0 and reports:
        checks_started = time.perf_counter()
        probed = fetch_and_check_spots(
            judgement, [(item.tier, item.case, item.sent_bytes, item.sets) for item in reports]
        )
        judgement.add_stage("timing.checks", time.perf_counter() - checks_started)
    for item in reports:
        # A probe figure whose call was not checked against the reference is the sandbox's word alone: a
        # kernel that launched a no-op when probed would lower the floor on its unwatched calls with it.
        result = results_by_id.get(item.case.case_id)
        if result is not None and result.spread is not None and item.case.case_id not in probed:
            if result.spread["kernel_device_ms"] is not None and result.spread["probe_note"] == "spot-checked":
                result.spread["probe_note"] = "its spot check did not come back"
            result.spread["kernel_device_ms"] = None
    state_started = time.perf_counter()
    judgement.environment["gpu_after"] = gpu_state(judgement.job.device_type)
    judgement.add_stage("timing.gpu_state", time.perf_counter() - state_started)
    # Exactly what the candidate was timed against: the record's baseline_name, or "reference" when
    # spec.baseline is missing or returned None here and the reference itself was timed.
    judgement.environment["timing_baseline"] = ", ".join(sorted(timed_against)) if timed_against else ""
    judgement.speedup = geometric_mean(speedups)
    judgement.speedup_ci95 = bootstrap_speedup_ci(samples, random.Random(derive_seed(judgement.secret, "bootstrap")))
    judgement.check("timing_crosscheck", "passed", "event totals within host-measured time on every case")
    judgement.check(
        "roofline",
        "failed" if judgement.flagged else "passed",
        "some case beat the roofline floor: flagged, not ranked" if judgement.flagged else "",
    )
    judgement.check("timing", "passed", f"{len(speedups)} timed case(s)")


def device_timed_cases(judgement: JudgementContext) -> list[tuple[str, Any]]:
    """The cases the device-time stage times: the same few large ones on every run (select_timed_cases)."""
    return select_timed_cases(timed_grid(judgement), judgement.case_bytes, judgement.options.timing.max_timed_cases)


def recheck_after_timing(judgement: JudgementContext) -> None:
    """Behaviour after timing must match behaviour before it (EXPLOITS 7, 8): one fresh input, full checks,
    once every timing stage has called the kernel."""
    timed = device_timed_cases(judgement)
    if not timed:
        return
    tier, case = timed[0]
    recheck_started = time.perf_counter()
    check_case(judgement, tier, case, derive_seed(judgement.secret, "after-timing", case.case_id), record=False)
    judgement.add_stage("timing.recheck", time.perf_counter() - recheck_started)
    judgement.check("post_timing_recheck", "passed", case.case_id)

"""The protocol stage (GPU only): the benchmark's own speedup, PROTOCOL.md section 6.

The original harness times every ATen case, and the larger vLLM and cuBLAS cases (what the catalog marks
``timed``), each source with its own timer (context.ORIGINAL_TIMERS): ATen with ``triton.testing.do_bench``,
L2 flushed, then the call between two events, the median; vLLM with the same loop, the mean; cuBLAS with
100 calls back to back between two events, no flush, the mean. Each is the latency a caller sees, the host's
launch cost included where the device work does not cover it. This stage measures it over the same cases
with the same loops (untrusted/timing_do_bench.py, untrusted/timing_back_to_back.py: no wait between calls,
no stream hold, no audit inside the call), their call counts sized on a budget of milliseconds, and reports
the geometric mean of the per-case speedups as ``protocol_speedup``; the device-time stage
(timing_trusted.py) keeps its own speedup beside it, labelled, and the two are never mixed.

A kernel is judged by what it does, and it cannot do less here than it did while audited: a caller's window
holds the call's device work and more, so a candidate whose caller latency is well under its audited device
time on the same case ran other code when it could tell it was not audited (timing_crosscheck). And what it
returns is still checked: one call on each of a few random cases of the grid comes back as a spot and is
compared with the reference (timing_spots), so a kernel that does part of the work unwatched is refused.
"""

from __future__ import annotations

import dataclasses
import random
import time

from evaluation.judge.context import JudgementContext, TimingOptions, protocol_timer
from evaluation.judge.job import CaseResult
from evaluation.judge.timed_requests import (
    TimedCase,
    crosscheck_failure,
    roofline_floor_of,
    ship_ahead,
    time_cases,
    timed_grid,
)
from evaluation.judge.timing_spots import fetch_and_check_spots
from evaluation.judge.timing_stats import STATISTICS, bootstrap_speedup_ci, geometric_mean
from evaluation.judge.untrusted.timing import relative_standard_error_of_median
from evaluation.judge.verdicts import derive_seed

# A candidate's caller latency may not be under this fraction of its device time on the same case, less
# CALLER_SLACK_MS: where both windows start after the same flush the caller's adds launch cost to the same
# device work, so honest kernels sit at or above 1 (noise on microsecond kernels stays within the slack).
# Where the caller's loop leaves the L2 warm (cuBLAS's back-to-back calls) an honest call can be faster than
# its flushed device time; the floor is then lowered by as much as the reference's own calls gained.
CALLER_FLOOR_FRACTION = 0.7
CALLER_SLACK_MS = 0.002
# Where both windows are host-clocked (timing_on_cpu_for_tests on the interpreter), the audited one also holds
# the audit's Python hooks, which run inside every interpreted launch: an honest cos read 0.5 there.
HOST_CLOCK_FLOOR_FRACTION = 0.2


# The protocol stage's calls are compared with nothing while timed, so a call on this many random cases of its
# grid is spot-checked against the reference (a kernel that does part of the work when unwatched is refused).
PROTOCOL_SPOT_CASES = 4


def with_spot_cases(judgement: JudgementContext, options: TimingOptions) -> TimingOptions:
    """The stage's options with PROTOCOL_SPOT_CASES cases of its grid drawn from the judgement's secret to be
    spot-checked, one call each (the same cases wherever it is asked: the draw is the secret's)."""
    case_ids = sorted(case.case_id for _, case in timed_grid(judgement))
    chosen = random.Random(derive_seed(judgement.secret, options.stage, "spot_cases")).sample(
        case_ids, k=min(PROTOCOL_SPOT_CASES, len(case_ids))
    )
    return dataclasses.replace(options, spot_checks=1, spot_case_ids=frozenset(chosen))


def ship_first_chunk_ahead(judgement: JudgementContext) -> None:
    """Before the device-time stage: draw and load this stage's first chunk of cases, so that its loops run in
    the device-time stage's exclusive hold, right after that stage's loops (timed_requests.ship_ahead): most
    operators' cases fit one chunk, so most judgements take the device alone once instead of twice. Nothing
    when the stage is off or has no cases (run_protocol_timing says so)."""
    options = judgement.options.protocol_timing
    if options is not None:
        ship_ahead(judgement, timed_grid(judgement), with_spot_cases(judgement, options), chunk_bytes(judgement))


def run_protocol_timing(judgement: JudgementContext) -> None:
    options = judgement.options.protocol_timing
    cases = timed_grid(judgement)
    if options is None or not cases:
        judgement.check("protocol_timing", "skipped", "no timed cases" if options is not None else "switched off")
        return
    started = time.perf_counter()
    # What the stage spent before it began: its first chunk's draws and, in the device-time stage's hold,
    # that chunk's loops. That chunk's options already carry the spot cases (ship_first_chunk_ahead).
    ahead = judgement.shipped_ahead.get(options.stage)
    options = ahead.options if ahead is not None else with_spot_cases(judgement, options)
    spent_ahead_s = ahead.shipping_s + ahead.hold_s if ahead is not None else 0.0
    judgement.environment["protocol_window"] = options.window
    loop, statistic_name = protocol_timer(options.window, judgement.spec.operator_id)
    statistic = STATISTICS[statistic_name]
    reports = time_cases(judgement, cases, options, chunk_bytes=chunk_bytes(judgement))
    spotted = [item for item in reports if item.case.case_id in options.spot_case_ids]
    if spotted:
        # A wrong answer is the first failure, before what the timings say.
        fetch_and_check_spots(
            judgement, [(item.tier, item.case, item.sent_bytes, item.sets) for item in spotted], options
        )
    results_by_id = {result.case_id: result for result in judgement.case_results}
    speedups: list[float] = []
    samples: list[tuple[list[float], list[float]]] = []
    flagged = 0
    launch_bound_cases = 0
    for item in reports:
        result = results_by_id.get(item.case.case_id)
        candidate_ms, reference_ms = list(item.reply.candidate_ms), list(item.reply.reference_ms)
        candidate_figure, reference_figure = statistic(candidate_ms), statistic(reference_ms)
        fraction = HOST_CLOCK_FLOOR_FRACTION if judgement.job.device_type == "cpu" else CALLER_FLOOR_FRACTION
        check_against_device_time(
            item,
            candidate_figure,
            audited_device_ms(result),
            fraction * warm_cache_allowance(loop, reference_figure, result),
            audited_evidence(result),
        )
        speedup = reference_figure / candidate_figure if candidate_figure > 0 else float("inf")
        floor = roofline_floor_of(judgement, item)
        below_roofline = floor is not None and candidate_figure < floor
        if result is not None:
            result.protocol_timing = {
                "reference_ms": reference_figure,
                "candidate_ms": candidate_figure,
                "speedup": speedup,
                "statistic": statistic_name,
                "loop": loop,
                "iterations": len(candidate_ms),
                "stop_reason": item.reply.stop_reason,
                "candidate_rse": relative_standard_error_of_median(candidate_ms),
                "reference_rse": relative_standard_error_of_median(reference_ms),
                "reference_kind": item.reply.reference_kind,
            }
            if below_roofline:
                result.protocol_timing["below_roofline"] = True
            bound = launch_bound(candidate_figure, reference_figure, item.reply.flush_ms)
            if bound is not None:
                result.protocol_timing["launch_bound"] = bound
                result.protocol_timing["flush_ms"] = item.reply.flush_ms
                launch_bound_cases += bound
        if below_roofline:
            flagged += 1
            judgement.flagged = True
            continue  # flagged cases are not ranked, as in the device-time stage
        speedups.append(speedup)
        samples.append((reference_ms, candidate_ms))
    judgement.stage_seconds["protocol_timing"] = round(time.perf_counter() - started + spent_ahead_s, 4)
    if len(reports) < len(cases):
        # A mean over part of the grid is not the protocol's number: none rather than a different quantity.
        judgement.check("protocol_timing", "failed", f"{len(reports)} of {len(cases)} cases timed before the budget")
        return
    judgement.protocol_speedup = geometric_mean(speedups)
    judgement.protocol_speedup_ci95 = bootstrap_speedup_ci(
        samples, random.Random(derive_seed(judgement.secret, "protocol_bootstrap")), statistic=statistic
    )
    detail = f"{len(reports)} timed case(s), caller latency: {describe_timer(loop, statistic_name)}"
    if flagged:
        detail += f"; {flagged} below the roofline, not ranked"
    if launch_bound_cases:
        detail += (
            f"; {launch_bound_cases} launch-bound (a side under one L2 flush: its figure is the race between the "
            "host's launch path and the flush, as in do_bench)"
        )
    judgement.check("protocol_timing", "passed", detail)


def launch_bound(candidate_ms: float, reference_ms: float, flush_ms: float | None) -> bool | None:
    """Whether a case's protocol figure is the launch race's outcome: either side's caller latency under one
    L2 flush. In do_bench's loop a kernel at least a flush long keeps the device busy two flushes an
    iteration, longer than the host's whole iteration, so every reading is the kernel alone; a shorter one
    reads the kernel alone or the host's launch path past the flush, whichever the host's speed at the time
    decides (on the H200 do_bench read one scalar clone at 3.4 us in one process and 50 us in the next).
    Over the cases past it the judge agreed with do_bench within 6 % on every operator measured
    (docs/measurements/h200-2026-12-03-past-the-race/). None where the loop has no flush (cuBLAS's
    back-to-back calls; the host clock)."""
    if flush_ms is None or flush_ms <= 0:
        return None
    return min(candidate_ms, reference_ms) < flush_ms


def chunk_bytes(judgement: JudgementContext) -> int:
    """About how many bytes of input sets one chunk of the stage's cases holds on the device at once (one
    shipping request and one exclusive hold each): the sandbox's allowance for kept tensors, at least
    256 MiB (cuBLAS operators time up to ~300 cases)."""
    return max(256 * 1024**2, judgement.sandbox_keep_alive_bytes)


def describe_timer(loop: str, statistic: str) -> str:
    """The stage's check detail: which loop timed the cases and what of its samples was taken."""
    loops = {
        "do_bench": "triton.testing.do_bench's loop, L2 flushed",
        "back_to_back": "calls back to back between two events, no flush (the original cuBLAS tests')",
        "caller": "a synchronised loop, L2 flushed (caller window)",
        "whole_call": "a synchronised loop, L2 flushed (whole_call window)",
    }
    return f"{loops.get(loop, loop)}, the {statistic}"


# A warm L2 makes a call at most this many times faster than its flushed device time, for the floor's sake
# (a bound, not a measurement: the H200's L2 serves a few times HBM's bandwidth).
WARM_CACHE_MAX_GAIN = 4.0


def warm_cache_allowance(loop: str, reference_caller_ms: float, result: CaseResult | None) -> float:
    """In a loop that leaves the L2 warm (``back_to_back``), how much faster than its flushed device time the
    reference's own calls ran, at most WARM_CACHE_MAX_GAIN times, so the floor on the candidate's moves with
    the loop's cache state rather than with the kernel. 1 for the flushed loops, where nothing runs faster
    than its flushed device time: there a reference of a few microseconds that read faster by noise would
    only have lowered the floor (on the CPU interpreter it let fast_when_unwatched pass once)."""
    if loop != "back_to_back" or result is None or not result.reference_ms or reference_caller_ms <= 0:
        return 1.0
    return max(1 / WARM_CACHE_MAX_GAIN, min(1.0, reference_caller_ms / result.reference_ms))


def audited_device_ms(result: CaseResult | None) -> float | None:
    """The candidate's device time on this case in the device-time stage: the smaller of its timed window's
    median and its kernels' summed device time in the stage's probe call (untrusted.timing.kernel_time_probe),
    where that call's output passed its spot check. A window can hold audited host time as well (a call that
    waits for the host, a readback with .item(): on the H200 an honest readback kernel read 0.10 ms unaudited
    against 0.18 ms audited, and was refused), and whether it did is a race with the stream hold that moves
    with the host's load, so no mark of it decides here: the probe's figure leaves host time out on every
    case. Never nothing: on the H200 a kernel that launched 24 slow kernels while audited and torch's cos
    otherwise was once compared with nothing, and passed."""
    if result is None or result.candidate_ms is None:
        return None
    probe_ms = (result.spread or {}).get("kernel_device_ms")
    if isinstance(probe_ms, (int, float)) and probe_ms > 0:
        return min(result.candidate_ms, float(probe_ms))
    return result.candidate_ms


def audited_evidence(result: CaseResult | None) -> str:
    """What audited_device_ms compared, for a refusal's message: the window's median and the probe's figure,
    or why the probe's figure did not count."""
    if result is None or result.candidate_ms is None:
        return ""
    spread = result.spread or {}
    probe_ms, note = spread.get("kernel_device_ms"), spread.get("probe_note") or "no figure"
    probe = f"{probe_ms:.4f} ms" if isinstance(probe_ms, (int, float)) and probe_ms > 0 else note
    return f"its timed window's median {result.candidate_ms:.4f} ms, its probe call's kernels {probe}"


def check_against_device_time(
    item: TimedCase,
    caller_ms: float,
    device_ms: float | None,
    fraction: float = CALLER_FLOOR_FRACTION,
    evidence: str = "",
) -> None:
    """Refuse a candidate that ran faster unaudited than audited on the same case (see the module's doc).
    ``evidence``: where ``device_ms`` came from (audited_evidence), for the message."""
    if device_ms is None or device_ms <= 0:
        return
    if caller_ms < fraction * device_ms - CALLER_SLACK_MS:
        raise crosscheck_failure(
            item,
            f"the kernel's call took {caller_ms:.4f} ms as a caller sees it but {device_ms:.4f} ms of device time "
            f"while audited{f' ({evidence})' if evidence else ''}: it does less work when it is not watched",
            "faster unaudited than its audited device time",
        )

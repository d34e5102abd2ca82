"""The timing loop that runs inside the sandbox on a GPU (it must: the kernel lives there).

Per timed call: flush L2 (write a 256 MB buffer), hold the stream with a device-side spin (clock.StreamHolds),
record a start event on the current stream, call, record the end event, then ``torch.cuda.synchronize()``
(all streams) and record a "settled" event. start->end is the time (device time, as
triton.testing.do_bench measures it when the host keeps up: no host latency inside the window);
end->settled is the tail, where work hidden on another stream would show. Every call is synchronised
before the next starts. Candidate and reference alternate call by call on different rotating input sets,
so no call sees the set the previous call used, and warm-up calls look exactly like timed ones. It stops
at the first of: RSE of both medians under the target, the per-case budget, the iteration cap (the reason
is reported). A few random iterations are spot-checked: their inputs (cloned before the call), the index of
the set whose values they held, and their outputs go back to the trusted side, which checks the inputs
against the set it drew and compares the outputs against the reference. The trusted side also
cross-checks the reported event totals against the host time it measured for the whole batch.
"""

from __future__ import annotations

import contextlib
import math
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from evaluation.judge import protocol
from evaluation.judge.backends import HostClockEvent
from evaluation.judge.compare import map_tensors
from evaluation.judge.untrusted import guard
from evaluation.judge.untrusted.clock import CLOCK_WARMUP_S, StreamHolds, spin_up
from evaluation.judge.untrusted.timing_sets import ValueRotation, clone_value, device_snapshot, get_arg, restore_value

# Untimed rounds before the first sample, run exactly like timed ones (EXPLOITS 8: no way to tell them apart).
WARMUP_CALLS = 3
# The probe call comes back as a spot (and its figure can count) only where its kernels' time is under this
# fraction of the timed window's median: a readback's wait, torch copies between launches. Elsewhere its
# figure would not lower the unwatched floor much, and checking every probe call doubled the spot checks'
# cost (on the H200, +307 judge-seconds over 81 kernels of a 110-kernel submission).
PROBE_SPOT_BELOW = 0.9


def relative_standard_error_of_median(samples: list[float]) -> float:
    """Standard error of the median over the median, from order statistics (McKean and Schrader, 1984):
    the distance between the ranks n/2 -/+ z*sqrt(n)/2 over 2z, z = 1.96. Distribution-free: a few slow
    outliers (a host hiccup, a clock step) barely move it, where the normal approximation through the
    standard deviation (used before) made them decide when to stop: on the H200 with 16 judges at once a
    16 us kernel with a 0.4 us IQR read an RSE of 40 % and ran to the time budget (2026-11-30)."""
    count = len(samples)
    if count < 3:
        return float("inf")
    ordered = sorted(samples)
    median = statistics.median(ordered)
    if median <= 0:
        return float("inf")
    reach = 1.96 * math.sqrt(count) / 2
    low = max(0, math.floor(count / 2 - reach))
    high = min(count - 1, math.ceil(count / 2 + reach) - 1)
    return (ordered[high] - ordered[low]) / (2 * 1.96) / median


def time_interleaved(
    *,
    candidate: Callable[..., Any],
    reference: Callable[..., Any],
    candidate_sets: list[dict[str, Any]],
    reference_sets: list[dict[str, Any]],
    flush_buffer: torch.Tensor | None,
    budget_s: float,
    rse_target: float,
    min_iterations: int,
    max_iterations: int,
    spot_checks: int,
    rng: random.Random,
    keep_alive: list[Any],
    min_launches: int,
    math_isfinite: Callable[[float], bool],
    poison_keys: list[int | str] = (),
    restore_keys: list[int | str] = (),
    host_clock: bool = False,
    event_class: Any = None,
    synchronize: Callable[[], None] | None = None,
    spin: Callable[[int], None] | None = None,
    clock_warmup_s: float | None = None,
    stream_of: Callable[[], Any] | None = None,
    window: str = "device",
    released_hold: Any = None,
) -> dict[str, Any]:
    """``window`` (protocol.TimeCase.window): "device" holds the timed stream until the call is enqueued and
    audits the candidate's calls, so the window holds device time alone; "caller" does neither, so it holds
    what a caller waits for after the flush, as ``triton.testing.do_bench`` measures it: the host launch
    cost the flush does not cover, and nothing of ours (the audit's Python hooks cost tens of microseconds
    a call, which would land on the candidate's side alone). "whole_call" is "caller" with the flush
    finished before the start event: the whole host path of the call is inside, not only what outlasts the
    flush (a latency that does not depend on whether the call's host path is just under or just over the
    flush's duration). Launches are counted in all three.

    ``event_class`` / ``synchronize`` / ``spin`` / ``stream_of`` (the current stream): the device family's
    (``backends.Backend``); CUDA's by default, host-clock stand-ins (no spin, no streams) with ``host_clock``
    (tests of this path on the interpreter).

    Timed candidate calls run under the same dispatch audit as correctness calls, and every launch or tensor
    op they issue on a stream other than the timed one is counted: while the stream is held, other streams
    run freely, so work hidden there would finish before the start event and never be timed."""
    entered = time.perf_counter()
    if host_clock:
        event_class, synchronize, spin = HostClockEvent, (lambda: None), None
    event_class = event_class or torch.cuda.Event
    synchronize = synchronize or torch.cuda.synchronize
    # EXPLOITS 7: a candidate buffer never holds the same values twice in a row of rounds (see ValueRotation).
    rotation = ValueRotation(candidate_sets, poison_keys)
    # In-out arguments (in-place self, BLAS y) are put back before every call, so repeated calls do not
    # drift (overflow) and every call does the same work; pure output buffers are poisoned instead. A
    # rotated candidate set has every input refilled before its calls, the in-out ones included: nothing to
    # put back there.
    all_sets = candidate_sets + reference_sets
    pristine = [
        {}
        if rotation.active and index < len(candidate_sets)
        else {key: clone_value(get_arg(call, key)) for key in restore_keys}
        for index, call in enumerate(all_sets)
    ]
    reference_calls, reference_kind = reference_thunks(reference, reference_sets)
    candidate_ms: list[float] = []
    reference_ms: list[float] = []
    # end -> settled: from the end of the timed stream's work to "every stream idle, host back". Honest
    # calls leave only the synchronize latency there; work hidden on another stream shows up as a longer
    # tail than the reference's (the trusted side compares the two).
    candidate_tail_ms: list[float] = []
    reference_tail_ms: list[float] = []
    samples_ms = {"candidate": candidate_ms, "reference": reference_ms}
    tails_ms = {"candidate": candidate_tail_ms, "reference": reference_tail_ms}
    host_ms_total = 0.0
    low_launch_calls = 0
    foreign_stream_calls = 0
    compute_calls = 0
    compute_ops: set[str] = set()
    warmup = WARMUP_CALLS
    # Spot-checked iterations come from the second round of sets on, where a result cached by buffer (the
    # first round's) would be stale: see ValueRotation.
    first_spot = max(warmup, len(candidate_sets) if rotation.active else warmup)
    spot_range = range(first_spot, max(first_spot, warmup + min_iterations))
    spot_iterations = set(rng.sample(spot_range, k=min(spot_checks, len(spot_range))))
    spots: list[dict[str, Any]] = []
    stop_reason = ""
    warmup_s = CLOCK_WARMUP_S if clock_warmup_s is None else clock_warmup_s
    if flush_buffer is not None and not host_clock and warmup_s > 0:
        spin_up(flush_buffer, warmup_s, synchronize)
    held = window == "device"
    holds = (
        StreamHolds(spin, event_class, synchronize, released_hold)
        if held and spin is not None and not host_clock
        else None
    )
    started = time.perf_counter()
    prep_s = started - entered  # set-up under the exclusive hold: copies, clock warm-up, spin calibration
    iteration = 0
    while True:
        index = iteration % len(candidate_sets)
        for side in ("reference", "candidate"):
            set_index = index if side == "candidate" else len(candidate_sets) + iteration % len(reference_sets)
            for key, value in pristine[set_index].items():
                restore_value(get_arg(all_sets[set_index], key), value)
            if side == "candidate":
                rotation.fill(index, iteration // len(candidate_sets))
                # Out buffers hold the answer of this set's previous round: poison them (untimed).
                for key in poison_keys:
                    guard.poison_tree(get_arg(candidate_sets[index], key))
            start, end, settled = (
                event_class(enable_timing=True),
                event_class(enable_timing=True),
                event_class(enable_timing=True),
            )
            if flush_buffer is not None:
                flush_buffer.zero_()
                if window == "whole_call":
                    synchronize()
            if holds is not None:
                holds.hold(side)
            if side == "candidate":
                call = candidate_sets[index]
                spot = iteration in spot_iterations
                before = map_tensors(call, torch.Tensor.clone) if spot else None
                guard.STATE.reset(ghost=False)
                if stream_of is not None:
                    guard.STATE.watch_stream(stream_of(), stream_of)
                host_start = time.perf_counter()
                start.record()
                try:
                    with guard.audited() if held else contextlib.nullcontext():
                        returned = candidate(*call["args"], **call["kwargs"])
                finally:
                    guard.STATE.watch_stream(None, None)
            else:
                thunk = reference_calls[iteration % len(reference_calls)]
                host_start = time.perf_counter()
                start.record()
                thunk()
            end.record()
            if holds is not None:
                holds.enqueued(side, (time.perf_counter() - host_start) * 1000, counted=iteration >= warmup)
            synchronize()
            settled.record()
            settled.synchronize()
            host_ms_total += (time.perf_counter() - host_start) * 1000
            if side == "candidate":
                if guard.STATE.launches < min_launches:
                    low_launch_calls += 1
                if guard.STATE.foreign_stream_work:
                    foreign_stream_calls += 1
                if guard.STATE.compute_ops:
                    compute_calls += 1
                    compute_ops.update(guard.STATE.compute_ops)
                if spot:
                    keep_alive.append(returned)
                    # A copy on the device now (the set's buffers hold other values later); encoding and
                    # shipping it (encode_spots) waits until the GPU is no longer held alone.
                    spots.append(
                        {
                            "set": rotation.source(index, iteration // len(candidate_sets)),
                            "before": before,
                            **device_snapshot({"returned": returned, "args": call["args"], "kwargs": call["kwargs"]}),
                        }
                    )
            if iteration >= warmup:
                samples_ms[side].append(start.elapsed_time(end))
                tails_ms[side].append(end.elapsed_time(settled))
        iteration += 1
        done = iteration - warmup
        if done >= max_iterations:
            stop_reason = "max_iterations"
            break
        # The RSE costs O(n); checking it every 8 rounds keeps the loop's host overhead flat.
        if done >= min_iterations and (done - min_iterations) % 8 == 0:
            converged = (
                max(relative_standard_error_of_median(candidate_ms), relative_standard_error_of_median(reference_ms))
                < rse_target
            )
            if converged:
                stop_reason = "rse"
                break
        if done >= min_iterations and time.perf_counter() - started > budget_s:
            stop_reason = "budget"
            break
    kernel_ms, probe_note = None, "no probe: the loop's window is not the device's"
    if held:
        # A reference set where the reference has sets of its own: values no candidate call has seen, so a
        # cache of the candidate's earlier answers (keyed on content; the rotation's values recur) cannot
        # answer the probe with a no-op. Else the rotation's next set, prepared as for a timed call.
        if reference_sets is not candidate_sets and reference_sets:
            side, index = "reference", iteration % len(reference_sets)
            position = len(candidate_sets) + index
        else:
            side, index = "candidate", iteration % len(candidate_sets)
            position = index
        for key, value in pristine[position].items():  # in-out arguments put back, as before a timed call
            restore_value(get_arg(all_sets[position], key), value)
        if side == "reference":
            call, probe_set = reference_sets[index], index
        else:
            rotation.fill(index, iteration // len(candidate_sets))
            call, probe_set = candidate_sets[index], rotation.source(index, iteration // len(candidate_sets))
        for key in poison_keys:  # pure outputs: a reference set's hold the reference's answer
            guard.poison_tree(get_arg(call, key))
        # The probe's figure only counts where its call is checked like a timed one (a spot marked "probe"):
        # otherwise a kernel could launch a no-op whenever it is probed and lower the floor the trusted side
        # holds its unwatched calls to (timing_protocol.audited_device_ms). Only where it would lower that
        # floor is the call worth its check (PROBE_SPOT_BELOW); elsewhere the window is the floor anyway.
        before = map_tensors(call, torch.Tensor.clone) if spot_checks > 0 else None
        kernel_ms, returned, probe_note = kernel_time_probe(
            candidate,
            call,
            event_class,
            synchronize,
            hold=holds.hold_whole_call if holds is not None else None,
            window_hold=holds.launch_holds() if holds is not None else None,
        )
        if guard.STATE.compute_ops:
            compute_calls += 1
            compute_ops.update(guard.STATE.compute_ops)
        if kernel_ms is not None and before is None:
            probe_note = "not spot-checked: spot checks are off"
        elif kernel_ms is not None and candidate_ms:
            if kernel_ms >= PROBE_SPOT_BELOW * statistics.median(candidate_ms):
                probe_note = f"not spot-checked: at or above {PROBE_SPOT_BELOW} of the window"
            else:
                probe_note = "spot-checked"
                keep_alive.append(returned)
                spots.append(
                    {
                        "set": probe_set,
                        "side": side,
                        "probe": True,
                        "before": before,
                        **device_snapshot({"returned": returned, "args": call["args"], "kwargs": call["kwargs"]}),
                    }
                )
    return {
        "candidate_ms": candidate_ms,
        "reference_ms": reference_ms,
        "host_ms_total": host_ms_total,
        "event_ms_total": sum(candidate_ms) + sum(reference_ms),
        "candidate_tail_ms": candidate_tail_ms,
        "reference_tail_ms": reference_tail_ms,
        "iterations": len(candidate_ms),
        "stop_reason": stop_reason,
        "loop_s": time.perf_counter() - started,
        "prep_s": prep_s,
        "low_launch_calls": low_launch_calls,
        "foreign_stream_calls": foreign_stream_calls,
        "compute_calls": compute_calls,
        "compute_ops": sorted(compute_ops)[:10],
        "reference_kind": reference_kind,
        "spot_count": len(spots),
        "_spots": spots,
        "value_rotation": rotation.describe(),
        "finite": all(math_isfinite(value) for value in candidate_ms + reference_ms),
        "holds": holds.summary() if holds is not None else None,
        "kernel_ms": kernel_ms,
        "probe_note": probe_note,
    }


def kernel_time_probe(
    candidate: Callable[..., Any],
    call: dict[str, Any],
    event_class: Any,
    synchronize: Callable[[], None],
    hold: Callable[[str], None] | None = None,
    window_hold: Callable[[], None] | None = None,
) -> tuple[float | None, Any, str]:
    """One more audited call, untimed, with two events around each of its Triton launches: the summed device
    time of its kernels alone, its host time (the audit's, a readback's wait) left out. The unwatched check
    of the protocol stage holds a caller's latency to the smaller of this and the audited window
    (timing_protocol.audited_device_ms), once the call's output passed its spot check. ``hold``: a stream
    hold of the loop's (StreamHolds.hold_whole_call), taken first so that the call's launches queue behind it
    and each window holds its kernel alone, not the host's launch path too (what a call launches after
    waiting for the host, a readback's second kernel, runs on an idle device: its window holds its launch
    latency too). ``window_hold``: a short hold of the loop's (StreamHolds.launch_holds) enqueued before each
    window opens, so that a launch after such a wait queues behind it too and its window holds the kernel
    alone: on the H200 an honest readback's probe read 0.04-0.10 ms for two kernels of a few microseconds,
    its second launch's host path on an idle device, and with that figure it was refused as faster
    unaudited (twice in twelve judgements). Returns that time (None when there is no figure), what the call
    returned (for its spot check), and a note of why there is no figure, for the result."""
    guard.STATE.reset(ghost=False)
    if hold is not None:
        hold("candidate")
    windows: list[tuple[Any, Any]] = []
    guard.STATE.launch_windows, guard.STATE.event_class = windows, event_class
    guard.STATE.window_hold = window_hold
    try:
        with guard.launcher_windows(), guard.audited():
            returned = candidate(*call["args"], **call["kwargs"])
    finally:
        guard.STATE.launch_windows, guard.STATE.window_hold = None, None
    synchronize()
    if not windows:
        return None, returned, "no figure: the call launched no Triton kernel"
    if guard.STATE.window_missed:
        # A launch without a window would make the sum too small, a floor it does not hold: no figure.
        return None, returned, "no figure: a launch made no window"
    return sum(start.elapsed_time(end) for start, end in windows), returned, ""


def reference_thunks(
    reference: Callable[..., Any],
    sets: list[dict[str, Any]],
) -> tuple[list[Callable[[], Any]], str]:
    """One thunk per reference set, and what they time: the record's ``baseline_name`` when
    ``spec.baseline`` gave a callable for every set, else "reference" (the record's reference was timed)."""
    baseline = getattr(reference, "baseline", None)
    thunks: list[Callable[[], Any]] = []
    from_baseline = 0
    for call in sets:
        thunk = None
        if baseline is not None:
            from evaluation.catalog.spec import Call

            spec, case = baseline
            thunk = spec.baseline(case, Call(args=list(call["args"]), kwargs=dict(call["kwargs"])))
        if thunk is None:

            def thunk(call: dict[str, Any] = call) -> Any:
                return reference(call["args"], call["kwargs"])
        else:
            from_baseline += 1
        thunks.append(thunk)
    if from_baseline and from_baseline < len(thunks):
        # Mixed sides would make the median meaningless: time the reference on every set instead.
        thunks = [lambda call=call: reference(call["args"], call["kwargs"]) for call in sets]
        from_baseline = 0
    if from_baseline:
        spec, _ = baseline
        return thunks, spec.baseline_name or "baseline"
    return thunks, "reference"


def reference_callable(request: protocol.TimeCase) -> Any:
    """The timing baseline: the operator's ``baseline`` when the worker has it, else its reference."""
    from evaluation.catalog.spec import Call, Case
    from evaluation.judge.records import find_operator

    spec = find_operator(request.operator_id)
    case = Case(**{key: value for key, value in request.case.items() if key != "case_id"})

    def run(args: list[Any], kwargs: dict[str, Any]) -> Any:
        return spec.reference(case, Call(args=list(args), kwargs=dict(kwargs)))

    if spec.baseline is not None:
        run.baseline = (spec, case)  # type: ignore[attr-defined]
    return run

"""The protocol stage's timer inside the sandbox: ``triton.testing.do_bench``'s loop, call for call.

The original harness times its ATen cases with ``do_bench(fn, warmup=25, rep=100)``, median, and its vLLM
cases with the same call, mean (the statistic is the trusted side's: timing_protocol.py). That loop
never waits for the device between calls: it enqueues an L2 flush, a start event, the call and an end event,
again and again, and synchronises once at the end. Whether a call's host launch cost lands inside its window
is then a race between the host and the device (the flush takes ~60 us on an H200, a Triton call's host path
40-60 us), and do_bench's figure is the outcome of that race. A loop that synchronises after every call
(timing.time_interleaved, the device-time stage's) runs a different race: on the H200 its caller latency
agreed with do_bench's within 10 % on none of ten ATen operators. So this loop keeps do_bench's shape:

- per batch, untimed iterations, then the timed ones (flush, start event, call, end event), all alike and
  with no wait in between, one synchronize at the end; the median of every timed call. The untimed ones
  bring a short batch of launch-bound calls to the steady state of do_bench's long loop (warmup_calls);
- iteration counts sized from an estimate of one timed iteration, as do_bench sizes them, on a budget of
  milliseconds rather than do_bench's 125 ms (a submission's every timed case goes through here). A call of
  LONG_CALL_MS or more may run as few as LONG_CALL_MIN_ITERATIONS timed calls a batch: its host path hides
  behind it, its median varies 0.2 % on the H200, and do_bench itself times a 30 ms call three times.

The flush is do_bench's own: the same 256 MB zeroed as int32 (do_bench_flush).

What differs from do_bench, and why:

- The estimate is each side's first call between two events after a synchronize, plus one flush between two
  events, where do_bench times five flushed calls: the estimate only sizes the batches, which their bounds
  mostly decide, and five flushed calls a side would cost ~0.7 ms a case, over some 5,500 cases a
  110-kernel submission.
- Each side runs BATCHES_PER_SIDE batches, the two sides alternating which goes first (reference,
  candidate, candidate, reference), over the case's sets in turn (one set is enough: no values rotate
  here), so a drift of the host's or the device's clocks lands on both sides.
- In-out arguments are put back before every timed call, ahead of its flush: where do_bench iterates its
  ``grad_to_none`` (scripts/gpu/judge_h200.py's do_bench does the same), so every call does the same work.
- Each candidate call's Triton launches are counted (an integer read before and after): a call that
  launched nothing is refused on the trusted side, as in every other timed loop.

Nothing of the dispatch audit, the stream hold or the value rotation runs here: they would add host time to
the candidate's side alone. What the candidate cannot do unwatched is checked on the trusted side against
its audited device time on the same case (timing_protocol.check_against_device_time), and on the few cases
the trusted side asks for (TimeCase.spot_checks) one random timed call comes back as a spot, compared with
the reference there (its clone and copies outside the call's window).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from evaluation.judge.backends import HostClockEvent
from evaluation.judge.compare import map_tensors
from evaluation.judge.untrusted import guard
from evaluation.judge.untrusted.clock import CLOCK_WARMUP_S, spin_up
from evaluation.judge.untrusted.timing import reference_thunks
from evaluation.judge.untrusted.timing_sets import device_snapshot, restorer

# do_bench warms up for a quarter of the time it then measures (warmup=25 ms, rep=100 ms).
WARMUP_FRACTION = 0.25
BATCHES_PER_SIDE = 2
# A call at least this long may run as few as LONG_CALL_MIN_ITERATIONS timed calls a batch (see the module's doc).
LONG_CALL_MS = 1.0
LONG_CALL_MIN_ITERATIONS = 2
# Untimed iterations a batch runs first where its call's estimate is under RACING_CALL_MS (warmup_calls).
STEADY_STATE_CALLS = 5
RACING_CALL_MS = 0.1
# No head start: each batch begins on an idle device, as do_bench's timed loop does after its warm-up calls
# (unflushed, so a launch-bound call leaves no lead either). Keeping the device busy 0.3 ms before each batch
# (protocol-stage version 14) read the kernel alone where the host was slower than flush plus kernel, since a
# few untimed iterations cannot drain such a lead: in the sandbox on the H200 the candidate's figure came to
# 0.18-0.70 of do_bench's on all ten AGREE10 operators, and on a call of several launches (aten::sum, 190 us
# against 246-280 us) it hid the host's gaps between them, which a caller waits for
# (docs/measurements/h200-2026-12-03-head-start/; scripts/gpu/launch_race_by_cpu.py still times it).


def calls_per_side(min_iterations: int) -> int:
    """The most calls one side makes when every batch runs its minimum (a slow case) with the most untimed
    iterations: the trusted side's time limit for the request is sized from it."""
    return 1 + BATCHES_PER_SIDE * (min_iterations + warmup_calls(min_iterations, estimate_ms=0.0))


def warmup_calls(iterations: int, estimate_ms: float = 0.0) -> int:
    """Untimed iterations before a batch's timed ones, each run exactly like them (put back, flush, events,
    call): a quarter as many as the timed ones, as do_bench warms up for a quarter of the time it measures,
    and at least STEADY_STATE_CALLS for a call whose estimate is under RACING_CALL_MS.

    Why those: do_bench's median is the steady state of a loop of hundreds of calls, where either the device
    runs ahead of the host's launch path (each window holds the kernel alone) or waits for it (each holds
    the host's overhang past the flush); the two rates decide which. Where a call is that short its host path
    (30-70 us a Triton call on the H200) races the flush (~60 us), and a batch of a few calls, started on an
    idle device, reads the overhang on its first calls either way: with one flushless warm-up call, on the
    H200 the stage's figures for launch-bound operators moved up to 3x between two runs while do_bench agreed
    with itself within 6 %. The untimed iterations let the device's lead build as it would in do_bench's
    loop. A longer call keeps the device ahead from its first iteration, so it needs no more."""
    ordinary = max(1, math.ceil(iterations * WARMUP_FRACTION))
    return max(STEADY_STATE_CALLS, ordinary) if estimate_ms < RACING_CALL_MS else ordinary


def time_like_do_bench(
    *,
    candidate: Callable[..., Any],
    reference: Callable[..., Any],
    sets: list[dict[str, Any]],
    flush_buffer: torch.Tensor | None,
    budget_s: float,
    min_iterations: int,
    max_iterations: int,
    min_launches: int,
    restore_keys: list[int | str] = (),
    host_clock: bool = False,
    event_class: Any = None,
    synchronize: Callable[[], None] | None = None,
    clock_warmup_s: float | None = None,
    spot_checks: int = 0,
    rng: random.Random | None = None,
    keep_alive: list[Any] | None = None,
    reference_sets: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Time ``candidate`` and ``reference`` on ``sets`` (the reference on ``reference_sets`` where it has its
    own, as on a spot-checked case) as do_bench would (see the module's doc); returns the
    report time_interleaved returns, so one reply carries either. ``budget_s``: the whole case's, shared by
    its 2 x BATCHES_PER_SIDE batches; each batch runs between ``min_iterations`` (LONG_CALL_MIN_ITERATIONS
    for a long call) and ``max_iterations`` timed calls. ``spot_checks``: that many of the candidate's timed
    calls, chosen with ``rng``, come back as spots (their returns kept in ``keep_alive``).
    ``host_clock``: host-clock events and no synchronize (tests of this path on the interpreter)."""
    entered = time.perf_counter()
    sides = Sides.prepared(
        candidate,
        reference,
        sets,
        restore_keys,
        flush_buffer,
        host_clock,
        event_class,
        synchronize,
        clock_warmup_s,
        reference_sets,
    )
    thunks, restorers, event_class, synchronize = sides.thunks, sides.restorers, sides.event_class, sides.synchronize
    flush = do_bench_flush(flush_buffer) if flush_buffer is not None else (lambda: None)
    started = time.perf_counter()
    prep_s = started - entered
    samples_ms: dict[str, list[float]] = {"candidate": [], "reference": []}
    host_ms_total = 0.0
    low_launch_calls = 0
    batch_budget_ms = budget_s * 1000 / (2 * BATCHES_PER_SIDE)
    flush_ms = flush_time_ms(flush, event_class, synchronize) if flush_buffer is not None else 0.0
    iterations, warmups = {}, {}
    for side in ("reference", "candidate"):
        estimate_ms, host_ms, low = first_call(thunks[side][0], restorers[side][0], event_class, synchronize)
        host_ms_total += host_ms
        if side == "candidate":
            low_launch_calls += low if min_launches else 0
        iteration_ms = estimate_ms + flush_ms
        count = int(batch_budget_ms / iteration_ms) if iteration_ms > 0 else max_iterations
        fewest = min(min_iterations, LONG_CALL_MIN_ITERATIONS) if estimate_ms >= LONG_CALL_MS else min_iterations
        iterations[side] = min(max_iterations, max(fewest, count))
        warmups[side] = warmup_calls(iterations[side], estimate_ms)
    spotted = chosen_spots(spot_checks, rng, BATCHES_PER_SIDE, iterations["candidate"])
    spots: list[dict[str, Any]] = []
    for batch in range(BATCHES_PER_SIDE):
        index = batch % len(sets)
        order = ("reference", "candidate") if batch % 2 == 0 else ("candidate", "reference")
        for side in order:
            spotter = None
            if side == "candidate" and spotted.get(batch):
                spotter = Spotter(sets[index], index, spotted[batch], spots, keep_alive)
            times, host_ms, low = _batch(
                thunks[side][index % len(thunks[side])],
                restorers[side][index % len(thunks[side])],
                flush,
                iterations[side],
                event_class,
                synchronize,
                count_launches=side == "candidate",
                spotter=spotter,
                warmup=warmups[side],
            )
            samples_ms[side] += times
            host_ms_total += host_ms
            low_launch_calls += low if side == "candidate" and min_launches else 0
    candidate_ms, reference_ms = samples_ms["candidate"], samples_ms["reference"]
    return unwatched_report(
        candidate_ms,
        reference_ms,
        host_ms_total=host_ms_total,
        event_ms_total=sum(candidate_ms) + sum(reference_ms),
        stop_reason="do_bench",
        loop_s=time.perf_counter() - started,
        prep_s=prep_s,
        low_launch_calls=low_launch_calls,
        reference_kind=sides.reference_kind,
        value_rotation=f"off: do_bench's loop, {len(sets)} set(s) in turn",
        # One L2 flush on the device, for the trusted side's launch-bound mark (timing_protocol.launch_bound);
        # none on the host clock, where nothing races the flush.
        flush_ms=flush_ms if flush_buffer is not None and not host_clock else None,
        spot_count=len(spots),
        _spots=spots,
    )


def chosen_spots(
    spot_checks: int, rng: random.Random | None, batches: int, calls_per_batch: int
) -> dict[int, set[int]]:
    """Which of the candidate's calls come back as spots: ``spot_checks`` of its ``batches`` x
    ``calls_per_batch`` calls, at random, as {batch: {call index}}."""
    if spot_checks <= 0 or rng is None or calls_per_batch <= 0:
        return {}
    chosen: dict[int, set[int]] = {}
    for flat in rng.sample(range(batches * calls_per_batch), k=min(spot_checks, batches * calls_per_batch)):
        chosen.setdefault(flat // calls_per_batch, set()).add(flat % calls_per_batch)
    return chosen


@dataclass
class Spotter:
    """Takes a spot of the candidate's calls ``at`` (indices in a batch) on ``call`` (set ``set_index``), as
    the device-time loop does (untrusted/timing.py): its inputs cloned before the call (ahead of the flush,
    outside the window), its arguments and return value copied on the device after the end event. A spot is
    taken only on a call whose inputs are the drawn set: after its in-out arguments were put back."""

    call: dict[str, Any]
    set_index: int
    at: set[int]
    spots: list[dict[str, Any]]
    keep_alive: list[Any] | None

    def before(self, position: int) -> Any:
        return map_tensors(self.call, torch.Tensor.clone) if position in self.at else None

    def after(self, before: Any, returned: Any) -> None:
        if before is None:
            return
        if self.keep_alive is not None:
            self.keep_alive.append(returned)
        snapshot = device_snapshot({"returned": returned, "args": self.call["args"], "kwargs": self.call["kwargs"]})
        self.spots.append({"set": self.set_index, "before": before, **snapshot})


@dataclass
class Sides:
    """What a loop of the protocol stage calls: each side's thunk per set, each side's restorer of its sets'
    in-out arguments, what the reference side is, and the device family's events and synchronize."""

    thunks: dict[str, list[Callable[[], Any]]]
    restorers: dict[str, list[Callable[[], None] | None]]
    reference_kind: str
    event_class: Any
    synchronize: Callable[[], None]

    @classmethod
    def prepared(
        cls,
        candidate: Callable[..., Any],
        reference: Callable[..., Any],
        sets: list[dict[str, Any]],
        restore_keys: list[int | str],
        flush_buffer: torch.Tensor | None,
        host_clock: bool,
        event_class: Any,
        synchronize: Callable[[], None] | None,
        clock_warmup_s: float | None,
        reference_sets: list[dict[str, Any]] | None = None,
    ) -> Sides:
        """The sides, with the device's clocks spun up and the launch counters reset: a loop starts next.
        The reference runs on ``reference_sets`` where given, else on the candidate's ``sets``.
        ``host_clock``: host-clock events and no synchronize (tests of these loops on the interpreter)."""
        if host_clock:
            event_class, synchronize = HostClockEvent, (lambda: None)
        event_class = event_class or torch.cuda.Event
        synchronize = synchronize or torch.cuda.synchronize
        reference_sets = reference_sets or sets
        reference_calls, reference_kind = reference_thunks(reference, reference_sets)
        thunks = {
            "candidate": [lambda call=call: candidate(*call["args"], **call["kwargs"]) for call in sets],
            "reference": reference_calls,
        }
        warmup_s = CLOCK_WARMUP_S if clock_warmup_s is None else clock_warmup_s
        if flush_buffer is not None and not host_clock and warmup_s > 0:
            spin_up(flush_buffer, warmup_s, synchronize)
        guard.STATE.reset(ghost=False)
        guard.STATE.watch_stream(None, None)
        candidate_restorers = [restorer(call, restore_keys) for call in sets]
        restorers = {
            "candidate": candidate_restorers,
            "reference": candidate_restorers
            if reference_sets is sets
            else [restorer(call, restore_keys) for call in reference_sets],
        }
        return cls(thunks, restorers, reference_kind, event_class, synchronize)


def unwatched_report(candidate_ms: list[float], reference_ms: list[float], **figures: Any) -> dict[str, Any]:
    """The report time_interleaved returns (one reply carries any loop's), for a loop with nothing of the
    audit, the stream hold or the value rotation inside: no tails, spots, foreign-stream or compute calls."""
    return {
        "candidate_ms": candidate_ms,
        "reference_ms": reference_ms,
        # No per-call tails: nothing waits between calls here (hidden work is the device-time stage's check).
        "candidate_tail_ms": [],
        "reference_tail_ms": [],
        "iterations": len(candidate_ms),
        "foreign_stream_calls": 0,
        "compute_calls": 0,
        "compute_ops": [],
        "spot_count": 0,
        "_spots": [],
        "finite": all(math.isfinite(value) for value in candidate_ms + reference_ms),
        "holds": None,
        **figures,
    }


def first_call(
    thunk: Callable[[], Any],
    restore: Callable[[], None] | None,
    event_class: Any,
    synchronize: Callable[[], None],
) -> tuple[float, float, int]:
    """One call between two events, then a synchronize: the estimate of one call (events, not the host's
    clock: a busy host must not decide it). Returns (ms, host ms, 1 if it launched nothing else 0)."""
    host_started = time.perf_counter()
    if restore is not None:
        restore()
    start, end = event_class(enable_timing=True), event_class(enable_timing=True)
    start.record()
    before = guard.STATE.launches
    thunk()
    low = int(guard.STATE.launches == before)
    end.record()
    synchronize()
    return start.elapsed_time(end), (time.perf_counter() - host_started) * 1000, low


def do_bench_flush(buffer: Any) -> Callable[[], Any]:
    """do_bench's own L2 flush on ``buffer``: ``zero_`` of its 256 MB as int32, as Triton's
    get_empty_cache_for_benchmark allocates them, so the device runs the very kernel the original's timer runs
    between calls. The flush's duration is one side of the race between host and device that this loop
    reproduces; the sandbox's buffer is bytes (the device-time stage zeroes it as such), and a byte fill is
    another kernel, vectorised otherwise, with a duration of its own."""
    if isinstance(buffer, torch.Tensor) and buffer.dtype == torch.uint8 and buffer.numel() % 4 == 0:
        return buffer.view(torch.int32).zero_
    return buffer.zero_


def flush_time_ms(flush: Callable[[], Any], event_class: Any, synchronize: Callable[[], None]) -> float:
    """One L2 flush between two events: what every timed iteration costs besides its call."""
    start, end = event_class(enable_timing=True), event_class(enable_timing=True)
    start.record()
    flush()
    end.record()
    synchronize()
    return start.elapsed_time(end)


def _batch(
    thunk: Callable[[], Any],
    restore: Callable[[], None] | None,
    flush: Callable[[], Any],
    iterations: int,
    event_class: Any,
    synchronize: Callable[[], None],
    count_launches: bool,
    spotter: Spotter | None = None,
    warmup: int = 1,
) -> tuple[list[float], float, int]:
    """One do_bench run of ``thunk``: ``warmup`` untimed iterations, then ``iterations`` timed ones, all
    alike and with no wait between them (warmup_calls says why the untimed ones are whole iterations).
    Returns (the timed calls' ms, host ms for the batch, timed calls that launched nothing). Every call's
    in-out arguments are put back first, so ``spotter`` may take any of the timed ones."""
    starts = [event_class(enable_timing=True) for _ in range(iterations + warmup)]
    ends = [event_class(enable_timing=True) for _ in range(iterations + warmup)]
    host_started = time.perf_counter()
    for index in range(warmup):
        if restore is not None:
            restore()
        flush()
        starts[index].record()
        thunk()
        ends[index].record()
    starts, ends = starts[warmup:], ends[warmup:]
    low = 0
    state = guard.STATE
    for index in range(iterations):
        if restore is not None:
            restore()
        spot_before = spotter.before(index) if spotter is not None else None
        flush()
        starts[index].record()
        before = state.launches
        returned = thunk()
        ends[index].record()
        if count_launches and state.launches == before:
            low += 1
        if spotter is not None:
            spotter.after(spot_before, returned)
    synchronize()
    host_ms = (time.perf_counter() - host_started) * 1000
    return [start.elapsed_time(end) for start, end in zip(starts, ends, strict=True)], host_ms, low

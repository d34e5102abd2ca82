"""The protocol stage's timer for cuBLAS cases inside the sandbox: the original cuBLAS tests' loop.

The original's cuBLAS tests (VLLM_CUBLAS.md, "Shared test machinery") time with CUDA events and no L2
flush: 10 warm-up calls, then 100 calls back to back between two events, the mean. Back to back, one call's
host path overlaps the previous call's device work, so a call costs the longer of the two: the device time
of a large call, the host's launch path of a small one, the L2 still warm from the call before. That is a
different quantity from do_bench's (timing_do_bench.py), and the speedup of a cuBLAS operator means the
paper's only if it is measured this way.

Per side: one call between two events after a synchronize (the estimate), then BATCHES_PER_SIDE batches of
warm-up calls and N calls between two events, one synchronize; each batch gives one sample, its mean per
call. N is the original's 100 where that fits the case's budget, fewer for longer calls (never under
FEWEST_CALLS: a call of milliseconds hides its host path from the second call on); warm-up calls are a tenth
of N, as the original's 10 are of its 100. The sides alternate which goes first (reference, candidate,
candidate, reference). In-out arguments are put back before each batch, not between its calls: the original
runs its 100 calls on the same buffers, and a copy between them would be timed.

Each candidate call's Triton launches are counted, as in every timed loop; nothing of the dispatch audit or
the stream hold runs here (the trusted side checks what the candidate cannot do unwatched against its
audited device time on the same case: timing_protocol.check_against_device_time).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from typing import Any

import torch

from evaluation.judge.untrusted import guard
from evaluation.judge.untrusted.timing_do_bench import Sides, Spotter, chosen_spots, first_call, unwatched_report

# The original's calls between its two events, and its warm-up calls per timed call (10 for 100).
ORIGINAL_CALLS = 100
WARMUP_FRACTION = 0.1
BATCHES_PER_SIDE = 2
FEWEST_CALLS = 2


def warmup_calls(calls: int) -> int:
    return max(1, math.ceil(calls * WARMUP_FRACTION))


def calls_per_side(calls: int = FEWEST_CALLS) -> int:
    """One side's calls when every batch runs ``calls`` timed calls (a slow case runs FEWEST_CALLS): the
    trusted side's time limit for the request is sized from it."""
    return 1 + BATCHES_PER_SIDE * (calls + warmup_calls(calls))


def time_back_to_back(
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
    """Time ``candidate`` and ``reference`` on ``sets`` as the original's cuBLAS tests do (see the module's
    doc), the reference on ``reference_sets`` where it has its own (a spot-checked case); returns the report
    the other timed loops return, one sample a batch. ``budget_s``: the whole
    case's; ``min_iterations`` / ``max_iterations`` bound the do_bench loop and are not used here: this loop
    runs between FEWEST_CALLS and ORIGINAL_CALLS calls a batch. ``flush_buffer`` only spins the clocks up
    (no flush: the original has none). ``spot_checks``: that many candidate batches, chosen with ``rng``,
    send their first call back as a spot (the only call of a batch whose inputs are the drawn set: in-out
    arguments are put back before a batch, not between its calls); its return is kept in ``keep_alive``.
    ``host_clock``: host-clock events, no synchronize (tests)."""
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
    started = time.perf_counter()
    samples_ms: dict[str, list[float]] = {"candidate": [], "reference": []}
    host_ms_total = 0.0
    low_launch_calls = 0
    batch_budget_ms = budget_s * 1000 / (2 * BATCHES_PER_SIDE)
    calls = {}
    for side in ("reference", "candidate"):
        estimate_ms, host_ms, low = first_call(thunks[side][0], restorers[side][0], event_class, synchronize)
        host_ms_total += host_ms
        if side == "candidate" and min_launches:
            low_launch_calls += low
        fit = int(batch_budget_ms / estimate_ms) if estimate_ms > 0 else ORIGINAL_CALLS
        calls[side] = min(ORIGINAL_CALLS, max(FEWEST_CALLS, fit))
    spotted = chosen_spots(spot_checks, rng, BATCHES_PER_SIDE, 1)  # a batch's first call
    spots: list[dict[str, Any]] = []
    for batch in range(BATCHES_PER_SIDE):
        index = batch % len(sets)
        order = ("reference", "candidate") if batch % 2 == 0 else ("candidate", "reference")
        for side in order:
            spotter = None
            if side == "candidate" and spotted.get(batch):
                spotter = Spotter(sets[index], index, {0}, spots, keep_alive)
            mean_ms, host_ms, low = _batch(
                thunks[side][index % len(thunks[side])],
                restorers[side][index % len(thunks[side])],
                calls[side],
                event_class,
                synchronize,
                count_launches=side == "candidate" and bool(min_launches),
                spotter=spotter,
            )
            samples_ms[side].append(mean_ms)
            host_ms_total += host_ms
            low_launch_calls += low
    candidate_ms, reference_ms = samples_ms["candidate"], samples_ms["reference"]
    return unwatched_report(
        candidate_ms,
        reference_ms,
        host_ms_total=host_ms_total,
        # Every batch's whole window: what the trusted side checks against its own clock.
        event_ms_total=sum(mean * calls["candidate"] for mean in candidate_ms)
        + sum(mean * calls["reference"] for mean in reference_ms),
        stop_reason="back_to_back",
        loop_s=time.perf_counter() - started,
        prep_s=started - entered,
        low_launch_calls=low_launch_calls,
        reference_kind=sides.reference_kind,
        value_rotation=f"off: the original cuBLAS tests' loop, {calls['candidate']} calls a batch",
        spot_count=len(spots),
        _spots=spots,
    )


def _batch(
    thunk: Callable[[], Any],
    restore: Callable[[], None] | None,
    calls: int,
    event_class: Any,
    synchronize: Callable[[], None],
    count_launches: bool,
    spotter: Spotter | None = None,
) -> tuple[float, float, int]:
    """Warm-up calls, then ``calls`` calls between two events with no wait. Returns (ms per call, host ms,
    calls that launched nothing). ``spotter`` may take the batch's first call (a warm-up, after the put-back)."""
    host_started = time.perf_counter()
    if restore is not None:
        restore()
    for position in range(warmup_calls(calls)):
        spot_before = spotter.before(position) if spotter is not None else None
        returned = thunk()
        if spotter is not None:
            spotter.after(spot_before, returned)
    state = guard.STATE
    low = 0
    start, end = event_class(enable_timing=True), event_class(enable_timing=True)
    start.record()
    for _ in range(calls):
        before = state.launches
        thunk()
        if count_launches and state.launches == before:
            low += 1
    end.record()
    synchronize()
    return start.elapsed_time(end) / calls, (time.perf_counter() - host_started) * 1000, low

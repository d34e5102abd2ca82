"""The protocol stage's timer (untrusted/timing_do_bench.py): triton.testing.do_bench's loop, call for call.

These tests drive it with events, a flush and a synchronize that write what happens into one timeline, so
what is checked is the order of flushes, events, calls and waits: on a GPU it is that order, not the clock,
that decides which share of a call's host path lands inside its window.
"""

from __future__ import annotations

import itertools

import torch

from evaluation.judge.untrusted import guard
from evaluation.judge.untrusted.timing_do_bench import (
    ESTIMATE_CALLS,
    LONG_CALL_MIN_ITERATIONS,
    LONG_CALL_MS,
    calls_per_side,
    time_like_do_bench,
    warmup_calls,
)


class Timeline:
    """Everything the loop does, in order: "flush", "record", "sync", ("call", side, set). Time is a
    counter that only calls advance (by their side's cost), so an event pair's elapsed time is the cost of
    the calls between its two records."""

    def __init__(self, cost_ms: dict[str, float]) -> None:
        self.entries: list = []
        self.now = 0.0
        self.cost_ms = cost_ms
        timeline = self

        class Event:
            def __init__(self, enable_timing: bool = True) -> None:
                self.at = 0.0

            def record(self) -> None:
                self.at = timeline.now
                timeline.entries.append("record")

            def elapsed_time(self, end: Event) -> float:
                return end.at - self.at

        class Flush:
            def zero_(self) -> None:
                timeline.entries.append("flush")

        self.event_class, self.flush_buffer = Event, Flush()

    def synchronize(self) -> None:
        self.entries.append("sync")

    def call(self, side: str, set_index: int) -> None:
        self.entries.append(("call", side, set_index))
        self.now += self.cost_ms[side]


def run_loop(*, cost_ms=None, sets=2, budget_s=0.004, min_iterations=3, max_iterations=6, launches=1, mutates=()):
    timeline = Timeline(cost_ms or {"candidate": 0.1, "reference": 0.2})
    calls = [{"args": [torch.full((3,), float(index))], "kwargs": {}} for index in range(sets)]
    drawn = [call["args"][0].clone() for call in calls]
    seen_inputs: list[torch.Tensor] = []

    def candidate(x: torch.Tensor) -> None:
        guard.STATE.launches += launches  # what the launch hook counts for a Triton launch
        if timeline.entries and timeline.entries[-1] == "record":  # a timed call (warm-up calls drift)
            seen_inputs.append(x.clone())
        timeline.call("candidate", next(i for i, call in enumerate(calls) if call["args"][0] is x))
        x.add_(1)  # an in-place kernel: its argument drifts unless it is put back

    def reference(args: list, kwargs: dict) -> None:
        timeline.call("reference", next(i for i, call in enumerate(calls) if call["args"][0] is args[0]))

    result = time_like_do_bench(
        candidate=candidate,
        reference=reference,
        sets=calls,
        flush_buffer=timeline.flush_buffer,
        budget_s=budget_s,
        min_iterations=min_iterations,
        max_iterations=max_iterations,
        min_launches=1,
        restore_keys=list(mutates),
        event_class=timeline.event_class,
        synchronize=timeline.synchronize,
        clock_warmup_s=0.0,
    )
    return result, timeline.entries, seen_inputs, drawn


def batches(entries: list) -> list[list]:
    """The timeline cut after every synchronize: do_bench waits for the device only there."""
    cut, current = [], []
    for entry in entries:
        current.append(entry)
        if entry == "sync":
            cut.append(current)
            current = []
    return cut


def test_it_is_do_bench_s_loop_no_wait_between_timed_calls():
    result, entries, _, _ = run_loop(min_iterations=3, max_iterations=6)
    parts = batches(entries)

    # Per side, do_bench's estimate: one call and a wait, then five flushed calls between two events.
    for side, (first, estimate) in zip(("reference", "candidate"), (parts[0:2], parts[2:4]), strict=True):
        assert first == ["record", ("call", side, 0), "record", "sync"]
        assert estimate == ["record", *(["flush", ("call", side, 0)] * ESTIMATE_CALLS), "record", "sync"]
    # Then two batches a side over the sets in turn, sides alternating which goes first, each a run of do_bench.
    timed = parts[4:]
    order = [batch[-3][1] for batch in timed]
    assert order == ["reference", "candidate", "candidate", "reference"]
    for batch in timed:
        _, side, set_index = batch[-3]
        calls = [entry for entry in batch if isinstance(entry, tuple)]
        assert {call[2] for call in calls} == {set_index} and {call[1] for call in calls} == {side}
        iterations = batch.count("record") // 2
        warm = batch[: warmup_calls(iterations)]
        assert warm == [("call", side, set_index)] * warmup_calls(iterations)  # no flush, no event
        body = batch[warmup_calls(iterations) : -1]
        assert body == ["flush", "record", ("call", side, set_index), "record"] * iterations
        assert batch[-1] == "sync" and batch.count("sync") == 1
    assert result["stop_reason"] == "do_bench" and result["spot_count"] == 0


def test_one_set_serves_both_batches_of_a_side():
    _, entries, _, _ = run_loop(sets=1)
    timed = batches(entries)[4:]

    assert [batch[-3][1:] for batch in timed] == [
        ("reference", 0),
        ("candidate", 0),
        ("candidate", 0),
        ("reference", 0),
    ]


def test_iterations_are_sized_from_its_own_estimate_of_a_call():
    # 4 ms over 2 sides x 2 batches: 1 ms a batch; a 0.1 ms call gets 10 (capped at 6), a 0.5 ms call 2 (then 3).
    result, _, _, _ = run_loop(cost_ms={"candidate": 0.5, "reference": 0.1}, min_iterations=3, max_iterations=6)

    assert len(result["reference_ms"]) == 2 * 6 and len(result["candidate_ms"]) == 2 * 3
    assert all(abs(value - 0.5) < 1e-9 for value in result["candidate_ms"])
    assert all(abs(value - 0.1) < 1e-9 for value in result["reference_ms"])
    assert result["event_ms_total"] == sum(result["candidate_ms"]) + sum(result["reference_ms"])


def test_the_time_limit_of_a_request_covers_its_calls_at_their_minimum():
    # What the trusted side's per-request time limit assumes (timed_requests.calls_at_most): a call just
    # short of LONG_CALL_MS on the device runs every batch at its minimum after the five-call estimate.
    short_of_long = 0.99 * LONG_CALL_MS
    _, entries, _, _ = run_loop(cost_ms=dict.fromkeys(("candidate", "reference"), short_of_long), budget_s=0.001)
    made = [entry for entry in entries if isinstance(entry, tuple)]

    for side in ("candidate", "reference"):
        assert sum(1 for call in made if call[1] == side) == calls_per_side(3)


def test_a_long_call_is_its_own_estimate_and_runs_fewer_timed_calls():
    # Its first call takes LONG_CALL_MS or more between its two events: no five-call estimate, and as few
    # as LONG_CALL_MIN_ITERATIONS timed calls a batch (do_bench times a 30 ms call three times).
    cost = dict.fromkeys(("candidate", "reference"), 2 * LONG_CALL_MS)
    result, entries, _, _ = run_loop(cost_ms=cost, budget_s=0.001)
    parts = batches(entries)

    # Each side's first call, then straight to the batches: no five-call estimate in between.
    assert parts[0] == ["record", ("call", "reference", 0), "record", "sync"]
    assert parts[1] == ["record", ("call", "candidate", 0), "record", "sync"]
    assert len(result["candidate_ms"]) == len(result["reference_ms"]) == 2 * LONG_CALL_MIN_ITERATIONS
    assert len(parts) == 2 + 4  # two first calls, four batches


def test_in_out_arguments_are_put_back_before_every_timed_call():
    _, _, seen, drawn = run_loop(mutates=[0])
    assert all(any(torch.equal(value, original) for original in drawn) for value in seen)

    _, _, drifting, _ = run_loop(mutates=())  # without a restore the values drift, as in a plain do_bench
    assert not all(any(torch.equal(value, original) for original in drawn) for value in drifting)


def test_a_candidate_call_that_launches_nothing_is_counted():
    launched, _, _, _ = run_loop(launches=1)
    idle, _, _, _ = run_loop(launches=0)

    assert launched["low_launch_calls"] == 0
    timed_and_estimated = len(idle["candidate_ms"]) + 1 + ESTIMATE_CALLS
    assert idle["low_launch_calls"] == timed_and_estimated


def test_every_sample_is_one_timed_call_between_its_own_two_events():
    result, _, _, _ = run_loop(cost_ms={"candidate": 0.25, "reference": 0.75})

    for side, cost in (("candidate", 0.25), ("reference", 0.75)):
        assert all(abs(value - cost) < 1e-12 for value in result[f"{side}_ms"])
    assert result["finite"] and not list(itertools.chain(result["candidate_tail_ms"], result["reference_tail_ms"]))

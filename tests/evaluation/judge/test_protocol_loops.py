"""The protocol stage's timers inside the sandbox, each the original harness's loop for a source:
triton.testing.do_bench's (untrusted/timing_do_bench.py: ATen and vLLM) and the cuBLAS tests' calls back to
back between two events (untrusted/timing_back_to_back.py).

These tests drive them with events, a flush and a synchronize that write what happens into one timeline, so
what is checked is the order of flushes, events, calls and waits: on a GPU it is that order, not the clock,
that decides which share of a call's host path lands inside its window.
"""

from __future__ import annotations

import itertools
import random
import time

import torch

from evaluation.judge.untrusted import guard, timing_back_to_back
from evaluation.judge.untrusted.timing_back_to_back import ORIGINAL_CALLS, time_back_to_back
from evaluation.judge.untrusted.timing_do_bench import (
    LONG_CALL_MIN_ITERATIONS,
    LONG_CALL_MS,
    RACING_CALL_MS,
    STEADY_STATE_CALLS,
    calls_per_side,
    do_bench_flush,
    time_like_do_bench,
    warmup_calls,
)


class Timeline:
    """Everything the loop does, in order: "flush", "record", "sync", ("call", side, set). Time is a
    counter that only calls advance (by their side's cost), so an event pair's elapsed time is the cost of
    the calls between its two records."""

    def __init__(self, cost_ms: dict[str, float], flush_ms: float = 0.0) -> None:
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
                timeline.now += flush_ms

        self.event_class, self.flush_buffer = Event, Flush()

    def synchronize(self) -> None:
        self.entries.append("sync")

    def call(self, side: str, set_index: int) -> None:
        self.entries.append(("call", side, set_index))
        self.now += self.cost_ms[side]


def run_loop(
    *,
    cost_ms=None,
    flush_ms=0.0,
    sets=2,
    budget_s=0.004,
    min_iterations=3,
    max_iterations=6,
    launches=1,
    mutates=(),
    loop=time_like_do_bench,
):
    timeline = Timeline(cost_ms or {"candidate": 0.1, "reference": 0.2}, flush_ms)
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

    result = loop(
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

    # One flush between two events (what an iteration costs besides its call), then per side its first call
    # between two events and a wait: the estimate that sizes its batches.
    assert parts[0] == ["record", "flush", "record", "sync"]
    for side, first in zip(("reference", "candidate"), parts[1:3], strict=True):
        assert first == ["record", ("call", side, 0), "record", "sync"]
    # Then two batches a side over the sets in turn, sides alternating which goes first, each a run of do_bench.
    timed = parts[3:]
    order = [batch[-3][1] for batch in timed]
    assert order == ["reference", "candidate", "candidate", "reference"]
    for batch in timed:
        _, side, set_index = batch[-3]
        calls = [entry for entry in batch if isinstance(entry, tuple)]
        assert {call[2] for call in calls} == {set_index} and {call[1] for call in calls} == {side}
        # Untimed iterations first, each exactly like a timed one, then the timed ones; their count is read
        # off the side's samples.
        iterations = len(result[f"{side}_ms"]) // 2
        untimed = batch.count("record") // 2 - iterations
        assert untimed == warmup_calls(iterations, estimate_ms=0.1 if side == "candidate" else 0.2) >= 1
        iteration = ["flush", "record", ("call", side, set_index), "record"]
        assert batch[:-1] == iteration * (iterations + untimed)
        assert batch[-1] == "sync" and batch.count("sync") == 1
    assert result["stop_reason"] == "do_bench" and result["spot_count"] == 0


def test_the_flush_is_do_bench_s_own_kernel_on_the_sandbox_s_byte_buffer():
    # do_bench zeroes 256 MB as int32 (Triton's get_empty_cache_for_benchmark); the sandbox's buffer is bytes.
    # The flush's duration is half of the host-device race the loop reproduces, so it runs do_bench's kernel.
    buffer = torch.ones(64, dtype=torch.uint8)
    flush = do_bench_flush(buffer)
    assert flush.__self__.dtype == torch.int32 and flush.__self__.data_ptr() == buffer.data_ptr()
    flush()
    assert int(buffer.sum()) == 0


def test_a_launch_bound_call_runs_untimed_iterations_until_the_device_leads_as_in_do_bench_s_long_loop():
    # A call shorter than RACING_CALL_MS races its host path against the flush: at least STEADY_STATE_CALLS
    # untimed iterations a batch, each exactly like a timed one; a longer call warms up a quarter as many.
    short = RACING_CALL_MS / 4
    result, entries, _, _ = run_loop(cost_ms={"candidate": short, "reference": 4 * RACING_CALL_MS})
    for batch in batches(entries)[3:]:
        _, side, _ = batch[-3]
        iterations = len(result[f"{side}_ms"]) // 2
        untimed = batch.count("record") // 2 - iterations
        if side == "candidate":
            assert untimed == max(STEADY_STATE_CALLS, warmup_calls(iterations, estimate_ms=RACING_CALL_MS))
        else:
            assert untimed == warmup_calls(iterations, estimate_ms=4 * RACING_CALL_MS) < STEADY_STATE_CALLS
        assert batch[:4] == ["flush", "record", ("call", side, batch[-3][2]), "record"]


def test_one_set_serves_both_batches_of_a_side():
    _, entries, _, _ = run_loop(sets=1)
    timed = batches(entries)[3:]

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


def test_the_flush_counts_in_what_a_timed_iteration_costs():
    # A 0.1 ms call behind a 0.4 ms flush costs 0.5 ms an iteration: 2 fit in a 1 ms batch (then 3), not 10.
    result, _, _, _ = run_loop(cost_ms=dict.fromkeys(("candidate", "reference"), 0.1), flush_ms=0.4, max_iterations=20)

    assert len(result["candidate_ms"]) == len(result["reference_ms"]) == 2 * 3


def test_the_loop_reports_its_flush_so_the_trusted_side_can_mark_launch_bound_cases():
    """timing_protocol.launch_bound: a case whose side runs under one flush is the launch race's outcome."""
    from evaluation.judge.timing_protocol import launch_bound

    result, _, _, _ = run_loop(flush_ms=0.066)
    assert abs(result["flush_ms"] - 0.066) < 1e-9
    assert launch_bound(0.004, 0.5, result["flush_ms"]) is True  # a 4 us candidate: either reading is possible
    assert launch_bound(0.5, 0.004, result["flush_ms"]) is True  # the reference's side races as well
    assert launch_bound(0.07, 0.5, result["flush_ms"]) is False  # past the race: both outlast a flush
    assert launch_bound(0.004, 0.5, None) is None  # no flush in the loop (cuBLAS's), nothing to say
    on_host_clock = time_like_do_bench(
        candidate=lambda x: None,
        reference=lambda args, kwargs: None,
        sets=[{"args": [torch.zeros(2)], "kwargs": {}}],
        flush_buffer=torch.zeros(8, dtype=torch.uint8),
        budget_s=0.001,
        min_iterations=1,
        max_iterations=2,
        min_launches=0,
        host_clock=True,
    )
    assert on_host_clock["flush_ms"] is None  # the interpreter: nothing races a flush


def test_the_time_limit_of_a_request_covers_its_calls_at_their_minimum():
    # What the trusted side's per-request time limit assumes (timed_requests.calls_at_most): a call just
    # short of LONG_CALL_MS on the device runs every batch at its minimum.
    # A launch-bound call at its minimum makes exactly the calls the limit assumes (the most untimed ones).
    for cost in (0.99 * LONG_CALL_MS, RACING_CALL_MS / 2):
        _, entries, _, _ = run_loop(cost_ms=dict.fromkeys(("candidate", "reference"), cost), budget_s=0.00001)
        made = [entry for entry in entries if isinstance(entry, tuple)]
        for side in ("candidate", "reference"):
            count = sum(1 for call in made if call[1] == side)
            assert count == calls_per_side(3) if cost < RACING_CALL_MS else count < calls_per_side(3)


def test_a_long_call_runs_fewer_timed_calls():
    # Its first call takes LONG_CALL_MS or more between its two events: as few as LONG_CALL_MIN_ITERATIONS
    # timed calls a batch (do_bench times a 30 ms call three times).
    cost = dict.fromkeys(("candidate", "reference"), 2 * LONG_CALL_MS)
    result, entries, _, _ = run_loop(cost_ms=cost, budget_s=0.001)
    parts = batches(entries)

    assert parts[1] == ["record", ("call", "reference", 0), "record", "sync"]
    assert parts[2] == ["record", ("call", "candidate", 0), "record", "sync"]
    assert len(result["candidate_ms"]) == len(result["reference_ms"]) == 2 * LONG_CALL_MIN_ITERATIONS
    assert len(parts) == 3 + 4  # the flush, two first calls, four batches


def test_in_out_arguments_are_put_back_before_every_timed_call():
    _, _, seen, drawn = run_loop(mutates=[0])
    assert all(any(torch.equal(value, original) for original in drawn) for value in seen)

    _, _, drifting, _ = run_loop(mutates=())  # without a restore the values drift, as in a plain do_bench
    assert not all(any(torch.equal(value, original) for original in drawn) for value in drifting)


def test_a_candidate_call_that_launches_nothing_is_counted():
    launched, _, _, _ = run_loop(launches=1)
    idle, _, _, _ = run_loop(launches=0)

    assert launched["low_launch_calls"] == 0
    timed_and_first = len(idle["candidate_ms"]) + 1
    assert idle["low_launch_calls"] == timed_and_first


def test_every_sample_is_one_timed_call_between_its_own_two_events():
    result, _, _, _ = run_loop(cost_ms={"candidate": 0.25, "reference": 0.75})

    for side, cost in (("candidate", 0.25), ("reference", 0.75)):
        assert all(abs(value - cost) < 1e-12 for value in result[f"{side}_ms"])
    assert result["finite"] and not list(itertools.chain(result["candidate_tail_ms"], result["reference_tail_ms"]))


# --- the original cuBLAS tests' loop: calls back to back between two events, no flush -----------------------


def test_the_cublas_loop_is_calls_back_to_back_between_two_events_without_a_flush():
    result, entries, _, _ = run_loop(loop=time_back_to_back, cost_ms={"candidate": 0.01, "reference": 0.02})
    parts = batches(entries)

    assert "flush" not in entries
    # Per side its first call between two events and a wait (the estimate), then two batches a side, sides
    # alternating which goes first: warm-up calls, then the calls between one pair of events, one wait.
    for side, first in zip(("reference", "candidate"), parts[0:2], strict=True):
        assert first == ["record", ("call", side, 0), "record", "sync"]
    timed = parts[2:]
    assert [batch[-3][1] for batch in timed] == ["reference", "candidate", "candidate", "reference"]
    for batch in timed:
        _, side, set_index = batch[-3]
        first_record = batch.index("record")
        warm, body = batch[:first_record], batch[first_record:]
        calls = len(body) - 3
        assert warm == [("call", side, set_index)] * timing_back_to_back.warmup_calls(calls)
        assert body == ["record", *([("call", side, set_index)] * calls), "record", "sync"]
    # 4 ms over four batches: 1 ms a batch fits the original's 100 calls of 0.01 ms, and 50 of 0.02 ms.
    assert [batch.count(("call", "candidate", 0)) for batch in timed if batch[-3][1] == "candidate"][0] == (
        ORIGINAL_CALLS + timing_back_to_back.warmup_calls(ORIGINAL_CALLS)
    )
    # One sample a batch: its mean per call.
    assert len(result["candidate_ms"]) == len(result["reference_ms"]) == 2
    assert all(abs(value - 0.01) < 1e-9 for value in result["candidate_ms"])
    assert all(abs(value - 0.02) < 1e-9 for value in result["reference_ms"])
    assert result["stop_reason"] == "back_to_back"


def test_the_cublas_loop_runs_fewer_calls_of_a_long_call_never_under_its_fewest():
    result, entries, _, _ = run_loop(loop=time_back_to_back, cost_ms=dict.fromkeys(("candidate", "reference"), 3.0))
    made = [entry for entry in entries if isinstance(entry, tuple)]

    fewest = timing_back_to_back.FEWEST_CALLS
    for side in ("candidate", "reference"):
        assert sum(1 for call in made if call[1] == side) == timing_back_to_back.calls_per_side(fewest)
    assert result["candidate_ms"] == [3.0, 3.0]


def test_the_cublas_loop_puts_in_out_arguments_back_before_each_batch_not_between_its_calls():
    # The original runs its 100 calls on the same buffers: a copy between them would be timed. Each batch
    # starts from the drawn values, then they drift within it.
    seen = []

    def candidate(x):
        guard.STATE.launches += 1
        seen.append(float(x[0]))
        x.add_(1)

    time_back_to_back(
        candidate=candidate,
        reference=lambda args, kwargs: None,
        sets=[{"args": [torch.zeros(2)], "kwargs": {}}],
        flush_buffer=None,
        budget_s=0.004,
        min_iterations=4,
        max_iterations=10,
        min_launches=1,
        restore_keys=[0],
        host_clock=True,
    )
    # The first call and the two batches start from the drawn zero; within a batch the value climbs by one.
    assert seen.count(0.0) == 3 and max(seen) > 1
    assert all(after in (before + 1, 0.0) for before, after in itertools.pairwise(seen))


def test_the_cublas_loop_counts_every_call_that_launches_nothing_but_warm_ups():
    launched, _, _, _ = run_loop(loop=time_back_to_back, launches=1)
    idle, entries, _, _ = run_loop(loop=time_back_to_back, launches=0)

    timed_calls = 0
    for batch in batches(entries)[2:]:
        if batch[-3][1] == "candidate":
            timed_calls += len(batch[batch.index("record") :]) - 3
    assert launched["low_launch_calls"] == 0
    assert idle["low_launch_calls"] == 1 + timed_calls  # its first call, and every call between the events


# --- the device-time loop's probe call: its kernels' device time without its host time ----------------------


def test_a_probe_call_brackets_each_launch_at_the_launcher_and_sums_their_windows():
    from triton import knobs

    from evaluation.judge.backends import HostClockEvent
    from evaluation.judge.untrusted.timing import kernel_time_probe

    class Kernel:
        """JITFunction.run as Triton 3.6 runs a compiled launch: its own host work (binding, the cache key,
        the grid), then the launcher, which calls the launch hooks right around the driver's launch."""

        def run(self, *args, grid, warmup, **kwargs):
            time.sleep(0.01)  # JITFunction.run's host work: outside the window
            if warmup:
                return
            if kwargs.get("hooks", True):
                knobs.runtime.launch_enter_hook(None)
            timeline.append(("kernel", kwargs["ms"]))
            sleep_until = time.perf_counter() + kwargs["ms"] / 1000
            while time.perf_counter() < sleep_until:
                pass
            if kwargs.get("hooks", True):
                knobs.runtime.launch_exit_hook(None)

    Kernel.run = guard._wrap_run(Kernel.run, Kernel)
    timeline: list = []
    kernel = Kernel()

    def candidate(x):
        time.sleep(0.02)  # host time of the call (a readback's wait, the audit): outside every window
        kernel.run(x, grid=(1,), warmup=False, ms=2.0)
        kernel.run(x, grid=(1,), warmup=True, ms=0.0)  # Triton's warm-up path launches nothing: no window
        kernel.run(x, grid=(1,), warmup=False, ms=3.0)
        return x

    def hold_before_window():
        # A device-side spin in the judge; here the timeline shows that it comes before each window opens,
        # so a launch on an idle device (after a readback's wait) queues behind it, and that it is not audited.
        assert guard.STATE.paused
        timeline.append(("hold", None))

    argument = torch.zeros(1)
    measured, returned, note = kernel_time_probe(
        candidate, {"args": [argument], "kwargs": {}}, HostClockEvent, lambda: None, window_hold=hold_before_window
    )

    assert 5.0 <= measured < 10.0  # the two launches, not the call's 20 ms nor run's 2 x 10 ms of host time
    assert note == ""
    assert returned is argument  # what the call returned, for the probe's spot check
    assert timeline == [("hold", None), ("kernel", 2.0), ("hold", None), ("kernel", 3.0)]
    assert guard.STATE.launch_windows is None and guard.STATE.window_hold is None  # other calls record nothing
    assert _open_window_hooked() is False  # the launcher's hooks are on for the probe call alone
    nothing_launched = kernel_time_probe(lambda x: x, {"args": [argument], "kwargs": {}}, HostClockEvent, lambda: None)
    assert nothing_launched == (None, argument, "no figure: the call launched no Triton kernel")

    # A launch whose launcher opened no window would make the sum too small (a floor the kernel does not
    # hold): no figure at all then, and the trusted side compares with the timed window alone.
    def one_launch_without_hooks(x):
        kernel.run(x, grid=(1,), warmup=False, ms=1.0)
        kernel.run(x, grid=(1,), warmup=False, ms=1.0, hooks=False)
        return x

    unbracketed = kernel_time_probe(
        one_launch_without_hooks, {"args": [argument], "kwargs": {}}, HostClockEvent, lambda: None
    )
    assert unbracketed == (None, argument, "no figure: a launch made no window")


def test_a_probe_call_holds_the_stream_before_its_first_launches_only():
    # The holds before a probe's launches are device time inside the exclusive hold: one call of hundreds of
    # launches must not spin hundreds of times. Each probe call gets its own count.
    from evaluation.judge.backends import HostClockEvent
    from evaluation.judge.untrusted.clock import PROBE_LAUNCH_HOLD_MS, PROBE_LAUNCH_HOLDS, StreamHolds

    spun: list[int] = []

    def spin(cycles: int) -> None:  # a stand-in for the device's busy wait: a millisecond a million cycles
        spun.append(cycles)
        time.sleep(cycles / 1e9)

    holds = StreamHolds(spin, HostClockEvent, lambda: None)
    spun.clear()
    hold = holds.launch_holds()
    for _ in range(PROBE_LAUNCH_HOLDS + 5):
        hold()
    assert len(spun) == PROBE_LAUNCH_HOLDS and len(set(spun)) == 1
    assert 0.5 * PROBE_LAUNCH_HOLD_MS < spun[0] / holds.cycles_per_ms < 1.5 * PROBE_LAUNCH_HOLD_MS
    holds.launch_holds()()  # the next probe call
    assert len(spun) == PROBE_LAUNCH_HOLDS + 1


def _open_window_hooked() -> bool:
    from triton import knobs

    return guard._open_window in knobs.runtime.launch_enter_hook.calls


# --- spot checks: a call of a few random cases comes back, one whose inputs are the drawn set ---------------


def _doubling_in_place(x: torch.Tensor) -> torch.Tensor:
    guard.STATE.launches += 1
    returned = x * 2
    x.add_(1)  # its argument drifts unless it is put back
    return returned


def _spotted(loop, seed: int, spot_checks: int = 1, keep_alive: list | None = None) -> dict:
    return loop(
        candidate=_doubling_in_place,
        reference=lambda args, kwargs: None,
        sets=[{"args": [torch.full((4,), 3.0)], "kwargs": {}}],
        flush_buffer=None,
        budget_s=0.004,
        min_iterations=4,
        max_iterations=10,
        min_launches=1,
        restore_keys=[0],
        host_clock=True,
        spot_checks=spot_checks,
        rng=random.Random(seed),
        keep_alive=keep_alive,
    )


def test_a_spot_checked_case_sends_one_call_taken_on_its_drawn_inputs_in_either_loop():
    # The protocol stage's calls are compared with nothing while timed; on a few random cases one call comes
    # back as a spot (timing_protocol.with_spot_cases). The do_bench loop puts in-out arguments back before
    # every timed call, so any of them will do; the back-to-back loop only before a batch, so a batch's first.
    for loop in (time_like_do_bench, time_back_to_back):
        for seed in range(6):
            kept: list = []
            result = _spotted(loop, seed, keep_alive=kept)
            assert result["spot_count"] == 1 and len(result["_spots"]) == 1
            spot = result["_spots"][0]
            assert spot["set"] == 0
            assert torch.equal(spot["before"]["args"][0], torch.full((4,), 3.0))  # the drawn set, put back
            assert torch.equal(spot["returned"], torch.full((4,), 6.0))
            assert torch.equal(spot["args"][0], torch.full((4,), 4.0))  # the argument after the call
            assert kept and kept[0] is not spot["returned"]  # the call's own return kept alive; the spot a copy
        assert _spotted(loop, 0, spot_checks=0)["_spots"] == []  # cases not chosen send none


def test_a_spot_checked_case_times_its_reference_on_sets_of_its_own():
    # On a spot-checked case the reference has sets of its own (timed_requests.prepare_case): its answers to
    # the candidate's inputs would otherwise lie in freed memory or a shared out= buffer, for a kernel doing
    # part of the work to pick up.
    candidate_set = {"args": [torch.full((4,), 3.0)], "kwargs": {}}
    reference_set = {"args": [torch.full((4,), 5.0)], "kwargs": {}}
    for loop in (time_like_do_bench, time_back_to_back):
        seen = []
        loop(
            candidate=_doubling_in_place,
            reference=lambda args, kwargs, seen=seen: seen.append(args[0]),
            sets=[candidate_set],
            reference_sets=[reference_set],
            flush_buffer=None,
            budget_s=0.004,
            min_iterations=4,
            max_iterations=10,
            min_launches=1,
            restore_keys=[0],
            host_clock=True,
        )
        assert seen and all(tensor is reference_set["args"][0] for tensor in seen)


def test_the_original_loops_call_triton_as_a_plain_process_does_and_still_count_launches(monkeypatch):
    """guard.bare_launches, around the do_bench and back-to-back loops: JITFunction.run is Triton's own for
    their duration (the judge's wrapper costs host time a plain process does not spend, which a launch-bound
    call would read as the kernel's), and each compiled launch is counted by Triton's launcher hook instead;
    the wrapper is back afterwards, and a replacement made meanwhile is kept for Integrity to name."""
    from triton import knobs
    from triton.runtime.jit import JITFunction

    original = JITFunction.__dict__["run"]
    monkeypatch.setattr(JITFunction, "run", guard._wrap_run(original, JITFunction))
    wrapper = JITFunction.__dict__["run"]
    integrity = guard.Integrity({"JITFunction.run": (JITFunction, wrapper)})
    guard.STATE.reset(ghost=False)
    try:
        with guard.bare_launches():
            assert JITFunction.__dict__["run"] is original
            for _ in range(3):
                knobs.runtime.launch_enter_hook(None)  # what Triton's C launcher calls before each launch
        assert guard.STATE.launches == 3
        # (Only the launch hooks' part of Integrity: other tests of this process may leave gc callbacks.)
        assert JITFunction.__dict__["run"] is wrapper
        assert not [problem for problem in integrity.violations() if "launch hook" in problem]
        knobs.runtime.launch_enter_hook(None)
        assert guard.STATE.launches == 3  # counted there only: elsewhere the wrapper counts

        def impostor(self, *args, grid, warmup, **kwargs):
            return None

        with guard.bare_launches():
            JITFunction.run = impostor
        assert JITFunction.__dict__["run"] is impostor
        assert "JITFunction.run (launch hook) was replaced" in integrity.violations()
    finally:
        guard.STATE.reset(ghost=False)
    assert guard._count_launch not in knobs.runtime.launch_enter_hook.calls


def test_interpreted_launches_are_still_counted_inside_the_original_loops(monkeypatch):
    """The interpreter has no launcher hooks: its launches keep the wrapper, inside bare_launches too."""
    import triton
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction

    monkeypatch.setenv("TRITON_INTERPRET", "1")

    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + 1, mask=mask)

    assert isinstance(add_one, InterpretedFunction)
    original = InterpretedFunction.__dict__["run"]
    monkeypatch.setattr(InterpretedFunction, "run", guard._wrap_run(original, InterpretedFunction, interpreted=True))
    x = torch.zeros(8)
    guard.STATE.reset(ghost=False)
    try:
        with guard.bare_launches():
            add_one[(1,)](x, 8, BLOCK=8)
        assert guard.STATE.launches == 1 and x.tolist() == [1.0] * 8
    finally:
        guard.STATE.reset(ghost=False)


# --- a compiled handle's launches: compiled = kernel.warmup(...); compiled[grid](...) -------------------------


def _compiled_kernel_with_launcher(launched: list):
    """A CompiledKernel as Triton 3.6 builds one, whose driver launcher (``run``, set by _init_handles on a
    GPU) records its launches: the interpreter compiles nothing, so only the launcher stands in."""
    from triton import knobs
    from triton.compiler.compiler import CompiledKernel

    compiled = CompiledKernel.__new__(CompiledKernel)
    compiled.module, compiled.function, compiled.packed_metadata = "module", "function", "metadata"  # loaded
    compiled.launch_metadata = lambda grid, stream, *args: None

    def launcher(grid_0, grid_1, grid_2, stream, function, metadata, launch_metadata, enter, leave, *args):
        if enter is not None:
            enter(launch_metadata)
        args[0].add_(1)  # the kernel's work
        launched.append((grid_0, stream))
        if leave is not None:
            leave(launch_metadata)

    compiled._run = launcher
    assert knobs.runtime.launch_enter_hook is not None  # Triton's hook chain, always passed to the launcher
    return compiled


def test_a_compiled_handles_launches_are_counted_ghosted_and_windowed(monkeypatch):
    """``compiled[grid](...)`` goes through CompiledKernel.__getitem__ and the C launcher, never
    JITFunction.run: the judge counts it there too (a call launching only this way is not 'no Triton
    kernel'), turns it into a no-op in a ghost replay, and brackets it in a probe call's window."""
    from triton.compiler.compiler import CompiledKernel

    from evaluation.judge.backends import HostClockEvent
    from evaluation.judge.untrusted.timing import kernel_time_probe

    original = CompiledKernel.__dict__["__getitem__"]
    monkeypatch.setattr(CompiledKernel, "__getitem__", guard._wrap_compiled_getitem(original))
    launched: list = []
    compiled = _compiled_kernel_with_launcher(launched)
    runner = compiled[(4, 1, 1)]  # kept, as a candidate that saves the launch path keeps it
    x = torch.zeros(2)
    try:
        guard.STATE.reset(ghost=False)
        runner(x, stream=7)
        compiled[(4, 1, 1)](x, stream=7)
        assert guard.STATE.launches == 2 and x.tolist() == [2.0, 2.0] and launched == [(4, 7), (4, 7)]

        guard.STATE.reset(ghost=True)
        runner(x, stream=7)  # a ghost replay: counted, not run
        assert guard.STATE.launches == 1 and x.tolist() == [2.0, 2.0] and len(launched) == 2

        guard.STATE.reset(ghost=False)

        def candidate(y):
            runner(y, stream=7)
            return y

        measured, returned, note = kernel_time_probe(
            candidate, {"args": [x], "kwargs": {}}, HostClockEvent, lambda: None
        )
        assert measured is not None and note == "" and returned is x
    finally:
        guard.STATE.reset(ghost=False)


def test_a_compiled_handle_inside_the_original_loops_is_counted_once_by_the_launcher_hook(monkeypatch):
    """bare_launches: CompiledKernel.__getitem__ is Triton's own meanwhile, a runner the candidate kept steps
    aside, and the launcher's hook counts each launch once; afterwards the wrapper is back for Integrity."""
    from triton.compiler.compiler import CompiledKernel

    original = CompiledKernel.__dict__["__getitem__"]
    monkeypatch.setattr(CompiledKernel, "__getitem__", guard._wrap_compiled_getitem(original))
    wrapper = CompiledKernel.__dict__["__getitem__"]
    integrity = guard.Integrity({"CompiledKernel.__getitem__": (CompiledKernel, wrapper)})
    launched: list = []
    compiled = _compiled_kernel_with_launcher(launched)
    kept = compiled[(1, 1, 1)]
    x = torch.zeros(1)
    guard.STATE.reset(ghost=False)
    try:
        with guard.bare_launches():
            assert CompiledKernel.__dict__["__getitem__"] is original
            kept(x, stream=0)
            compiled[(1, 1, 1)](x, stream=0)
        assert guard.STATE.launches == 2 and x.item() == 2.0
        assert CompiledKernel.__dict__["__getitem__"] is wrapper
        assert not [problem for problem in integrity.violations() if "launch hook" in problem]
        monkeypatch.setattr(CompiledKernel, "__getitem__", original)
        assert "CompiledKernel.__getitem__ (launch hook) was replaced" in integrity.violations()
    finally:
        guard.STATE.reset(ghost=False)

"""What both timing stages share: shipping a chunk of cases' rotating input sets, timing them back to back
under one exclusive hold of the device, and refusing what a timed loop's report must not say.

The device-time stage (timing_trusted.py: a few large cases, the timed stream held, the dispatch audit on)
and the protocol stage (timing_protocol.py: every timed case, the latency a caller sees, as the paper's
harness measures it) differ only in which cases they time, the loop's options, and what they record from a
report; the requests, the hold and the checks of a report are the same, here.

One exclusive hold serves both stages where it can: the protocol stage's first chunk is drawn and loaded
ahead (ship_ahead, before the device-time stage's sets) and its loops ride in the device-time stage's hold,
right after that stage's own loops (_time_chunk). Each exclusive hold stops every other judge on the host
and first waits for their shared holds to drain: on the H200 with 12 judges the protocol stage's own holds
added ~110 such drains (~0.3 s each) and 110 clock spin-ups to a 110-kernel submission.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from dataclasses import dataclass, field
from typing import Any

from evaluation.catalog.spec import Call, Case
from evaluation.judge import protocol, wire
from evaluation.judge.compare import tensor_bytes
from evaluation.judge.context import JudgementContext, TimingOptions, protocol_timer
from evaluation.judge.inputs import call_bytes
from evaluation.judge.session import CORRECTNESS_NICE, TIMING_NICE
from evaluation.judge.timing_spots import sets_key, timing_set_seed
from evaluation.judge.timing_stats import hidden_work_message, low_quantile, median_iqr, roofline_floor_ms, sets_for
from evaluation.judge.untrusted.clock import CLOCK_WARMUP_S
from evaluation.judge.untrusted.timing_back_to_back import calls_per_side as back_to_back_calls_per_side
from evaluation.judge.untrusted.timing_do_bench import calls_per_side as do_bench_calls_per_side
from evaluation.judge.verdicts import DEVICE_FULL, Verdict, check_integrity, derive_seed, device_was_full_by_our_reading


@dataclass
class TimedCase:
    """One case timed by the sandbox, its report checked: what a stage records from it."""

    tier: str
    case: Case
    first_call: Call  # the first candidate set (the roofline's byte count)
    reply: protocol.Timed
    host_ms: float  # the trusted side's clock around the whole request
    sent_bytes: int
    sets: int
    candidate_tail_ms: float = 0.0  # the fast tenth of end -> settled, per side (hidden work)
    reference_tail_ms: float = 0.0


def timed_grid(judgement: JudgementContext) -> list[tuple[str, Case]]:
    """Every case of the original's timed grid this judgement ran (held-out cases are never timed): the
    protocol stage times them all, the device-time stage a few of them."""
    return [(tier, case) for tier, case in judgement.cases if case.timed and tier != "held_out"]


def roofline_floor_of(judgement: JudgementContext, item: TimedCase) -> float | None:
    """The fastest a timed case's call could physically run on this chip (timing_stats.roofline_floor_ms)."""
    job = judgement.job
    return roofline_floor_ms(
        judgement.spec,
        item.case,
        item.first_call,
        outputs_like(judgement, item.case, item.first_call),
        job.peak_bandwidth_bytes_per_s,
        job.peak_flops_by_dtype,
    )


def outputs_like(judgement: JudgementContext, case: Any, call: Call) -> tuple[Any, ...]:
    """The expected outputs' shapes and dtypes (kept on "meta" from the correctness pass: no reference rerun)."""
    known = judgement.expected_meta.get(case.case_id)
    if known is not None:
        return known
    try:
        return judgement.expected(case, judgement.make_call(case, 0))
    except Exception:
        return ()


@dataclass
class ShippedChunk:
    """A chunk of one stage's cases whose input sets the sandbox already holds (_ship_chunk), drawn ahead of
    that stage (ship_ahead) to be timed in the next exclusive hold this judgement takes."""

    options: TimingOptions
    entries: list[tuple[Any, ...]]  # (tier, case, request, first_call, sent_bytes, sets): _ship_chunk's
    out_of_time: bool  # the budget ran out before the rest of the stage's cases were drawn
    shipping_s: float  # drawing and loading its sets
    # Set once its loops ran in another stage's hold (unchecked: its own stage checks them, in its order).
    timed: list[TimedCase] | None = None
    hold_s: float = 0.0  # the host's seconds of its loops inside that hold
    # A request of its loops that ended the sandbox's usefulness (it died, hung, or its harness broke).
    failure: Verdict | None = field(default=None, repr=False)


def ship_ahead(
    judgement: JudgementContext, cases: list[tuple[str, Case]], options: TimingOptions, chunk_bytes: int | None
) -> None:
    """Draw and load the first chunk of ``cases`` now, before another stage takes its exclusive hold: that
    hold then times this chunk's loops right after its own (_time_chunk), and ``time_cases`` for
    ``options.stage`` starts from their reports. One hold instead of two: each exclusive hold first waits for
    every other judge's shared holds to drain while the turnstile keeps them all out, then stops them all,
    and its first case spins the device's clocks up. The loops, their requests and their checks are the
    ones ``time_cases`` runs; only the hold they run in is shared."""
    if not cases:
        return
    started = time.perf_counter()
    entries, out_of_time = _ship_chunk(judgement, list(cases), options, chunk_bytes)
    judgement.shipped_ahead[options.stage] = ShippedChunk(
        options, entries, out_of_time, shipping_s=time.perf_counter() - started
    )


def seconds_in_other_holds(judgement: JudgementContext) -> float:
    """The host's seconds that chunks shipped ahead spent in another stage's exclusive hold (that stage's
    clock ran meanwhile; the seconds are the chunks' own stage's)."""
    return sum(chunk.hold_s for chunk in judgement.shipped_ahead.values())


def time_cases(
    judgement: JudgementContext,
    cases: list[tuple[str, Case]],
    options: TimingOptions,
    chunk_bytes: int | None = None,
) -> list[TimedCase]:
    """Time ``cases`` with ``options``, chunk by chunk: a chunk's sets drawn under one shared hold and
    shipped in one request (the sandbox puts them on the device), then its timed loops back to back while
    this judgement holds the device alone, then each report checked (raising the Verdict a report calls
    for). With ``chunk_bytes``, a chunk holds about that many bytes of sets; without, every case is one
    chunk. Each stage (``options.stage``) draws its own input sets. A chunk of this stage shipped ahead
    (ship_ahead, from the front of the same ``cases``) comes first: its loops already ran in another stage's
    hold, or run now in one of their own. Fewer reports than cases: the judgement's budget ran out first
    (the stage's check says so)."""
    timed: list[TimedCase] = []
    queue = list(cases)
    ahead = judgement.shipped_ahead.pop(options.stage, None)
    if ahead is not None:
        shipped = {entry[1].case_id for entry in ahead.entries}
        queue = [(tier, case) for tier, case in queue if case.case_id not in shipped]
        if ahead.timed is None:
            timed += _time_chunk(judgement, ahead.entries, options) if ahead.entries else []
        else:
            _record_and_check(judgement, ahead.timed, options)
            timed += ahead.timed
        if ahead.out_of_time:
            judgement.check(options.stage, "failed", "the budget ran out before every case was timed")
            return timed
    while queue:
        chunk, out_of_time = _ship_chunk(judgement, queue, options, chunk_bytes)
        if chunk:
            timed += _time_chunk(judgement, chunk, options)
        if out_of_time:
            judgement.check(options.stage, "failed", "the budget ran out before every case was timed")
            break
    return timed


def _ship_chunk(
    judgement: JudgementContext, queue: list[tuple[str, Case]], options: TimingOptions, chunk_bytes: int | None
) -> tuple[list[tuple[Any, ...]], bool]:
    """Draw the next chunk's sets (taken off ``queue``) and load them into the sandbox. Each lock hold and
    each request costs a wait behind other judges' timers: one of each per chunk, not per case (on the
    H200 the protocol stage's ~5,700 cases spent 312 judge-seconds drawing and loading one at a time).
    Returns the chunk's entries for _time_chunk and whether the budget ran out first."""
    started = time.perf_counter()
    encoder = wire.Encoder()
    drawn: list[tuple[Any, ...]] = []
    loads: list[tuple[str, tuple[Any, ...], tuple[Any, ...]]] = []
    draws: list[protocol.SetsToDraw] = []  # cases whose sets the sandbox draws itself
    chunk_sent, out_of_time = 0, False
    with judgement.session.device_shared("timing_sets"):
        while queue:
            if judgement.session.remaining() < 5:
                out_of_time = True
                break
            if drawn and chunk_bytes is not None and chunk_sent >= chunk_bytes:
                break
            if drawn:
                judgement.session.yield_to_timer("timing_sets")  # a chunk's draws take a while
            tier, case = queue.pop(0)
            blobs_before = len(encoder.blobs)
            to_draw = sets_to_draw_in_sandbox(judgement, case, options)
            if to_draw is not None:
                draw, request, first_call = to_draw
                draws.append(draw)
                # Sized by what the sandbox will hold, though none of it crosses the pipe.
                chunk_sent += tensor_bytes([first_call.args, first_call.kwargs]) * len(draw.seeds)
                drawn.append((tier, case, request, first_call, 0, len(draw.seeds)))
                continue
            key, candidate_sets, reference_sets, request, first_call = prepare_case(judgement, case, options, encoder)
            sent_bytes = sum(len(blob) for blob in encoder.blobs[blobs_before:])
            loads.append((key, candidate_sets, reference_sets))
            drawn.append((tier, case, request, first_call, sent_bytes, len(candidate_sets)))
            chunk_sent += sent_bytes
    if draws:
        counts = judgement.environment.setdefault("timing_sets_drawn_by_sandbox", {})
        counts[options.stage] = counts.get(options.stage, 0) + len(draws)
    if drawn:
        load = protocol.LoadTimingSets(
            keys=tuple(key for key, _, _ in loads),
            candidate_sets=tuple(candidate for _, candidate, _ in loads),
            reference_sets=tuple(reference for _, _, reference in loads),
            operator_id=judgement.spec.operator_id if draws else "",
            draws=tuple(draws),
        )
        first_tier, first_case = drawn[0][0], drawn[0][1]
        # The sandbox puts them on the device now: not inside the exclusive hold.
        loaded: protocol.SetsLoaded = judgement.session.request(load, encoder.blobs, first_case, first_tier, gpu=True)[
            0
        ]
        if not loaded.ok:
            raise Verdict(
                "error",
                f"timing case {first_case.case_id} (and {len(drawn) - 1} more): the sandbox could not load their "
                f"input sets: {loaded.error[-500:]}",
            )
    judgement.add_stage(f"{options.stage}.input_sets", time.perf_counter() - started)
    return drawn, out_of_time


def _time_chunk(judgement: JudgementContext, chunk: list[tuple[Any, ...]], options: TimingOptions) -> list[TimedCase]:
    """Time ``chunk``'s loops under one exclusive hold, then every chunk of another stage shipped ahead
    (ship_ahead) in the same hold; then check ``chunk``'s reports. The riders' reports are checked by their
    own stage later, so the verdicts come in the stages' order; but a rider's request that ended the sandbox
    (it died, hung past its limit, its harness broke) ends the judgement here, once ``chunk``'s own reports
    are checked: nothing after it could run in that process."""
    riders = [
        ahead for stage, ahead in judgement.shipped_ahead.items() if stage != options.stage and ahead.timed is None
    ]
    reniced = judgement.environment.get("sandbox", {}).get("nice") == CORRECTNESS_NICE
    with judgement.session.device_exclusive(), own_priority(TIMING_NICE if reniced else None):
        if reniced:
            judgement.session.sandbox.set_priority(TIMING_NICE)  # the timed loops wait for no other judge's CPU work
        timed = _run_loops(judgement, chunk, options, spin_clocks_up=True)
        for rider in riders:
            rider_started = time.perf_counter()
            try:
                # The device is still busy with this hold's loops: no clock spin-up before the rider's first.
                rider.timed = _run_loops(judgement, rider.entries, rider.options, spin_clocks_up=False)
            except Verdict as verdict:
                rider.timed, rider.failure = [], verdict
            rider.hold_s = time.perf_counter() - rider_started
            if rider.failure is not None:
                break
        if reniced:
            judgement.session.sandbox.set_priority(CORRECTNESS_NICE)
    _record_and_check(judgement, timed, options)
    for rider in riders:
        if rider.failure is not None:
            raise rider.failure
    return timed


def _run_loops(
    judgement: JudgementContext, chunk: list[tuple[Any, ...]], options: TimingOptions, spin_clocks_up: bool
) -> list[TimedCase]:
    """Inside the exclusive hold: one ``time`` request a case of ``chunk``, back to back, unchecked."""
    timed: list[TimedCase] = []
    for index, (tier, case, request, first_call, sent_bytes, sets) in enumerate(chunk):
        # Only a hold's first case spins the clocks up; the others follow it with the device still busy.
        request = dataclasses.replace(request, clock_warmup_s=CLOCK_WARMUP_S if spin_clocks_up and index == 0 else 0.0)
        host_started = time.perf_counter()
        # Bounded like a correctness call, for every call a timed loop may make (a kernel that sleeps
        # only once timed would otherwise hold the GPU alone for the rest of its budget).
        limit_s = options.budget_s_per_case + judgement.job.call_limit_s(
            judgement.reference_seconds.get(case.case_id, 0.0), calls=calls_at_most(options, request.window)
        )
        reply, _ = judgement.session.request(request, [], case, tier, call_limit_s=limit_s)
        host_ms = (time.perf_counter() - host_started) * 1000
        timed.append(TimedCase(tier, case, first_call, reply, host_ms, sent_bytes, sets))
    return timed


def _record_and_check(judgement: JudgementContext, timed: list[TimedCase], options: TimingOptions) -> None:
    """After the hold: the stage breakdown's loop figures, then each report checked (check_report)."""
    for item in timed:
        judgement.add_stage(f"{options.stage}.sandbox_round_trip", item.host_ms / 1000)
        for seconds, part in ((item.reply.loop_s, "loop"), (item.reply.prep_s, "prep")):
            if seconds is not None:
                judgement.add_stage(f"sandbox.{options.stage}_{part}", seconds)
        checks_started = time.perf_counter()
        check_report(item, judgement.job.device_type)
        judgement.add_stage(f"{options.stage}.checks", time.perf_counter() - checks_started)


def calls_at_most(options: TimingOptions, window: str) -> int:
    """Both sides' calls in one timed request of ``window``'s loop when every round or batch runs its
    minimum (a slow case)."""
    if window == "do_bench":
        return 2 * do_bench_calls_per_side(options.min_iterations)
    if window == "back_to_back":
        return 2 * back_to_back_calls_per_side()
    return 2 * (options.min_iterations + options.sets_per_side + 2)


def check_report(item: TimedCase, device_type: str) -> None:
    """Raise the Verdict a timed loop's report calls for: its error, an integrity violation, event times
    beyond the host's clock, hidden work, work on another stream, compute outside Triton, no launch."""
    reply, case, tier = item.reply, item.case, item.tier
    if not reply.ok:
        if device_was_full_by_our_reading(reply.error, device_type):
            raise Verdict(
                "error",
                f"timing case {case.case_id}: {DEVICE_FULL}",
                case=case,
                tier=tier,
                message=reply.error[-2000:],
                retryable=True,
            )
        raise Verdict(
            "failed_runtime",
            f"timing case {case.case_id} raised: {reply.error.strip().splitlines()[-1][:400]}",
            case=case,
            tier=tier,
            message=reply.error[-2000:],
        )
    check_integrity(list(reply.integrity), case, tier)
    candidate_ms, reference_ms = list(reply.candidate_ms), list(reply.reference_ms)
    event_total = sum(candidate_ms) + sum(reference_ms)
    if not candidate_ms or not reference_ms or not reply.finite:
        raise Verdict("error", f"timing case {case.case_id} returned no usable samples")
    if event_total > item.host_ms:
        raise crosscheck_failure(
            item,
            f"reported {event_total:.3f} ms of events in {item.host_ms:.3f} ms of host time",
            "event times exceed the host-measured round trip",
        )
    # Low tails, not medians: work hidden on another stream lengthens every call's tail, host jitter only
    # some. On the H200 with 16 judges on 16 cores, an honest neg's median tail was 0.12 ms longer than
    # the reference's (0.307 vs 0.184 ms) and was rejected; its fast tenth was not.
    item.candidate_tail_ms = low_quantile(list(reply.candidate_tail_ms) or [0.0])
    item.reference_tail_ms = low_quantile(list(reply.reference_tail_ms) or [0.0])
    hidden = hidden_work_message(item.candidate_tail_ms, item.reference_tail_ms, median_iqr(candidate_ms)[0])
    if hidden:
        raise crosscheck_failure(item, hidden, hidden)
    if reply.foreign_stream_calls:
        raise crosscheck_failure(
            item, "a timed call issued work on a stream other than the timed one", "work outside the timed stream"
        )
    if reply.compute_calls:
        ops = ", ".join(op[:60] for op in reply.compute_ops[:5])
        raise Verdict(
            "rejected",
            f"timing case {case.case_id}: a timed call computed outside Triton: {ops}",
            check="dispatch_audit",
            case=case,
            tier=tier,
            message="compute outside Triton in timing",
        )
    if reply.low_launch_calls:
        raise Verdict(
            "rejected",
            f"timing case {case.case_id}: a timed call launched no Triton kernel",
            check="triton_launched",
            case=case,
            tier=tier,
            message="timed call without a launch",
        )


def crosscheck_failure(item: TimedCase, reason: str, message: str) -> Verdict:
    return Verdict(
        "rejected",
        f"timing case {item.case.case_id}: {reason}",
        check="timing_crosscheck",
        case=item.case,
        tier=item.tier,
        message=message,
    )


def sets_to_draw_in_sandbox(
    judgement: JudgementContext, case: Case, options: TimingOptions
) -> tuple[protocol.SetsToDraw, protocol.TimeCase, Call] | None:
    """Where ``options`` lets the sandbox draw a case's sets itself (``sets_drawn_by_sandbox``): what it is
    asked to draw, the ``time`` message, and the case's call on "meta" (the roofline's sizes, kept by the
    correctness pass). None where the trusted side must draw and send them: the reference has sets of its
    own, the case is spot-checked (its spots' inputs are compared with a redraw made here), or the
    correctness pass left no sizes.

    Nothing else reads these sets' values, so drawing them in the sandbox gives a candidate nothing it does
    not already have: it is handed every set it is timed on and could overwrite one in place between calls,
    as it could a set sent over the pipe; a patched builder is the same power. What keeps it honest there is
    unchanged: its audited device time on the same cases (timing_protocol.check_against_device_time) and the
    spot checks, whose sets stay the trusted side's. What it saves: the protocol stage's sets (65.6 GB over
    the public timed cases of the 103 reference operators) were drawn, copied to the host and piped over
    (on the H200, 267 judge-seconds of 3,749 for a submission's 62 longest kernels)."""
    shared_sets = not options.separate_reference_sets and not spot_checks_of(options, case)
    first_call = judgement.inputs_meta.get(case.case_id)
    if not options.sets_drawn_by_sandbox or not judgement.spec_is_registered or not shared_sets or first_call is None:
        return None
    input_bytes = tensor_bytes([first_call.args, first_call.kwargs])
    sets = sets_for(options.sets_per_side, input_bytes, fewest=options.fewest_sets)
    seeds = tuple(timing_set_seed(judgement.secret, "candidate", case, index, options.stage) for index in range(sets))
    key = sets_key(options, case)
    draw = protocol.SetsToDraw(key=key, case=case.to_json(), seeds=seeds)
    return draw, time_case_request(judgement, case, options, key, spot_checks=0), first_call


def spot_checks_of(options: TimingOptions, case: Case) -> int:
    """How many of the case's timed calls come back as spots (all cases', or only the chosen cases')."""
    return options.spot_checks if options.spot_case_ids is None or case.case_id in options.spot_case_ids else 0


def prepare_case(
    judgement: JudgementContext, case: Case, options: TimingOptions, encoder: wire.Encoder
) -> tuple[str, tuple[Any, ...], tuple[Any, ...], protocol.TimeCase, Call]:
    """One timed case: its rotating input sets (drawn from the secret seed, candidate and reference apart)
    encoded into ``encoder`` as the sandbox's key for them and the two lists of wire trees, the ``time``
    message that later runs the loop on them, and the first set's call (for the roofline's byte count). The
    caller holds the GPU shared (the bulk values are drawn on it)."""
    drawn: dict[str, list[Call]] = {"candidate": [], "reference": []}
    first_call = None
    sets = options.sets_per_side
    index = 0
    spot_checks = spot_checks_of(options, case)
    # A spot-checked case's reference is timed on sets of its own even where the stage shares them: the
    # reference's answers to the candidate's own inputs would otherwise lie in the sandbox's freed memory, for a
    # kernel that does part of the work to pick up with an empty_like (or find in a shared out= buffer).
    shared_sets = not options.separate_reference_sets and not spot_checks
    sides = ("candidate",) if shared_sets else ("candidate", "reference")
    while index < sets:
        for side in sides:
            if first_call is not None:
                judgement.session.yield_to_timer("timing_sets")  # a large case's draws take a while
            call = judgement.make_call(case, timing_set_seed(judgement.secret, side, case, index, options.stage))
            if first_call is None:
                first_call = call
                sets = sets_for(options.sets_per_side, call_bytes(call), fewest=options.fewest_sets)
            drawn[side].append(call)
        index += 1
    candidate_sets, reference_sets = (
        tuple(encoder.encode({"args": call.args, "kwargs": call.kwargs}) for call in drawn[side])
        for side in ("candidate", "reference")
    )
    # The device-time stage's spot checks are fetched by case id; another stage's sets are kept apart.
    key = sets_key(options, case)
    request = time_case_request(judgement, case, options, key, spot_checks)
    return key, candidate_sets, reference_sets, request, first_call


def time_case_request(
    judgement: JudgementContext, case: Case, options: TimingOptions, key: str, spot_checks: int
) -> protocol.TimeCase:
    """The ``time`` message that runs the case's loop on the sets loaded under ``key``."""
    spec = judgement.spec
    poison_keys = judgement.poison_keys.get(case.case_id, [])
    return protocol.TimeCase(
        sets_key=key,
        entry_point=case.entry_point,
        operator_id=spec.operator_id,
        case=case.to_json(),
        budget_s=min(options.budget_s_per_case, max(1.0, judgement.session.remaining() / 4)),
        rse_target=options.rse_target,
        min_iterations=options.min_iterations,
        max_iterations=options.max_iterations,
        spot_checks=spot_checks,
        spot_seed=derive_seed(judgement.secret, options.stage, "spots", case.case_id),
        poison_keys=tuple(poison_keys),
        restore_keys=tuple(key for key in spec.entry_point(case.entry_point).mutates if key not in poison_keys),
        # "original": the loop the original times this operator's source with; any other window as it is.
        window=protocol_timer(options.window, spec.operator_id)[0],
    )


@contextlib.contextmanager
def own_priority(nice: int | None) -> Any:
    """This (trusted) process at CPU priority ``nice`` meanwhile (None: unchanged): while it holds the GPU
    alone, every exchange with its sandbox waits on its own scheduling too (on the H200 with 24 judges, 35 of
    the 101 s of exclusive holds went to round trips outside the sandbox's timed loops). Root only."""
    if nice is None:
        yield
        return
    try:
        before = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    except OSError:
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, 0, before)

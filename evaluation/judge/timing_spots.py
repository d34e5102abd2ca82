"""Spot checks of timed calls (trusted side): the sandbox keeps copies of a few random timed iterations'
inputs and outputs; they are fetched after the timed loops and compared with the reference here."""

from __future__ import annotations

from typing import Any

from evaluation.catalog.spec import Call
from evaluation.judge import protocol, wire
from evaluation.judge.compare import compare_outputs, map_tensors
from evaluation.judge.context import JudgementContext
from evaluation.judge.inputs import to_device
from evaluation.judge.untrusted.timing import WARMUP_CALLS
from evaluation.judge.verdicts import Verdict, check_integrity

# Room for the spot checks' reply beyond what its cases' bytes account for (headers, small tensors).
SPOT_REPLY_SLACK_BYTES = 64 * 1024 * 1024


def fetch_and_check_spots(judgement: JudgementContext, cases: list[tuple[str, Any, int, int]]) -> None:
    """Ask the sandbox for its copies of every timed case's spot-checked calls (one request; ``cases``:
    tier, case, bytes of its input sets, sets per side) and compare them with the reference (one hold).
    Fewer spots than a case's loop must have taken (from the second round of its sets on) is a harness
    violation: skipping them would hide a timed call's wrong answer."""
    options = judgement.options.timing
    tier, first = cases[0][0], cases[0][1]
    reply: protocol.Spots
    reply, blobs = judgement.session.request(
        protocol.FetchSpots(keys=tuple(case.case_id for _, case, _, _ in cases)),
        [],
        first,
        tier,
        # Each spot holds a call's inputs before and after and its outputs: the case's input and output bytes
        # (case_bytes) bound it; a creation op's outputs dwarf its inputs (zeros: 16 MB from 3 ints).
        reply_cap=SPOT_REPLY_SLACK_BYTES
        + 8
        * (1 + options.spot_checks)
        * sum(sent + judgement.case_bytes.get(case.case_id, 0) for _, case, sent, _ in cases),
        gpu=True,
    )  # the sandbox reads its device copies back (GPU held shared, gated)
    if not reply.ok:
        raise Verdict("error", f"timing: the sandbox could not send its spot checks: {reply.error[-500:]}")
    check_integrity(list(reply.integrity), first, tier)
    by_key = reply.spots
    if by_key is None:
        raise Verdict(
            "rejected",
            "harness integrity: the spot checks came back malformed",
            check="harness_integrity",
            message="spots not keyed by case",
        )
    checked = []
    for tier, case, _, sets in cases:
        spots = by_key.get(case.case_id, ())
        expected = min(options.spot_checks, max(0, WARMUP_CALLS + options.min_iterations - max(WARMUP_CALLS, sets)))
        if len(spots) < expected:
            raise Verdict(
                "rejected",
                f"harness integrity: timing case {case.case_id} sent {len(spots)} spot checks of {expected}",
                check="harness_integrity",
                case=case,
                tier=tier,
                message="spot-checked timed calls missing",
            )
        try:
            checked.append((tier, case, decode_spots(spots, blobs)))  # host work: before the hold
        except (wire.WireError, KeyError, TypeError, ValueError) as error:
            raise Verdict(
                "rejected",
                f"the result channel was tampered with in timing case {case.case_id}: malformed spot checks ({error})",
                check="result_channel",
                case=case,
                tier=tier,
                message=str(error),
            ) from None
    with judgement.session.device_shared("spot_checks"):  # the reference runs on the GPU
        for index, (tier, case, decoded) in enumerate(checked):
            if index:
                judgement.session.yield_to_timer("spot_checks")
            check_spots(judgement, case, tier, decoded)


def decode_spots(spots: tuple[protocol.SpotEntry, ...], blobs: list[bytes]) -> list[dict[str, Any]]:
    """The spot snapshots as tensors on the host (``before``, ``args``, ``kwargs``, ``returned``)."""
    decoded = []
    for spot in spots:
        start, count = spot.blob_offset, spot.blob_count
        decoded.append(wire.Decoder(blobs[start : start + count], private=False).decode(spot.value))
    return decoded


def check_spots(judgement: JudgementContext, case: Any, tier: str, spots: list[dict[str, Any]]) -> None:
    for decoded in spots:
        before = Call(args=list(decoded["before"]["args"]), kwargs=dict(decoded["before"]["kwargs"]))
        private = to_device(before, judgement.reference_device)  # a private copy, as for correctness
        expected = map_tensors(
            judgement.spec.outputs_of(case, private, judgement.spec.reference(case, private)), lambda t: t.detach()
        )
        after = Call(args=list(decoded["args"]), kwargs=dict(decoded["kwargs"]))
        outputs = judgement.spec.outputs_of(case, after, decoded["returned"])
        message = compare_outputs(judgement.spec, case, before, outputs, expected)
        if message:
            raise Verdict(
                "rejected",
                f"timing case {case.case_id}: a timed call's output was wrong ({message})",
                check="timing_spot_check",
                case=case,
                tier=tier,
                message=message,
            )
    if spots:
        judgement.check("timing_spot_check", "passed", "spot-checked timed calls matched the reference")

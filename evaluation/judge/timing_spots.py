"""Spot checks of timed calls (trusted side): the sandbox keeps copies of a few random timed iterations'
inputs and outputs; they are fetched after the timed loops and compared with the reference here.

The inputs are the sandbox's word, so each spot names the rotating set whose values it held and the judge
draws that set again from its secret seed (no copy of the sets is kept meanwhile): a spot whose inputs differ
from it (structure, shapes, dtypes, strides, plain values, bits) is a forged result channel. Pure output
buffers and scratch workspaces, whose contents the reference ignores, are checked for their geometry only."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import torch

from evaluation.catalog.spec import Call
from evaluation.judge import protocol, wire
from evaluation.judge.checks import call_arguments, call_outputs, unless_well_posed
from evaluation.judge.compare import bit_identical, compare_outputs, map_tensors
from evaluation.judge.context import JudgementContext, TimingOptions, protocol_timer
from evaluation.judge.inputs import to_device
from evaluation.judge.untrusted.timing import WARMUP_CALLS
from evaluation.judge.verdicts import Verdict, check_integrity, derive_seed

# Room for the spot checks' reply beyond what its cases' bytes account for (headers, small tensors).
SPOT_REPLY_SLACK_BYTES = 64 * 1024 * 1024


def timing_set_seed(secret: bytes, side: str, case: Any, index: int, stage: str = "timing") -> int:
    """The seed of a timed case's rotating input set ``index`` on ``side`` ("candidate" or "reference") in
    timing stage ``stage`` (TimingOptions.stage: each stage draws its own sets)."""
    return derive_seed(secret, stage, side, case.case_id, index)


def fetch_and_check_spots(
    judgement: JudgementContext, cases: list[tuple[str, Any, int, int]], options: TimingOptions | None = None
) -> set[str]:
    """Ask the sandbox for its copies of every timed case's spot-checked calls (one request; ``cases``:
    tier, case, bytes of its input sets, sets per side) and compare them with the reference (one hold).
    Fewer spots than a case's loop must have taken (from the second round of its sets on) is a harness
    violation: skipping them would hide a timed call's wrong answer. Returns the ids of the cases whose probe
    call (untrusted.timing.kernel_time_probe) came back as a spot too and matched the reference: only those
    cases' probe figures are the device time of a call that did the work (timing_trusted). ``options``: the
    stage's (the device-time stage's by default), whose sets the spots' inputs must be."""
    options = options or judgement.options.timing
    tier, first = cases[0][0], cases[0][1]
    reply: protocol.Spots
    reply, blobs = judgement.session.request(
        protocol.FetchSpots(keys=tuple(sets_key(options, case) for _, case, _, _ in cases)),
        [],
        first,
        tier,
        # Each spot holds a call's inputs before and after and its outputs: the case's input and output bytes
        # (case_bytes) bound it; a creation op's outputs dwarf its inputs (zeros: 16 MB from 3 ints).
        reply_cap=SPOT_REPLY_SLACK_BYTES
        + 8
        * (2 + options.spot_checks)  # the probe call's spot too
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
    probed: set[str] = set()
    for tier, case, _, sets in cases:
        spots = by_key.get(sets_key(options, case), ())
        expected = expected_spots(options, judgement.spec.operator_id, sets)
        with judgement.session.decoding_reply(case, tier, where=f" in timing case {case.case_id}"):
            # Host work: before the hold.
            decoded = decode_spots(judgement, case, spots, blobs, sets)
        probes = sum(1 for spot in decoded if spot.probe)
        if len(decoded) - probes < expected or probes > 1:
            raise Verdict(
                "rejected",
                f"harness integrity: timing case {case.case_id} sent {len(decoded) - probes} spot checks of "
                f"{expected} and {probes} probe call(s) of at most 1",
                check="harness_integrity",
                case=case,
                tier=tier,
                message="spot-checked timed calls missing",
            )
        checked.append((tier, case, decoded))
        if probes:
            probed.add(case.case_id)
    with judgement.session.device_shared("spot_checks"):  # the sets are drawn and the reference runs on the GPU
        for index, (tier, case, decoded) in enumerate(checked):
            if index:
                judgement.session.yield_to_timer("spot_checks")
            check_spots(judgement, case, tier, decoded, options.stage)
    return probed


def sets_key(options: TimingOptions, case: Any) -> str:
    """The sandbox's key for a case's sets and spots in a stage (timed_requests.prepare_case)."""
    return case.case_id if options.stage == "timing" else f"{options.stage}:{case.case_id}"


def expected_spots(options: TimingOptions, operator_id: str, sets: int) -> int:
    """The fewest spots a case's loop must send. The device-time stage's loop (and the protocol stage's
    synchronised ones) take theirs from the second round of the rotation on, so a case with many sets and
    few rounds may have none; the do_bench and back-to-back loops take theirs on a call whose inputs are the
    drawn set (untrusted/timing_do_bench.py), so every spot-checked case has them."""
    if options.window != "device" and protocol_timer(options.window, operator_id)[0] in ("do_bench", "back_to_back"):
        return options.spot_checks
    return min(options.spot_checks, max(0, WARMUP_CALLS + options.min_iterations - max(WARMUP_CALLS, sets)))


@dataclass(frozen=True)
class Spot:
    """One spot-checked call as the sandbox reported it: the drawn set its inputs held (of ``side``'s sets),
    its inputs before the call, its arguments after it and its return value; ``probe``: the loop's probe
    call, not a timed one."""

    set_index: int
    before: Call
    after: Call
    returned: Any
    probe: bool = False
    side: str = "candidate"  # whose sets ``set_index`` counts: the probe call may run on a reference set


def decode_spots(
    judgement: JudgementContext, case: Any, spots: tuple[protocol.SpotEntry, ...], blobs: list[bytes], sets: int
) -> list[Spot]:
    """The spot snapshots on the host: each call's input set (an index below ``sets``), its inputs before it,
    its arguments after it and its return value. WireError (a malformed spot check) when one does not
    decode or is not such a call."""
    entry = judgement.spec.entry_point(case.entry_point)
    decoded = []
    for spot in spots:
        start, count = spot.blob_offset, spot.blob_count
        try:
            tree = wire.Decoder(blobs[start : start + count], private=False).decode(spot.value)
            before = call_arguments(tree.get("before") if isinstance(tree, dict) else None)
            set_index = tree.get("set")
            if type(set_index) is not int or not 0 <= set_index < sets:
                raise wire.WireError(f"its input set {str(set_index)[:40]} is none of the {sets} drawn")
            probe = tree.get("probe", False)
            if type(probe) is not bool:
                raise wire.WireError(f"its probe mark is {str(probe)[:40]}, not a truth value")
            # Only the probe call runs on a reference set (untrusted.timing: values no candidate call saw).
            side = tree.get("side", "candidate")
            if side not in (("candidate", "reference") if probe else ("candidate",)):
                raise wire.WireError(f"its side {str(side)[:40]} is not one a {'probe' if probe else 'timed'} call has")
            decoded.append(Spot(set_index, before, *call_outputs(tree, before, entry), probe=probe, side=side))
        except wire.WireError as error:
            raise wire.WireError(f"malformed spot checks ({error})") from None
    return decoded


def check_drawn_inputs(
    judgement: JudgementContext,
    case: Any,
    set_index: int,
    before: Call,
    stage: str = "timing",
    side: str = "candidate",
) -> None:
    """WireError unless ``before`` is ``side``'s set ``set_index`` as the judge drew it, cloned as the timed
    loop clones a spot's inputs. Only the geometry of a pure output buffer (poisoned before every call) and
    of a scratch workspace (left as the set's previous call left it when the sets do not rotate) is the
    draw's: the reference ignores their contents."""
    drawn = judgement.make_call(case, timing_set_seed(judgement.secret, side, case, set_index, stage))
    entry = judgement.spec.entry_point(case.entry_point)
    unchecked = set(judgement.poison_keys.get(case.case_id, [])) | set(entry.scratch)
    keys = [*range(len(drawn.args)), *sorted(drawn.kwargs)]
    if len(before.args) != len(drawn.args) or sorted(before.kwargs) != sorted(drawn.kwargs):
        problem = "other arguments"
    else:
        problem = next(
            (
                f"argument {key!r}: {found}"
                for key in keys
                if (found := _differs(_argument(before, key), _argument(drawn, key), values=key not in unchecked))
            ),
            "",
        )
    if problem:
        raise wire.WireError(f"a spot check's inputs are not the drawn set {set_index} ({problem})")


# Floating inputs may differ from their redraw by a few units in the last place where a case builder reduces
# with atomics on a GPU (its order is not fixed); inputs that close to the draw give a kernel nothing to
# choose, so they are the draw. Anything further off, and any other dtype, must be the draw's bits.
DRAW_ULPS = 4


def _drawn_values(got: torch.Tensor, drawn: torch.Tensor) -> bool:
    if bit_identical(got, drawn):
        return True
    if not drawn.dtype.is_floating_point or drawn.numel() == 0:
        return False
    eps = torch.finfo(drawn.dtype).eps  # of the tensors' own dtype: a bf16 unit is not a float32 one
    got, drawn = got.detach().cpu().double(), drawn.detach().cpu().double()
    scale = float(drawn.abs().nan_to_num(0.0, 0.0, 0.0).max())
    return torch.allclose(got, drawn, rtol=DRAW_ULPS * eps, atol=DRAW_ULPS * eps * scale, equal_nan=True)


def _argument(call: Call, key: int | str) -> Any:
    return call.args[key] if isinstance(key, int) else call.kwargs[key]


def _differs(got: Any, drawn: Any, values: bool) -> str:
    """How a spot's input ``got`` differs from the drawn ``drawn`` ('' when it does not)."""
    if isinstance(drawn, torch.Tensor):
        if type(got) is not torch.Tensor:
            return f"{type(got).__name__} for a tensor"
        if got.dtype != drawn.dtype or got.shape != drawn.shape:
            return f"{got.dtype} {list(got.shape)} for {drawn.dtype} {list(drawn.shape)}"
        # A clone keeps a dense tensor's strides and lays out any other as torch's clone does: on "meta".
        cloned = torch.empty_strided(drawn.shape, drawn.stride(), dtype=drawn.dtype, device="meta").clone().stride()
        if got.stride() != cloned:
            return f"strides {got.stride()} for {cloned}"
        return "other values" if values and not _drawn_values(got, drawn) else ""
    if isinstance(drawn, torch.device):
        # Any device names the device under test (the sandbox places the call there).
        return "" if isinstance(got, torch.device) else f"{type(got).__name__} for a device"
    if isinstance(drawn, (list, tuple, dict)):
        kind = dict if isinstance(drawn, dict) else tuple if isinstance(drawn, tuple) else list
        if not isinstance(got, kind) or len(got) != len(drawn):
            return f"{type(got).__name__} of {len(got) if isinstance(got, (list, tuple, dict)) else 0} items"
        if isinstance(drawn, dict):
            wanted = {str(key): item for key, item in drawn.items()}  # the wire's keys are strings
            if sorted(got) != sorted(wanted):
                return "other keys"
            pairs = [(got[key], wanted[key]) for key in sorted(wanted)]
        else:
            pairs = list(zip(got, drawn, strict=True))
        return next((found for item, want in pairs if (found := _differs(item, want, values))), "")
    # A plain value as the wire carries it: NaN and -0.0 are themselves, and 1 differs from 1.0 and True.
    got_text, drawn_text = (json.dumps(wire.Encoder().encode(item)) for item in (got, drawn))
    return "" if got_text == drawn_text else f"{got_text[:40]} for {drawn_text[:40]}"


def check_spots(judgement: JudgementContext, case: Any, tier: str, spots: list[Spot], stage: str = "timing") -> None:
    for spot in spots:
        set_index, before, after, returned = spot.set_index, spot.before, spot.after, spot.returned
        with judgement.session.decoding_reply(case, tier, where=f" in timing case {case.case_id}"):
            check_drawn_inputs(judgement, case, set_index, before, stage, spot.side)
        private = to_device(before, judgement.reference_device)  # a private copy, as for correctness
        expected = map_tensors(
            judgement.spec.outputs_of(case, private, judgement.spec.reference(case, private)), lambda t: t.detach()
        )
        outputs = judgement.spec.outputs_of(case, after, returned)
        message = compare_outputs(judgement.spec, case, before, outputs, expected)
        if message:
            # The comparison correctness makes, well-posed alternatives included: a timed call of an honest
            # fp32 huber_loss was refused on the H200 for values equal to the float64 answer rounded once.
            message = unless_well_posed(judgement, case, before, outputs, expected, message)
        if message:
            raise Verdict(
                "rejected",
                f"timing case {case.case_id}{_in_stage(stage)}: "
                f"{'its probe' if spot.probe else 'a timed'} call's output was wrong ({message})",
                check="timing_spot_check",
                case=case,
                tier=tier,
                message=message,
            )
    if spots:
        judgement.check("timing_spot_check", "passed", "spot-checked timed calls matched the reference")


def _in_stage(stage: str) -> str:
    """Where a spot's case was timed, for a refusal's reason: the device-time stage's is the plain case."""
    return "" if stage == "timing" else f" in the {stage.removesuffix('_timing').replace('_', ' ')} stage"

"""The run-time checks on what a sandbox call returned, beyond the comparison with the reference: inputs
unchanged, ghost replays (a no-op launch must not still be right), the float64 second opinion, a random
operator's two draws, and which mutated arguments are pure outputs (poisoned before sending)."""

from __future__ import annotations

from typing import Any

import torch

from evaluation.catalog.spec import Call, Case
from evaluation.judge import protocol, wire
from evaluation.judge.compare import (
    FP64_OPINION_MIN_VALUES,
    bit_identical,
    compare_outputs,
    exact_alternative_accepts,
    flat_tensors,
    fp64_relative_error,
    map_tensors,
    widen_to_64,
)
from evaluation.judge.context import JudgementContext
from evaluation.judge.inputs import to_device
from evaluation.judge.untrusted.guard import poison_tree
from evaluation.judge.verdicts import Verdict


def check_draws_differ(
    judgement: JudgementContext,
    reply: protocol.Called,
    blobs: list[bytes],
    case: Case,
    tier: str,
    before: Call,
    outputs: tuple[Any, ...],
    expected: tuple[Any, ...],
) -> None:
    """A random operator's second call on the same inputs must also pass its statistical check and must
    not repeat the first call's draws (a fixed seed, or a pattern derived from the inputs), unless the
    reference itself repeats them (rrelu in eval mode is deterministic)."""
    repeat = reply.repeat
    if repeat is None:  # the harness makes it whenever the first call raised nothing
        with judgement.session.decoding_reply(case, tier):
            raise wire.WireError("the reply holds no second call")
    if repeat.error:
        raise Verdict(
            "failed_runtime",
            f"case {case.case_id}: the second call raised: {repeat.error.strip().splitlines()[-1][:500]}",
            case=case,
            tier=tier,
            message=repeat.error[-2000:],
        )
    if repeat.compute_ops or repeat.launches < 1 or repeat.not_plain:
        raise Verdict(
            "rejected",
            f"case {case.case_id}: the second call computed outside Triton or launched nothing",
            check="dispatch_audit",
            case=case,
            tier=tier,
            message=f"second call: ops {list(repeat.compute_ops)}, launches {repeat.launches}",
        )
    with judgement.session.decoding_reply(case, tier):
        after, returned = decode_call(repeat.value, blobs, before, judgement.spec.entry_point(case.entry_point))
    second = judgement.spec.outputs_of(case, after, returned)
    message = compare_outputs(judgement.spec, case, before, second, expected)
    if message:
        raise Verdict(
            "failed_correctness", f"case {case.case_id}, second call: {message}", case=case, tier=tier, message=message
        )
    if not bit_identical(list(outputs), list(second)):
        judgement.check("random_draws_differ", "passed", "two calls on the same inputs drew different values")
        return
    if every_output_holds_one_value(outputs):
        # A draw where every element came out the same (bernoulli with p = 0.001 over 289 elements is all
        # zeros three times in four) repeats in honest hands too: two such draws are no evidence of a seed.
        return
    # Two reference draws on the very inputs the candidate got (pure outputs poisoned alike).
    first, again = judgement.expected(case, before), judgement.expected(case, before)
    if bit_identical(list(flat_tensors(first)), list(flat_tensors(again))):
        return  # the reference repeats itself here too: nothing random to demand
    raise Verdict(
        "failed_correctness",
        f"case {case.case_id}: two calls on the same inputs returned identical "
        "draws (a fixed seed, or values derived from the inputs)",
        check="random_draws_differ",
        case=case,
        tier=tier,
        message="identical outputs from two calls of a random operator",
    )


def every_output_holds_one_value(outputs: tuple[Any, ...]) -> bool:
    """Whether each tensor among the outputs is empty or holds a single value in every element (NaN counts
    as a value of its own, so an all-NaN tensor holds one)."""
    for tensor in flat_tensors(outputs):
        flat = tensor.detach().reshape(-1)
        if flat.numel() < 2:
            continue
        first = flat[:1]
        same = (flat == first) | (flat.isnan() & first.isnan()) if flat.is_floating_point() else flat == first
        if not bool(same.all()):
            return False
    return True


def decode_call(value: Any, blobs: list[bytes], sent: Call, entry: Any) -> tuple[Call, Any]:
    """A reply's wire tree of one call (``{"args", "kwargs", "returned"}``: its arguments after the call and
    its return value) as that Call and the returned value. WireError when it does not decode or is not
    such a call of ``sent`` (call_outputs)."""
    return call_outputs(wire.Decoder(blobs, private=False).decode(value), sent, entry)


def call_arguments(decoded: Any) -> Call:
    """A decoded tree's ``args`` (a list) and ``kwargs`` (a dict) as a Call; WireError when it holds none."""
    if not isinstance(decoded, dict) or not {"args", "kwargs"} <= decoded.keys():
        raise wire.WireError("a call's arguments are missing")
    args, kwargs = decoded["args"], decoded["kwargs"]
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise wire.WireError("a call's arguments are not a list and a dict")
    return Call(args=args, kwargs=kwargs)


def call_outputs(decoded: Any, sent: Call, entry: Any) -> tuple[Call, Any]:
    """A decoded call's arguments after it and its return value. WireError when it is not a call of as many
    arguments as ``sent`` with every mutated one (what is compared) in it: the tree comes from the
    kernel's process, and what reads it past here (outputs_of, the comparisons) trusts its structure."""
    after = call_arguments(decoded)
    if "returned" not in decoded:
        raise wire.WireError("a call's return value is missing")
    args, kwargs = after.args, after.kwargs
    if len(args) != len(sent.args):
        raise wire.WireError(f"a call's outputs hold {len(args)} positional arguments of {len(sent.args)} sent")
    missing = [key for key in entry.mutates if isinstance(key, str) and key not in kwargs]
    if missing:
        raise wire.WireError(f"a call's outputs lack its mutated argument {missing[0]!r}")
    return after, decoded["returned"]


def mutated_inputs(judgement: JudgementContext, entry: Any, before: Call, after: Call) -> str:
    # Scratch arguments (workspaces such as paged_attention_v2's tmp_out) may change and are never judged.
    mutates = set(entry.mutates) | set(entry.scratch)
    for index, value in enumerate(before.args):
        if index not in mutates and index < len(after.args) and not bit_identical(value, after.args[index]):
            return f"#{index}"
    for key, value in before.kwargs.items():
        if key not in mutates and not bit_identical(value, after.kwargs.get(key)):
            return repr(key)
    return ""


def float64_outputs(spec: Any, case: Case, call: Call, device: torch.device) -> tuple[Any, ...]:
    """The reference's outputs for ``call`` computed in float64 (complex128) on ``device``, from a private
    widened copy of its tensors: what the fp64 opinion measures against."""
    call64 = to_device(call, device)
    call64 = Call(args=map_tensors(call64.args, widen_to_64), kwargs=map_tensors(call64.kwargs, widen_to_64))
    return map_tensors(spec.outputs_of(case, call64, spec.reference(case, call64)), lambda t: t.detach())


def check_fp64_opinion(
    judgement: JudgementContext, case: Case, tier: str, before: Call, outputs: tuple[Any, ...]
) -> None:
    # float64 on the reference device (a GPU's fp64 units are exact enough and far faster than a CPU), on
    # the inputs the candidate got (pure outputs poisoned: the reference ignores them, pure_output_keys).
    error = fp64_relative_error(outputs, float64_outputs(judgement.spec, case, before, judgement.reference_device))
    bound = judgement.spec.fp64_relative_bound
    if error is not None and error > bound:
        raise Verdict(
            "failed_correctness",
            f"case {case.case_id}: relative error {error:.3g} against a float64 "
            f"reference exceeds {bound:g} (precision loss)",
            check="fp64_second_opinion",
            case=case,
            tier=tier,
            message=f"||out-ref64||/||ref64|| = {error:.3g} > {bound:g}",
        )
    judgement.check(
        "fp64_second_opinion",
        "passed",
        f"bound {bound:g} on every float32 / complex64 output of {FP64_OPINION_MIN_VALUES} values or more",
    )


def pure_output_keys(
    judgement: JudgementContext, case: Case, sent: Call, entry: Any, expected: tuple[Any, ...]
) -> list[Any]:
    """Mutated arguments whose prior contents the reference ignores (``out=`` buffers, vLLM ``out``):
    those are poisoned before the call. In-out arguments (in-place ``self``, BLAS ``y``) are not. A record
    that says ``mutated_are_inputs`` (cuBLAS: C = alpha*AB + beta*C, padding that must stay) is taken at
    its word; for the others the reference run on a poisoned copy tells them apart."""
    if entry.mutated_are_inputs:
        return []
    keys = []
    # ``sent`` is drawn on the CPU and ``expected`` lives on the reference device: the check reads the call
    # beside the outputs, so it gets a copy where they are (a GPU's statistical check mixed the two).
    unpoisoned = None
    for key in entry.mutates:
        if sum(tensor.numel() for tensor in flat_tensors(sent.get(key))) == 0:
            continue
        if unpoisoned is None:
            unpoisoned = to_device(sent, judgement.reference_device)
        private = to_device(sent, judgement.reference_device)  # a copy: ``sent`` itself stays as drawn
        poison_tree(private.get(key))
        returned = judgement.spec.reference(case, private)
        outputs = map_tensors(judgement.spec.outputs_of(case, private, returned), lambda t: t.detach())
        # A statistical record's check accepts any valid draw, so a random op's output buffer passes it
        # poisoned too; a deterministic answer checked through it (moe_lora_align_block_size: the slices of
        # empty slots must keep their zeros) does not, and is not poisoned.
        if compare_outputs(judgement.spec, case, unpoisoned, outputs, expected) is None:
            keys.append(key)
    return keys


def decode_ghosts(
    judgement: JudgementContext, reply: protocol.Called, blobs: list[bytes], case: Case, sent: Call, variants: int
) -> list[tuple[Any, ...] | None]:
    """Each ghost replay's compared outputs, in order; None for a replay that raised or returned something
    other than plain tensors (its launches mattered). WireError when the reply holds other than the
    ``variants`` replays asked for (fewer would skip the check) or one does not decode."""
    if len(reply.ghosts) != variants:
        raise wire.WireError(f"the reply holds {len(reply.ghosts)} ghost replays of {variants} asked for")
    entry = judgement.spec.entry_point(case.entry_point)
    bounds = [*reply.ghost_blob_offsets, len(blobs)]
    decoded_outputs: list[tuple[Any, ...] | None] = []
    for index, ghost in enumerate(reply.ghosts):
        if ghost.error or ghost.not_plain:
            decoded_outputs.append(None)
            continue
        after, returned = decode_call(ghost.value, blobs[bounds[index] : bounds[index + 1]], sent, entry)
        decoded_outputs.append(judgement.spec.outputs_of(case, after, returned))
    return decoded_outputs


def check_ghost_replay(
    judgement: JudgementContext,
    ghost_outputs: list[tuple[Any, ...] | None],
    case: Case,
    tier: str,
    before: Call,
    expected: tuple[Any, ...],
) -> None:
    if not ghost_outputs:
        return
    for outputs in ghost_outputs:
        if outputs is None:
            return  # no output, or an exception: the launches mattered
        if compare_outputs(judgement.spec, case, before, outputs, expected, explain=False) is not None:
            return  # wrong without launches: the launches did the work
    if doing_nothing_is_correct(judgement, case, before, expected):
        return  # e.g. x.add_(y, alpha=0.001) in bfloat16 leaves x as it was: the replay proves nothing
    if poison_is_correct(judgement, case, before, expected, len(ghost_outputs)):
        return  # e.g. fmax(NaN, NaN) where NaN is allowed: poisoned fresh memory is the right answer
    raise Verdict(
        "rejected",
        f"case {case.case_id}: the output is still correct with every Triton launch turned into a no-op",
        check="ghost_replay",
        case=case,
        tier=tier,
        message="correct output without any Triton launch (fallback or precomputed result)",
    )


def poison_is_correct(
    judgement: JudgementContext, case: Case, before: Call, expected: tuple[Any, ...], variants: int
) -> bool:
    """True when outputs made wholly of the replay's poison would pass under every variant the replay
    used: a no-op replay then proves nothing (a 0-dim fmax of two NaNs is NaN, which is also the float
    poison; seen on the H200, 2026-11-29, where it rejected an honest kernel)."""
    for variant in range(variants):
        poisoned = tuple(
            poison_tree(map_tensors([item], lambda t: t.clone())[0], variant)
            if isinstance(item, (torch.Tensor, list, tuple))
            else item
            for item in expected
        )
        if compare_outputs(judgement.spec, case, before, poisoned, expected, explain=False) is not None:
            return False
    return True


def _untouched_outputs(judgement: JudgementContext, case: Case, before: Call) -> tuple[Any, ...] | None:
    """An in-place call's compared outputs had it changed nothing (its mutated inputs as they were), or None
    where the call returns its answer."""
    entry = judgement.spec.entry_point(case.entry_point)
    if entry.compare_return or not entry.mutates:
        return None
    return tuple(before.get(key) for key in entry.mutates)


def doing_nothing_is_correct(judgement: JudgementContext, case: Case, before: Call, expected: tuple[Any, ...]) -> bool:
    """True when an in-place call's right answer is its untouched inputs, so a no-op replay must pass."""
    untouched = _untouched_outputs(judgement, case, before)
    return untouched is not None and compare_outputs(judgement.spec, case, before, untouched, expected) is None


def untouched_is_the_answer(judgement: JudgementContext, case: Case, before: Call, expected: tuple[Any, ...]) -> bool:
    """True when an in-place call's exact answer is its untouched inputs, bit for bit (BLAS's quick return:
    gemv with alpha 0 and beta 1): a call that launches nothing there did all the work there was."""
    untouched = _untouched_outputs(judgement, case, before)
    return (
        untouched is not None
        and len(untouched) == len(expected)
        and all(bit_identical(left, right) for left, right in zip(untouched, expected, strict=True))
    )


def unless_well_posed(
    judgement: JudgementContext,
    case: Case,
    before: Call,
    outputs: tuple[Any, ...],
    expected: tuple[Any, ...],
    message: str,
) -> str | None:
    """``message`` (the comparison's refusal), or None when every refused value equals a float64 answer
    that the reference's own rounding departs from, named in an ``exact_rounding`` check (docs/judge.md,
    "Well-posed comparisons"):

    * the record's ``exact_formula`` (floor_divide, div's rounding modes), correctly rounded: where the
      reference's reciprocal trick rounds otherwise at exact multiples;
    * for half-precision outputs, the reference's formula computed in float64 and rounded once: a half
      reference rounds its intermediates in half (on the H200, ATen's fp16 huber_loss sat 2 units in the
      last place from an honest kernel computing in float32), one implementation's rounding, not the answer.

    A wrong kernel is no nearer the float64 answer than the reference, so bugs fail as before. Where the
    record's ATen op is composite (``eager_alternative``), half outputs matching ATen's own staged answer
    pass too: that is the original's reference, rounding every step in half on CUDA as on the CPU."""
    spec = judgement.spec
    half = half_precision_outputs(expected)
    dtype = next((str(t.dtype).removeprefix("torch.") for t in expected if isinstance(t, torch.Tensor)), "")
    if spec.eager_alternative is not None and half:
        eager = eager_outputs(spec, case, before, judgement.reference_device)
        if compare_outputs(spec, case, before, outputs, eager, explain=False) is None:
            judgement.check(
                "exact_rounding",
                "passed",
                f"{case.case_id}: within tolerance of ATen's own answer, which rounds each step of the composite "
                f"op in {dtype} on every device (the original's reference), not of the float32 one rounded once",
            )
            return None
    if spec.exact_formula is not None:
        exact = spec.exact_formula(case, to_device(before, judgement.reference_device))
        why = f"the correctly rounded float64 result, not the reference's ({spec.exact_formula_why})"
    elif half:
        try:
            exact = tuple(float64_outputs(spec, case, before, judgement.reference_device))
        except Exception:  # a reference without a float64 path: the reference's comparison stands
            return message
        why = (
            f"the float64 result rounded once to {dtype}, not the reference's "
            f"(which rounds its intermediates in {dtype})"
        )
    else:
        return message
    accepted = exact_alternative_accepts(spec, case, outputs, expected, exact)
    if accepted is None:
        return message
    judgement.check("exact_rounding", "passed", f"{case.case_id}: {accepted} value(s) equal {why}")
    return None


def eager_outputs(spec: Any, case: Case, call: Call, device: torch.device) -> tuple[Any, ...]:
    """The record's ``eager_alternative`` outputs for ``call``, from a private copy on ``device``."""
    private = to_device(call, device)
    return map_tensors(spec.outputs_of(case, private, spec.eager_alternative(case, private)), lambda t: t.detach())


def half_precision_outputs(expected: tuple[Any, ...]) -> bool:
    """Every compared output a half-precision tensor (or None: an optional output the call did not get)."""
    tensors = [item for item in expected if item is not None]
    return bool(tensors) and all(
        isinstance(item, torch.Tensor) and item.dtype in (torch.float16, torch.bfloat16) for item in tensors
    )

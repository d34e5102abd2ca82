"""The trusted side's correctness stage: every case of the operator, each in three steps (inputs and
reference; the sandbox's call, real and ghost replays; the comparisons), and the run-time checks on what
comes back (inputs unchanged, ghost replay, float64 second opinion, random draws that differ).

Functions of a judgement in progress (context.JudgementContext), as timing_trusted's are: the context's
session owns the sandbox and the device lock; this module decides what a case's outputs mean, and stops the
judgement with a Verdict when they are wrong.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import torch

from evaluation.catalog.spec import Call, Case
from evaluation.judge import wire
from evaluation.judge.compare import (
    FP64_OPINION_MIN_VALUES,
    bit_identical,
    compare_outputs,
    flat_tensors,
    fp64_relative_error,
    map_tensors,
    widen_to_64,
)
from evaluation.judge.context import JudgementContext
from evaluation.judge.inputs import call_bytes, to_device
from evaluation.judge.job import CaseResult
from evaluation.judge.untrusted.guard import poison_tree
from evaluation.judge.verdicts import DEVICE_FULL, Verdict, check_integrity, derive_seed, device_was_full


@dataclass
class CaseInFlight:
    """One correctness case between its steps (prepare_case, call_sandbox, judge_outputs)."""

    tier: str
    case: Case
    entry: Any
    sent: Call | None  # the inputs as drawn (pure outputs poisoned before sending); dropped once sent
    expected: tuple[Any, ...]
    wants_ghost: bool
    wants_repeat: bool
    variants: int
    before: Call | None = None  # an untouched copy of what was sent
    outputs: tuple[Any, ...] = ()
    reply: dict[str, Any] = field(default_factory=dict)
    repeat_blobs: list[bytes] = field(default_factory=list)
    ghost_outputs: list[tuple[Any, ...] | None] = field(default_factory=list)
    answered_at: float = 0.0


def run_correctness(judgement: JudgementContext) -> None:
    """Every case, in order. Each takes the GPU twice: one case's comparisons and the next case's inputs
    and reference share a hold (every hold taken is a chance to queue behind a timer: on the H200 with 24
    judges the 40,658 shared holds of a 110-kernel submission waited 3,233 s in all)."""
    started = time.monotonic()
    previous: CaseInFlight | None = None
    for tier, case in judgement.cases:
        with judgement.session.device_shared("checks+inputs" if previous is not None else "inputs"):
            if previous is not None:
                judge_outputs(judgement, previous, record=True)
                judgement.session.yield_to_timer("inputs")
            pending = prepare_case(judgement, tier, case, derive_seed(judgement.secret, tier, case.case_id, 0))
        previous = None
        if judgement.reference_device.type != "cpu":
            # Sixteen judges' allocator caches (up to 9 GiB each seen) ran the H200 out of memory.
            judgement.backend.release_cached_memory_over(judgement.trusted_cache_bytes)
        call_sandbox(judgement, pending)
        previous = pending
    if previous is not None:
        with judgement.session.device_shared("checks"):
            judge_outputs(judgement, previous, record=True)
    judgement.stage_seconds["correctness"] = round(time.monotonic() - started, 4)
    for name, detail in (
        ("dispatch_audit", "no compute aten op outside Triton on any call"),
        ("triton_launched", "every call launched at least one Triton kernel"),
        ("plain_tensor_outputs", "every output was a plain dense torch.Tensor"),
        ("inputs_unchanged", "inputs not in the mutates list kept their bits"),
        ("harness_integrity", "timers, synchronize, launch hooks and dispatch mode unchanged; no new threads"),
        ("result_channel", "every reply carried the run token on the private pipe"),
    ):
        judgement.check(name, "passed", detail)
    if "ghost_replay" not in judgement.checks:
        judgement.check(
            "ghost_replay",
            "passed" if judgement.options.ghost_replay else "skipped",
            "with launches disabled every case's output was wrong"
            if judgement.options.ghost_replay
            else "switched off",
        )


def check_case(judgement: JudgementContext, tier: str, case: Case, seed: int, record: bool, ghost: bool = True) -> None:
    """One case, real call and ghost replays, on its own (the post-timing recheck). ``run_correctness``
    runs the same three steps, with one case's comparisons and the next case's inputs in one hold."""
    with judgement.session.device_shared("inputs"):
        pending = prepare_case(judgement, tier, case, seed, ghost)
    call_sandbox(judgement, pending)
    with judgement.session.device_shared("checks"):
        judge_outputs(judgement, pending, record)


def prepare_case(judgement: JudgementContext, tier: str, case: Case, seed: int, ghost: bool = True) -> CaseInFlight:
    """Inputs, reference and the request for one case. Uses the GPU: the caller holds it shared."""
    entry = judgement.spec.entry_point(case.entry_point)
    started = time.perf_counter()
    sent = judgement.make_call(case, seed)  # built once: the reference works on a private copy of it
    built = time.perf_counter()
    judgement.add_stage("correctness.inputs", built - started)
    expected = judgement.expected(case, sent)
    judgement.reference_seconds.setdefault(case.case_id, time.perf_counter() - built)
    if case.case_id not in judgement.poison_keys:  # a property of the case, not of the seed: once per case
        judgement.poison_keys[case.case_id] = pure_output_keys(judgement, case, sent, entry, expected)
        judgement.expected_meta[case.case_id] = map_tensors(expected, lambda t: t.to("meta"))
        judgement.case_bytes[case.case_id] = call_bytes(sent) + sum(
            item.numel() * item.element_size() for item in flat_tensors(expected)
        )
    judgement.add_stage("correctness.reference", time.perf_counter() - built)
    expected_tensors = flat_tensors(expected)
    return CaseInFlight(
        tier=tier,
        case=case,
        entry=entry,
        sent=sent,
        expected=expected,
        wants_ghost=ghost
        and judgement.options.ghost_replay
        and judgement.spec.judgement != "metadata"
        and any(item.numel() > 0 for item in expected_tensors),
        # Random operators are called twice on the same inputs: two draws must differ (when the
        # reference's do).
        wants_repeat=judgement.spec.judgement == "statistical" and any(item.numel() > 1 for item in expected_tensors),
        # Integers and bools have no never-right poison: two variants, convicted only if right under both.
        variants=1 if all(item.dtype.is_floating_point or item.dtype.is_complex for item in expected_tensors) else 2,
    )


def call_sandbox(judgement: JudgementContext, pending: CaseInFlight) -> None:
    """Send the case, check what the sandbox says about the call, decode its outputs (ghosts' included).
    Host work and a gated request: the caller holds no device lock."""
    case, tier, entry = pending.case, pending.tier, pending.entry
    poison_keys = judgement.poison_keys[case.case_id]
    for key in poison_keys:
        poison_tree(pending.sent.get(key))
    before = pending.before = Call(
        args=map_tensors(pending.sent.args, lambda t: t.clone()),
        kwargs=map_tensors(pending.sent.kwargs, lambda t: t.clone()),
    )
    encoder = wire.Encoder()
    payload = encoder.encode({"args": pending.sent.args, "kwargs": pending.sent.kwargs})
    pending.sent = None  # the sandbox has its copy, ``before`` the untouched one
    asked = time.perf_counter()
    # Ghost replays send back only what is compared (the return value, mutated arguments).
    reply, blobs = judgement.session.request(
        {
            "op": "call",
            "entry_point": case.entry_point,
            "payload": payload,
            "ghost": pending.wants_ghost,
            "ghost_variants": pending.variants,
            "poison_keys": poison_keys,
            "ghost_keep": list(entry.mutates),
            "repeat": pending.wants_repeat,
        },
        encoder.blobs,
        case,
        tier,
        reply_cap=_reply_cap(encoder.blobs, pending.expected, pending.variants),
        gpu=True,
        call_limit_s=judgement.job.call_limit_s(
            judgement.reference_seconds.get(case.case_id, 0.0),
            calls=1 + (pending.variants if pending.wants_ghost else 0) + int(pending.wants_repeat),
        ),
    )
    answered = pending.answered_at = time.perf_counter()
    judgement.add_stage("correctness.sandbox_round_trip", answered - asked)
    note_sandbox_phases(judgement, reply)
    real = reply.get("real", {})
    if real.get("error"):
        error = str(real["error"])
        if device_was_full(error):
            raise Verdict(
                "error",
                f"case {case.case_id}: {DEVICE_FULL}",
                case=case,
                tier=tier,
                message=error[-2000:],
                retryable=True,
            )
        memory = any(
            word in error for word in ("out of memory", "can't allocate memory", "MemoryError", "DefaultCPUAllocator")
        )
        reason = "ran out of memory" if memory else "raised"
        raise Verdict(
            "failed_runtime",
            f"case {case.case_id} {reason}: {error.strip().splitlines()[-1][:500]}",
            case=case,
            tier=tier,
            message=error[-2000:],
        )
    if real.get("not_plain"):
        raise Verdict(
            "rejected",
            f"output is not a plain tensor: {real['not_plain'][0]}",
            check="plain_tensor_outputs",
            case=case,
            tier=tier,
            message="; ".join(real["not_plain"]),
        )
    if real.get("compute_ops"):
        ops = ", ".join(real["compute_ops"])
        raise Verdict(
            "rejected",
            f"computed outside Triton: {ops}",
            check="dispatch_audit",
            case=case,
            tier=tier,
            message=f"aten ops outside Triton: {ops}",
        )
    if int(real.get("launches", 0)) < 1:
        raise Verdict(
            "rejected",
            "no Triton kernel was launched",
            check="triton_launched",
            case=case,
            tier=tier,
            message="the call launched no Triton kernel",
        )
    check_integrity(list(reply.get("integrity", [])), case, tier)
    offsets = [int(item) for item in reply.get("ghost_blob_offsets", [])]
    offset = offsets[0] if offsets else len(blobs)
    repeat_offset = int(reply.get("repeat_blob_offset", offset)) if pending.wants_repeat else offset
    decoded = wire.Decoder(blobs[:repeat_offset], private=False).decode(real.get("value"))
    after = Call(args=list(decoded["args"]), kwargs=dict(decoded["kwargs"]))
    changed = mutated_inputs(judgement, entry, before, after)
    if changed:
        raise Verdict(
            "rejected",
            f"the call modified input {changed}",
            check="inputs_unchanged",
            case=case,
            tier=tier,
            message=f"input {changed} is not in the operator's mutates list but changed",
        )
    pending.outputs = judgement.spec.outputs_of(case, after, decoded["returned"])
    pending.reply, pending.repeat_blobs = reply, blobs[repeat_offset:offset]
    if pending.wants_ghost:
        pending.ghost_outputs = decode_ghosts(judgement, reply, blobs, offsets, case)


def judge_outputs(judgement: JudgementContext, pending: CaseInFlight, record: bool) -> None:
    """Compare the case's outputs (and ghosts', and a random operator's second draw) with the reference
    on the GPU: the caller holds it shared."""
    case, tier, before, outputs, expected = (
        pending.case,
        pending.tier,
        pending.before,
        pending.outputs,
        pending.expected,
    )
    message = compare_outputs(judgement.spec, case, before, outputs, expected)
    if message:
        raise Verdict(
            "failed_correctness", f"case {case.case_id} failed: {message}", case=case, tier=tier, message=message
        )
    if judgement.spec.fp64_relative_bound is not None:
        check_fp64_opinion(judgement, case, tier, before, outputs)
    if pending.wants_repeat:
        check_draws_differ(judgement, pending.reply, pending.repeat_blobs, case, tier, before, outputs, expected)
    if pending.wants_ghost:
        check_ghost_replay(judgement, pending.ghost_outputs, case, tier, before, expected)
    if record:
        judgement.case_results.append(
            CaseResult(case_id=case.case_id, tier=tier, params=dict(case.params), passed=True)
        )
    judgement.add_stage("correctness.checks", time.perf_counter() - pending.answered_at)


def note_sandbox_phases(judgement: JudgementContext, reply: dict[str, Any]) -> None:
    """The sandbox's own account of a call (decode, call, encode; ghosts apart; Triton compilations).
    Untrusted numbers, used only to show where time goes; malformed ones are ignored."""
    for kind, outcomes in (("sandbox", [reply.get("real", {})]), ("sandbox.ghost", reply.get("ghosts", []))):
        for outcome in outcomes if isinstance(outcomes, list) else []:
            phases = outcome.get("phase_s") if isinstance(outcome, dict) else None
            if not isinstance(phases, dict):
                continue
            for phase in ("decode", "call", "encode", "launchers_lent"):
                value = wire.bounded(phases.get(phase))
                if value is not None:
                    judgement.add_stage(f"{kind}.{phase}", value)
            compiles = outcome.get("compiles")
            if kind == "sandbox" and wire.bounded(compiles, kinds=(int,)) is not None:
                environment = judgement.environment
                environment["triton_compilations"] = environment.get("triton_compilations", 0) + compiles
                call_s = wire.bounded(phases.get("call"))
                if compiles and call_s is not None:
                    # Calls that compiled: mostly Triton compilation, done while the GPU is held shared.
                    judgement.add_stage("sandbox.call_compiling", call_s)


def check_draws_differ(
    judgement: JudgementContext,
    reply: dict[str, Any],
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
    repeat = reply.get("repeat")
    if not isinstance(repeat, dict):
        raise Verdict("error", f"case {case.case_id}: the sandbox did not make the second call")
    if repeat.get("error"):
        raise Verdict(
            "failed_runtime",
            f"case {case.case_id}: the second call raised: {str(repeat['error']).strip().splitlines()[-1][:500]}",
            case=case,
            tier=tier,
            message=str(repeat["error"])[-2000:],
        )
    if repeat.get("compute_ops") or int(repeat.get("launches", 0)) < 1 or repeat.get("not_plain"):
        raise Verdict(
            "rejected",
            f"case {case.case_id}: the second call computed outside Triton or launched nothing",
            check="dispatch_audit",
            case=case,
            tier=tier,
            message=f"second call: ops {repeat.get('compute_ops')}, launches {repeat.get('launches')}",
        )
    decoded = wire.Decoder(blobs, private=False).decode(repeat.get("value"))
    second = judgement.spec.outputs_of(
        case, Call(args=list(decoded["args"]), kwargs=dict(decoded["kwargs"])), decoded["returned"]
    )
    message = compare_outputs(judgement.spec, case, before, second, expected)
    if message:
        raise Verdict(
            "failed_correctness", f"case {case.case_id}, second call: {message}", case=case, tier=tier, message=message
        )
    if not bit_identical(list(outputs), list(second)):
        judgement.check("random_draws_differ", "passed", "two calls on the same inputs drew different values")
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
    for key in entry.mutates:
        if sum(tensor.numel() for tensor in flat_tensors(sent.get(key))) == 0:
            continue
        private = to_device(sent, judgement.reference_device)  # a copy: ``sent`` itself stays as drawn
        poison_tree(private.get(key))
        returned = judgement.spec.reference(case, private)
        outputs = map_tensors(judgement.spec.outputs_of(case, private, returned), lambda t: t.detach())
        if (
            judgement.spec.judgement == "statistical"
            or compare_outputs(judgement.spec, case, sent, outputs, expected) is None
        ):
            keys.append(key)
    return keys


def decode_ghosts(
    judgement: JudgementContext, reply: dict[str, Any], blobs: list[bytes], offsets: list[int], case: Case
) -> list[tuple[Any, ...] | None]:
    """Each ghost replay's compared outputs, in order; None for a replay that raised or returned something
    other than plain tensors (its launches mattered). Empty when the reply holds no usable replays."""
    ghosts = reply.get("ghosts", [])
    if not ghosts or len(ghosts) != len(offsets):
        return []
    bounds = [*offsets, len(blobs)]
    decoded_outputs: list[tuple[Any, ...] | None] = []
    for index, ghost in enumerate(ghosts):
        if ghost.get("error") or ghost.get("not_plain"):
            decoded_outputs.append(None)
            continue
        decoded = wire.Decoder(blobs[bounds[index] : bounds[index + 1]], private=False).decode(ghost.get("value"))
        decoded_outputs.append(
            judgement.spec.outputs_of(
                case, Call(args=list(decoded["args"]), kwargs=dict(decoded["kwargs"])), decoded["returned"]
            )
        )
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


def doing_nothing_is_correct(judgement: JudgementContext, case: Case, before: Call, expected: tuple[Any, ...]) -> bool:
    """True when an in-place call's right answer is its untouched inputs, so a no-op replay must pass."""
    entry = judgement.spec.entry_point(case.entry_point)
    if entry.compare_return or not entry.mutates:
        return False
    untouched = tuple(before.get(key) for key in entry.mutates)
    return compare_outputs(judgement.spec, case, before, untouched, expected) is None


def _reply_cap(sent: list[bytes], expected: tuple[Any, ...], variants: int) -> int:
    """Most bytes a call's reply may carry: inputs and outputs for the real call and each ghost, with slack
    (a reply beyond it is a protocol violation, not a reason to exhaust the judge's memory)."""
    expected_bytes = sum(item.numel() * item.element_size() for item in flat_tensors(expected))
    return 64 * 1024 * 1024 + 4 * (1 + variants) * (sum(len(blob) for blob in sent) + expected_bytes)

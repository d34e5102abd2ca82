"""The trusted side's correctness stage: every case of the operator, each in three steps (inputs and
reference; the sandbox's call, real and ghost replays; the comparisons), and the run-time checks on what
comes back (inputs unchanged, ghost replay, float64 second opinion, random draws that differ).

Functions of a judgement in progress (context.JudgementContext), as timing_trusted's are: the context's
session owns the sandbox and the device lock; this module decides what a case's outputs mean, and stops the
judgement with a Verdict when they are wrong.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from evaluation.catalog.spec import Call, Case
from evaluation.judge import faults, interpreter_defects, protocol, wire
from evaluation.judge.checks import (
    check_draws_differ,
    check_fp64_opinion,
    check_ghost_replay,
    decode_call,
    decode_ghosts,
    mutated_inputs,
    pure_output_keys,
    unless_well_posed,
    untouched_is_the_answer,
)
from evaluation.judge.compare import (
    compare_outputs,
    flat_tensors,
    map_tensors,
    tensor_bytes,
)
from evaluation.judge.context import JudgementContext
from evaluation.judge.inputs import call_bytes
from evaluation.judge.job import CaseResult
from evaluation.judge.untrusted.guard import poison_tree
from evaluation.judge.verdicts import DEVICE_FULL, Verdict, check_integrity, derive_seed, device_was_full_by_our_reading


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
    reply: protocol.Called | None = None
    repeat_blobs: list[bytes] = field(default_factory=list)
    ghost_outputs: list[tuple[Any, ...] | None] = field(default_factory=list)
    answered_at: float = 0.0
    # The twin replay (guard.Twins): another draw of the case's inputs, which Triton reads while the wrapper
    # sees ``sent``; its reference's outputs, an untouched copy of it, and what the replay gave back.
    twin_sent: Call | None = None
    twin_expected: tuple[Any, ...] = ()
    twin_before: Call | None = None
    twin_outputs: tuple[Any, ...] | None = None


def run_correctness(judgement: JudgementContext) -> None:
    """Every case, in order. Each takes the GPU twice: one case's comparisons and the next case's inputs
    and reference share a hold (every hold taken is a chance to queue behind a timer: on the H200 with 24
    judges the 40,658 shared holds of a 110-kernel submission waited 3,233 s in all)."""
    started = time.monotonic()
    suspect = InterpreterSuspect(judgement)
    previous: CaseInFlight | None = None
    for tier, case in judgement.cases:
        with judgement.session.device_shared("checks+inputs" if previous is not None else "inputs"):
            if previous is not None:
                with suspect.deferring():
                    judge_outputs(judgement, previous, record=True)
                judgement.session.yield_to_timer("inputs")
            previous = None
            if suspect.skips(case):
                continue
            pending = prepare_case(judgement, tier, case, derive_seed(judgement.secret, tier, case.case_id, 0))
        if judgement.reference_device.type != "cpu":
            # Sixteen judges' allocator caches (up to 9 GiB each seen) ran the H200 out of memory.
            judgement.backend.release_cached_memory_over(judgement.trusted_cache_bytes)
        with suspect.deferring():
            call_sandbox(judgement, pending)
            previous = pending
    if previous is not None:
        with judgement.session.device_shared("checks"), suspect.deferring():
            judge_outputs(judgement, previous, record=True)
    suspect.stand()
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
        views_only = all(entry.returns_view for entry in judgement.spec.entry_points)
        if not judgement.options.ghost_replay:
            judgement.check("ghost_replay", "skipped", "switched off")
        elif views_only:
            judgement.check("ghost_replay", "skipped", "a view is the input's own memory: nothing to compute")
        else:
            judgement.check("ghost_replay", "passed", "with launches disabled every case's output was wrong")


class InterpreterSuspect:
    """A failure blamed on a known CPU-interpreter defect of one dtype is a claim: the kernel is right
    elsewhere. So it does not stop the judgement at once: the cases without that dtype still run, and the
    first of them to fail is the verdict (the kernel's own bug), while the other cases with the dtype are
    skipped. Only if all of those pass does the interpreter's failure stand, saying how many did. Off the
    interpreter no reason names a defect, and the first failure stops the judgement as always."""

    def __init__(self, judgement: JudgementContext) -> None:
        self.judgement = judgement
        self.verdict: Verdict | None = None
        self.skipped = 0

    @contextlib.contextmanager
    def deferring(self) -> Any:
        try:
            yield
        except Verdict as verdict:
            if self.verdict is None and verdict.interpreter_dtype:
                self.verdict = verdict
                return
            if self.verdict is not None:  # a real failure elsewhere: the interpreter is not the likely cause
                if not verdict.interpreter_dtype:
                    self.judgement.checks.pop("interpreter_defect", None)
                earlier = self.verdict
                verdict.message += f"\n(before it, a {earlier.interpreter_dtype} case failed: {earlier.reason})"
            raise

    def skips(self, case: Case) -> bool:
        """True for a case holding the suspect dtype, once a failure is deferred (counted as not run)."""
        if self.verdict is None or self.verdict.interpreter_dtype not in json.dumps(case.params):
            return False
        self.skipped += 1
        return True

    def stand(self) -> None:
        """At the end of the cases: raise the deferred failure, with the evidence for the interpreter."""
        judgement, verdict = self.judgement, self.verdict
        if verdict is None:
            return
        dtype = verdict.interpreter_dtype
        others = sum(dtype not in passed for passed in judgement.passed_case_dtypes)
        verdict.reason += (
            f" ({_cases(others)} without {dtype} passed; {_cases(self.skipped)} with {dtype} not run after it)"
        )
        raise verdict


def _cases(count: int) -> str:
    return f"{count} case" if count == 1 else f"{count} cases"


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
        judgement.inputs_meta[case.case_id] = Call(
            args=map_tensors(list(sent.args), lambda t: t.to("meta")),
            kwargs=map_tensors(dict(sent.kwargs), lambda t: t.to("meta")),
        )
        judgement.case_bytes[case.case_id] = call_bytes(sent) + tensor_bytes(expected)
    judgement.add_stage("correctness.reference", time.perf_counter() - built)
    expected_tensors = flat_tensors(expected)
    wants_ghost = (
        ghost
        and judgement.options.ghost_replay
        and judgement.spec.judgement != "metadata"
        and not entry.returns_view
        and any(item.numel() > 0 for item in expected_tensors)
    )
    twin_sent, twin_expected = None, ()
    random_answer = judgement.spec.judgement == "statistical" and not judgement.spec.answer_is_deterministic
    if wants_ghost and judgement.options.twin_replay and not random_answer:
        twin_started = time.perf_counter()
        twin_sent = judgement.make_call(case, twin_seed(seed))
        if same_call_outline(sent, twin_sent):
            twin_expected = judgement.expected(case, twin_sent)
            if _outputs_equal(twin_expected, expected):
                twin_sent = None  # the answer does not depend on the inputs' values: the replay proves nothing
        else:
            twin_sent = None  # a builder that draws shapes or scalars: no twin of the same call
        # The twin replay's own costs are kept apart (correctness.twin_*, sandbox.twin.*): what it adds.
        judgement.add_stage("correctness.twin_inputs", time.perf_counter() - twin_started)
    return CaseInFlight(
        tier=tier,
        case=case,
        entry=entry,
        sent=sent,
        expected=expected,
        twin_sent=twin_sent,
        twin_expected=twin_expected,
        # A view (``-> Tensor(a)``) is right when it is the input's own memory: a replay with no launches
        # returns the same view, and proves nothing (the dispatch audit still refuses compute on the host).
        wants_ghost=wants_ghost,
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
    twin_payload = None
    if pending.twin_sent is not None:
        twin_started = time.perf_counter()
        # Not poisoned: which arguments are pure outputs is worked out on the real draw (a mask all True
        # makes masked_fill_'s self one), and need not hold for this one.
        twin = pending.twin_sent
        pending.twin_before = Call(
            args=map_tensors(twin.args, lambda t: t.clone()), kwargs=map_tensors(twin.kwargs, lambda t: t.clone())
        )
        twin_payload = encoder.encode({"args": twin.args, "kwargs": twin.kwargs})
        pending.twin_sent = None
        judgement.add_stage("correctness.twin_encode", time.perf_counter() - twin_started)
    pending.sent = None  # the sandbox has its copy, ``before`` the untouched one
    asked = time.perf_counter()
    # Ghost replays send back only what is compared (the return value, mutated arguments).
    reply: protocol.Called
    reply, blobs = judgement.session.request(
        protocol.CallCase(
            entry_point=case.entry_point,
            payload=payload,
            ghost=pending.wants_ghost,
            ghost_variants=pending.variants,
            poison_keys=tuple(poison_keys),
            ghost_keep=tuple(entry.mutates),
            repeat=pending.wants_repeat,
            twin_payload=twin_payload,
        ),
        encoder.blobs,
        case,
        tier,
        reply_cap=_reply_cap(encoder.blobs, pending.expected, pending.variants + int(twin_payload is not None)),
        gpu=True,
        call_limit_s=_call_limit_s(judgement, pending, twin=twin_payload is not None),
    )
    answered = pending.answered_at = time.perf_counter()
    judgement.add_stage("correctness.sandbox_round_trip", answered - asked)
    note_sandbox_phases(judgement, reply)
    check_call_outcome(judgement, pending, reply.real, before, pending.expected)
    check_integrity(list(reply.integrity), case, tier)
    twin_offset = len(blobs)
    if pending.twin_before is not None and reply.twin is not None and reply.twin_blob_offset is not None:
        twin_offset = reply.twin_blob_offset
        check_call_outcome(judgement, pending, reply.twin, pending.twin_before, pending.twin_expected, twin=True)
    blobs, twin_blobs = blobs[:twin_offset], blobs[twin_offset:]
    offsets = list(reply.ghost_blob_offsets)
    offset = offsets[0] if offsets else len(blobs)
    repeat_offset = offset
    if pending.wants_repeat and reply.repeat_blob_offset is not None:
        repeat_offset = reply.repeat_blob_offset
    # The reply's trees come from the kernel's process as its header does (session.decoding_reply).
    with judgement.session.decoding_reply(case, tier):
        after, returned = decode_call(reply.real.value, blobs[:repeat_offset], before, entry)
        if pending.wants_ghost:
            pending.ghost_outputs = decode_ghosts(judgement, reply, blobs, case, before, pending.variants)
        if twin_blobs and reply.twin is not None:
            twin_after, twin_returned = decode_call(reply.twin.value, twin_blobs, pending.twin_before, entry)
            pending.twin_outputs = judgement.spec.outputs_of(case, twin_after, twin_returned)
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
    pending.outputs = judgement.spec.outputs_of(case, after, returned)
    pending.reply, pending.repeat_blobs = reply, blobs[repeat_offset:offset]


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
        message = unless_well_posed(judgement, case, before, outputs, expected, message)
    dtypes = interpreter_defects.tensor_dtypes(before.args, before.kwargs, expected)
    if message:
        reason = f"case {case.case_id} failed: {message}"
        defect = None
        if judgement.job.device_type == "cpu":
            defect = interpreter_defects.for_mismatch(
                dtypes=dtypes,
                other_dtypes_passed=any("bfloat16" not in passed for passed in judgement.passed_case_dtypes),
            )
            reason += _defect_note(judgement, defect)
        raise Verdict(
            "failed_correctness",
            reason,
            case=case,
            tier=tier,
            message=message,
            interpreter_dtype=defect.needs_dtype if defect else None,
        )
    if judgement.spec.fp64_relative_bound is not None:
        check_fp64_opinion(judgement, case, tier, before, outputs)
    if pending.wants_repeat:
        check_draws_differ(judgement, pending.reply, pending.repeat_blobs, case, tier, before, outputs, expected)
    if pending.wants_ghost:
        check_ghost_replay(judgement, pending.ghost_outputs, case, tier, before, expected)
    if pending.twin_outputs is not None:
        twin_started = time.perf_counter()
        check_twin_replay(judgement, pending, expected)
        judgement.add_stage("correctness.twin_checks", time.perf_counter() - twin_started)
    judgement.passed_case_dtypes.append(dtypes)
    if record:
        judgement.case_results.append(
            CaseResult(case_id=case.case_id, tier=tier, params=dict(case.params), passed=True)
        )
    judgement.add_stage("correctness.checks", time.perf_counter() - pending.answered_at)


def twin_seed(seed: int) -> int:
    """The seed of a case's twin replay: another draw of the same case, from the same secret."""
    return (seed * 0x9E3779B1 + 0x7F4A7C15) % (2**31 - 1)


def same_call_outline(first: Call, second: Call) -> bool:
    """True when two draws of a case are the same call but for their tensors' values: the same non-tensor
    arguments, and tensors of the same dtypes, shapes, strides, offsets and storage sizes, in the same places
    (a twin replay needs every storage of the call to have a twin of the same layout)."""

    def outline(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return (
                "tensor",
                value.dtype,
                tuple(value.shape),
                value.stride(),
                value.storage_offset(),
                value.untyped_storage().nbytes(),
                value.device.type,
            )
        if isinstance(value, (list, tuple)):
            return (type(value).__name__, tuple(outline(item) for item in value))
        if isinstance(value, dict):
            return ("dict", tuple((key, outline(value[key])) for key in sorted(value, key=str)))
        if isinstance(value, (bool, int, float, complex, str, type(None), torch.dtype, torch.device)):
            return value
        return ("other", type(value).__name__, id(value))  # a generator, a layout: never equal between draws

    return outline([first.args, first.kwargs]) == outline([second.args, second.kwargs])


def _outputs_equal(first: tuple[Any, ...], second: tuple[Any, ...]) -> bool:
    left, right = flat_tensors(first), flat_tensors(second)
    return len(left) == len(right) and all(
        a.shape == b.shape and a.dtype == b.dtype and torch.equal(a, b) for a, b in zip(left, right, strict=True)
    )


def _call_limit_s(judgement: JudgementContext, pending: CaseInFlight, *, twin: bool) -> float:
    """The request's limit: the per-call limit for each call it makes, and the floor for each that launches
    (the real call, a random operator's repeat, the twin replay; ghost replays launch nothing). Without the
    floor per call, an interpreted kernel near a minute a call ran out of time in its twin replay."""
    launching = 1 + int(pending.wants_repeat) + int(twin)
    calls = launching + (pending.variants if pending.wants_ghost else 0)
    job = judgement.job
    return max(
        job.call_limit_s(judgement.reference_seconds.get(pending.case.case_id, 0.0), calls),
        launching * job.call_limit_s(0.0),
    )


def check_call_outcome(
    judgement: JudgementContext,
    pending: CaseInFlight,
    outcome: protocol.CallOutcome,
    before: Call,
    expected: tuple[Any, ...],
    *,
    twin: bool = False,
) -> None:
    """What the sandbox says of one call (the real one, or its twin replay: the same rules): compute outside
    Triton, an error, outputs that are not plain tensors, no launch. Compute outside Triton is judged first:
    it happened before any error it led to (the host-read budget raises in the kernel's call once overrun)."""
    case, tier = pending.case, pending.tier
    where = ", on another draw of its inputs," if twin else ""
    if outcome.compute_ops:
        ops = ", ".join(outcome.compute_ops)
        raise Verdict(
            "rejected",
            f"computed outside Triton: {ops}",
            check="dispatch_audit",
            case=case,
            tier=tier,
            message=f"aten ops outside Triton{' (twin replay)' if twin else ''}: {ops}",
        )
    if outcome.error:
        error = outcome.error
        device_type = judgement.job.device_type
        if device_was_full_by_our_reading(error, device_type):
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
        fault = faults.device_fault(error)
        if fault:
            reason = f"case {case.case_id}{where}: {fault} ({faults.last_line(error, 300)})"
        else:
            happened = "ran out of memory" if memory else "raised"
            reason = f"case {case.case_id}{where} {happened}: {faults.last_line(error)}"
        defect = None
        if device_type == "cpu":
            dtypes = interpreter_defects.tensor_dtypes(before.args, before.kwargs, expected)
            defect = interpreter_defects.for_error(error, dtypes=dtypes)
            reason += _defect_note(judgement, defect)
        raise Verdict(
            "failed_runtime",
            reason,
            case=case,
            tier=tier,
            message=faults.tail_lines(error),
            interpreter_dtype=defect.needs_dtype if defect else None,
        )
    if outcome.not_plain:
        raise Verdict(
            "rejected",
            f"output is not a plain tensor: {outcome.not_plain[0]}",
            check="plain_tensor_outputs",
            case=case,
            tier=tier,
            message="; ".join(outcome.not_plain),
        )
    if (
        outcome.launches < 1
        and not nothing_to_compute(expected)
        # BLAS's quick return (gemv with alpha 0 and beta 1 leaves y as it was; so does cuBLAS): no work
        and not untouched_is_the_answer(judgement, case, before, expected)
    ):
        raise Verdict(
            "rejected",
            f"no Triton kernel was launched{' in the twin replay' if twin else ''}",
            check="triton_launched",
            case=case,
            tier=tier,
            message=f"the {'twin replay' if twin else 'call'} launched no Triton kernel",
        )


def check_twin_replay(judgement: JudgementContext, pending: CaseInFlight, expected: tuple[Any, ...]) -> None:
    """The twin replay's outputs must be the answer for the values Triton read (the twins). Where they are
    the answer for the values the wrapper was given instead, the work was done where Triton was not
    (rejected); where they are neither, the kernel is wrong on another draw of the case (failed)."""
    case, tier, before, outputs = pending.case, pending.tier, pending.twin_before, pending.twin_outputs
    message = compare_outputs(judgement.spec, case, before, outputs, pending.twin_expected)
    if message:
        message = unless_well_posed(judgement, case, before, outputs, pending.twin_expected, message)
    if not message:
        judgement.check("twin_replay", "passed", "the outputs followed the values Triton read")
        return
    if compare_outputs(judgement.spec, case, pending.before, outputs, expected, explain=False) is None:
        raise Verdict(
            "rejected",
            f"case {case.case_id}: the output is the answer for the inputs the wrapper was given, not for the "
            "other values its Triton launches read in their place: the work was done outside Triton",
            check="twin_replay",
            case=case,
            tier=tier,
            message="twin replay: the outputs followed the call's own inputs, not what Triton read",
        )
    raise Verdict(
        "failed_correctness",
        f"case {case.case_id} failed on another draw of its inputs (its twin replay: the same call again, which "
        "had just passed, with its Triton launches reading another draw of the case where the wrapper's inputs "
        f"are; a kernel that keeps state from one call to the next fails here too): {message}",
        case=case,
        tier=tier,
        message=message,
    )


def nothing_to_compute(expected: tuple[Any, ...]) -> bool:
    """True when every output the reference gives is a tensor of no elements (a diff of order 2 along a dim
    of 1): there is no work for a kernel to do, so a call that launches none is not a fallback to torch
    (an honest kernel returns early there; seen on the H200)."""
    tensors = flat_tensors(expected)
    return bool(tensors) and len(tensors) == len(expected) and all(tensor.numel() == 0 for tensor in tensors)


def _defect_note(judgement: JudgementContext, defect: interpreter_defects.InterpreterDefect | None) -> str:
    """The reason's suffix naming a known interpreter defect (and a noted check saying why), or ""."""
    if defect is None:
        return ""
    judgement.check("interpreter_defect", "noted", f"{defect.name}: {defect.why}")
    return f"; {defect.note}"


def note_sandbox_phases(judgement: JudgementContext, reply: protocol.Called) -> None:
    """The sandbox's own account of a call (decode, call, encode; ghosts and the twin apart; Triton compilations).
    Untrusted numbers, used only to show where time goes (the decoder dropped malformed ones)."""
    twins = [reply.twin] if reply.twin is not None else []
    for kind, outcomes in (("sandbox", [reply.real]), ("sandbox.ghost", reply.ghosts), ("sandbox.twin", twins)):
        for outcome in outcomes:
            for phase in protocol.CALL_PHASES:
                value = outcome.phase_s.get(phase)
                if value is not None:
                    judgement.add_stage(f"{kind}.{phase}", value)
            if kind == "sandbox" and outcome.compiles is not None:
                environment = judgement.environment
                environment["triton_compilations"] = environment.get("triton_compilations", 0) + outcome.compiles
                call_s = outcome.phase_s.get("call")
                if outcome.compiles and call_s is not None:
                    # Calls that compiled: mostly Triton compilation, done while the GPU is held shared.
                    judgement.add_stage("sandbox.call_compiling", call_s)


def _reply_cap(sent: list[bytes], expected: tuple[Any, ...], variants: int) -> int:
    """Most bytes a call's reply may carry: inputs and outputs for the real call and each ghost, with slack
    (a reply beyond it is a protocol violation, not a reason to exhaust the judge's memory)."""
    expected_bytes = tensor_bytes(expected)
    return 64 * 1024 * 1024 + 4 * (1 + variants) * (sum(len(blob) for blob in sent) + expected_bytes)

"""Record features the judge must honour: list-valued outputs, scratch arguments, mutated_are_inputs,
per-output tolerances, the complex64 fp64 opinion, what timing was measured against, and 0-dim timing."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest
import torch
from conftest import check_outcomes, cos_record, kernel_source, small_cos_record

from evaluation.catalog.spec import Call, Case, EntryPoint, OperatorSpec
from evaluation.judge import wire
from evaluation.judge.compare import compare_outputs, fp64_relative_error
from evaluation.judge.job import JudgeJob
from evaluation.judge.runner import JudgeOptions, TimingOptions, judge_with
from evaluation.judge.untrusted.timing import reference_thunks, time_interleaved

CASE = Case("cos_list", {"n": 33})


def list_record(*, mutated_are_inputs: bool = False) -> OperatorSpec:
    """Test-only: ``cos_list(outs, x)`` writes cos(x) into each tensor of the list ``outs`` (like cuBLAS's
    Carray pointer arrays or vLLM's per-layer caches)."""

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        n = case.params["n"]
        x = torch.rand(n, generator=generator) * 4 - 2
        outs = [torch.rand(n, generator=generator) + 5 for _ in range(3)]
        return Call(args=[outs, x])

    def reference(case: Case, call: Call) -> None:
        for out in call.args[0]:
            out.copy_(torch.cos(call.args[1]))

    entry = EntryPoint(
        "cos_list",
        "cos_list(outs: list[Tensor], x: Tensor) -> None",
        mutates=(0,),
        compare_return=False,
        mutated_are_inputs=mutated_are_inputs,
    )
    return OperatorSpec(
        "test::cos_list",
        "aten",
        "test record",
        (entry,),
        make_inputs,
        reference,
        smoke=(CASE,),
        public=(),
        held_out=lambda rng: (),
    )


def scratch_record(scratch: tuple[int, ...]) -> OperatorSpec:
    """Test-only: ``cos_ws(out, workspace, x)``: the workspace may hold anything afterwards."""

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        x = torch.rand(33, generator=generator) * 4 - 2
        return Call(args=[torch.empty(33), torch.zeros(33), x])

    def reference(case: Case, call: Call) -> None:
        call.args[0].copy_(torch.cos(call.args[2]))

    entry = EntryPoint(
        "cos_ws", "cos_ws(out, workspace, x) -> None", mutates=(0,), compare_return=False, scratch=scratch
    )
    return OperatorSpec(
        "test::cos_ws",
        "aten",
        "test record",
        (entry,),
        make_inputs,
        reference,
        smoke=(Case("cos_ws", {"n": 33}),),
        public=(),
        held_out=lambda rng: (),
    )


def judge_record(warm_forkserver, kernel: str, spec: OperatorSpec):
    job = JudgeJob(spec.operator_id, kernel_source(kernel), "cpu-interpreter", "cpu", time_budget_s=120)
    return judge_with(job, JudgeOptions(spec=spec))


# ---------------------------------------------------------------- B: lists


def test_list_outputs_are_compared_element_by_element():
    spec = list_record()
    right = [torch.ones(3), torch.ones(3)]

    assert compare_outputs(spec, CASE, Call(args=[]), ([torch.ones(3), torch.ones(3)],), (right,)) is None
    assert compare_outputs(spec, CASE, Call(args=[]), ([torch.ones(3), torch.zeros(3)],), (right,)) == (
        "output 0[1]: 3 of 3 values outside atol=0.0001 rtol=1e-05; worst at [0]: 0 from the kernel, "
        "1 from the reference (|difference| 1)"
    )
    assert compare_outputs(spec, CASE, Call(args=[]), ([torch.ones(3)],), (right,)) == (
        "output 0: list of 1 item(s), expected 2"
    )
    assert compare_outputs(spec, CASE, Call(args=[]), (torch.ones(3),), (right,)) == (
        "output 0: expected a list of 2, got Tensor"
    )


def test_honest_list_kernel_passes(warm_forkserver):
    result = judge_record(warm_forkserver, "lists/cos_list.py", list_record())

    assert (result.status, result.cases_passed) == ("passed", 1)


def test_kernel_that_never_writes_the_rest_of_the_list_fails(warm_forkserver):
    for mutated_are_inputs in (False, True):
        result = judge_record(
            warm_forkserver, "lists/cos_list_first_only.py", list_record(mutated_are_inputs=mutated_are_inputs)
        )

        assert result.status == "failed_correctness"
        assert "output 0[1]:" in result.reason


# ---------------------------------------------------------------- D: mutated_are_inputs and scratch


def test_mutated_are_inputs_are_never_poisoned_before_the_call(warm_forkserver):
    # The kernel reads its destination: right when it arrives as the record built it, NaN when poisoned.
    trusted = judge_record(warm_forkserver, "lists/cos_list_reads_dst.py", list_record(mutated_are_inputs=True))
    heuristic = judge_record(warm_forkserver, "lists/cos_list_reads_dst.py", list_record(mutated_are_inputs=False))

    assert trusted.status == "passed"
    assert heuristic.status == "failed_correctness"  # the previous rule: pure outputs arrive poisoned
    assert "NaN" in heuristic.reason


def test_timed_rounds_poison_only_the_keys_they_are_given():
    # untrusted.timing between rounds: poison_keys are poisoned, restore_keys put back, nothing else touched.
    def make(seed: int) -> dict:
        generator = torch.Generator().manual_seed(seed)
        return {"args": [[torch.rand(4, generator=generator) + 1], torch.rand(4, generator=generator)], "kwargs": {}}

    seen: list[bool] = []
    values: list[torch.Tensor] = []

    def candidate(outs, x):
        seen.append(bool(torch.isnan(outs[0]).any()))
        values.append(outs[0].clone())
        outs[0].add_(1)

    for poison_keys, restore_keys, expect_nan in (([], [0], False), ([0], [], True)):
        seen.clear()
        values.clear()
        candidate_sets, reference_sets = [make(1), make(2)], [make(3)]
        # The loop's probe call runs on a reference set (untrusted.timing): its values count as a set's too.
        originals = [call["args"][0][0].clone() for call in candidate_sets + reference_sets]
        time_interleaved(
            candidate=candidate,
            reference=lambda args, kwargs: None,
            candidate_sets=candidate_sets,
            reference_sets=reference_sets,
            flush_buffer=None,
            budget_s=1.0,
            rse_target=0.0,
            min_iterations=3,
            max_iterations=4,
            spot_checks=0,
            rng=random.Random(0),
            keep_alive=[],
            min_launches=0,
            math_isfinite=lambda value: True,
            poison_keys=poison_keys,
            restore_keys=restore_keys,
            host_clock=True,
        )
        assert set(seen) == {expect_nan}
        if not expect_nan:  # put back before every call (from some set's first values: ValueRotation)
            assert all(any(torch.equal(value, original) for original in originals) for value in values)


def test_a_candidate_buffer_never_holds_the_same_values_two_rounds_in_a_row():
    # EXPLOITS 7: the rotating sets come back every k calls; each round refills set i's buffers with set
    # (i + round) mod k's values, so a result cached by address is the answer to other inputs.
    def make(seed: int) -> dict:
        generator = torch.Generator().manual_seed(seed)
        return {"args": [torch.rand(8, generator=generator)], "kwargs": {"out": torch.empty(8)}}

    sets, reference_sets = [make(seed) for seed in range(4)], [make(9), make(10)]
    originals = [call["args"][0].clone() for call in sets]
    seen: list[tuple[int, int]] = []
    probed: list[int] = []

    def candidate(x, *, out):
        source = next((index for index, original in enumerate(originals) if torch.equal(x, original)), None)
        if source is None:  # the kernel-time probe, on a reference set (values no candidate call saw)
            probed.append(next(i for i, call in enumerate(reference_sets) if call["args"][0] is x))
        else:
            seen.append((x.data_ptr(), source))
        out.copy_(x)
        return out

    result = time_interleaved(
        candidate=candidate,
        reference=lambda args, kwargs: None,
        candidate_sets=sets,
        reference_sets=reference_sets,
        flush_buffer=None,
        budget_s=60.0,
        rse_target=0.0,
        min_iterations=13,
        max_iterations=13,
        spot_checks=4,
        rng=random.Random(0),
        keep_alive=[],
        min_launches=0,
        math_isfinite=lambda value: True,
        poison_keys=["out"],
        host_clock=True,
    )
    # 16 calls, the first round (4) in place, then the kernel-time probe on a reference set.
    assert result["value_rotation"] == "on: 12 fills"
    assert len(probed) == 1
    by_buffer: dict[int, list[int]] = {}
    for pointer, source in seen:
        by_buffer.setdefault(pointer, []).append(source)
    assert len(by_buffer) == 4
    assert sorted(len(sources) for sources in by_buffer.values()) == [4, 4, 4, 4]
    for sources in by_buffer.values():
        assert all(a != b for a, b in zip(sources, sources[1:], strict=False))
    # Spot checks come from the second round on (a cache can only hit there), copied on the device.
    assert result["spot_count"] == 4 and len(result["_spots"]) == 4
    for spot in result["_spots"]:
        assert torch.equal(spot["returned"], spot["before"]["args"][0])
        assert spot["returned"].data_ptr() == spot["kwargs"]["out"].data_ptr()  # aliases kept
        # The set whose values it held, which the trusted side draws again to check the spot's inputs.
        assert torch.equal(spot["before"]["args"][0], originals[spot["set"]])
    # Sets that differ in structure (a plain argument drawn from the seed) are left alone, and say so.
    uneven = [make(0), {"args": [torch.rand(8)], "kwargs": {"out": torch.empty(8), "n": 3}}]
    left = time_interleaved(
        candidate=lambda x, *, out, n=0: out,
        reference=lambda args, kwargs: None,
        candidate_sets=uneven,
        reference_sets=[make(1)],
        flush_buffer=None,
        budget_s=60.0,
        rse_target=0.0,
        min_iterations=3,
        max_iterations=3,
        spot_checks=0,
        rng=random.Random(0),
        keep_alive=[],
        min_launches=0,
        math_isfinite=lambda value: True,
        poison_keys=["out"],
        host_clock=True,
    )
    assert left["value_rotation"] == "off: the sets differ in structure"
    # So are sets whose poisoned output is sized from the seed (a gather's destination, on the H200: values
    # rotated into a smaller one were written past its end).
    sized = [{"args": [torch.rand(8), torch.empty(count)], "kwargs": {}} for count in (5, 7)]
    assert (
        time_interleaved(
            candidate=lambda x, out: out,
            reference=lambda args, kwargs: None,
            candidate_sets=sized,
            reference_sets=[{"args": [torch.rand(8), torch.empty(6)], "kwargs": {}}],  # drawn as the case draws
            flush_buffer=None,
            budget_s=60.0,
            rse_target=0.0,
            min_iterations=3,
            max_iterations=3,
            spot_checks=0,
            rng=random.Random(0),
            keep_alive=[],
            min_launches=0,
            math_isfinite=lambda value: True,
            poison_keys=[1],
            host_clock=True,
        )["value_rotation"]
        == "off: the sets differ in structure"
    )
    # Broadcast (stride-0) inputs are refilled storage by storage.
    broadcast = [{"args": [torch.rand(1, 4).expand(3, 4)], "kwargs": {"out": torch.empty(3, 4)}} for _ in range(2)]
    assert (
        time_interleaved(
            candidate=lambda x, *, out: out,
            reference=lambda args, kwargs: None,
            candidate_sets=broadcast,
            reference_sets=[make(1)],
            flush_buffer=None,
            budget_s=60.0,
            rse_target=0.0,
            min_iterations=3,
            max_iterations=3,
            spot_checks=0,
            rng=random.Random(0),
            keep_alive=[],
            min_launches=0,
            math_isfinite=lambda value: True,
            poison_keys=["out"],
            host_clock=True,
        )["value_rotation"]
        == "on: 4 fills"  # 6 calls, the first round (2) in place (the probe runs on a reference set)
    )


def test_scratch_arguments_may_change_and_are_never_judged(warm_forkserver):
    exempt = judge_record(warm_forkserver, "lists/cos_list.py", scratch_record(scratch=(1,)))
    undeclared = judge_record(warm_forkserver, "lists/cos_list.py", scratch_record(scratch=()))

    assert exempt.status == "passed"
    assert (undeclared.status, undeclared.reason) == ("rejected", "the call modified input #1")


# ---------------------------------------------------------------- C, E: tolerances and the fp64 opinion


def test_per_output_tolerances_come_from_the_record():
    spec = dataclasses.replace(list_record(), output_tolerances=((1.0, 0.0), None))
    codes = torch.tensor([1, -5, 7], dtype=torch.int8)

    assert compare_outputs(spec, CASE, Call(args=[]), (codes + 1, codes), (codes, codes)) is None
    assert compare_outputs(spec, CASE, Call(args=[]), (codes + 2, codes), (codes, codes)) == (
        "output 0: 3 of 3 values outside atol=1 rtol=0; worst at [0]: 3 from the kernel, 1 from the reference"
    )
    assert compare_outputs(spec, CASE, Call(args=[]), (codes, codes + 1), (codes, codes)) == (
        "output 1: 3 of 3 values differ (exact match required); first at [0]: 2 from the kernel, 1 from the reference"
    )
    exact = dataclasses.replace(list_record(), tolerance_override=(0.0, 0.0))
    assert compare_outputs(exact, CASE, Call(args=[]), (torch.tensor([1.0 + 1e-7]),), (torch.tensor([1.0]),)) == (
        "output 0: 1 of 1 values outside atol=0 rtol=0; worst at [0]: 1.00000012 from the kernel, "
        "1 from the reference (|difference| 1.19e-07)"
    )


def test_rtol_by_dtype_widens_only_the_named_dtype():
    """RMSNorm's two roundings: fp16 results 2 ulps apart pass with rtol 2e-3, other dtypes keep the protocol's."""
    from evaluation.catalog.vllm.norms import RMS_NORM

    # At the bottom of a binade an ulp is 2^-10 of the value: the widest relative gap fp16 has.
    reference = torch.tensor([1.0, -0.5], dtype=torch.float16)
    two_ulps = torch.tensor([1.0 + 2 * 2**-10, -0.5 - 2 * 2**-11], dtype=torch.float16)
    three_ulps = torch.tensor([1.0 + 3 * 2**-10, -0.5], dtype=torch.float16)

    assert RMS_NORM.tolerance(CASE, 0, torch.float16) == (1e-4, 2e-3)
    assert RMS_NORM.tolerance(CASE, 0, torch.bfloat16) == (1e-4, 1.6e-2)
    assert compare_outputs(RMS_NORM, CASE, Call(args=[]), (two_ulps,), (reference,)) is None
    assert compare_outputs(RMS_NORM, CASE, Call(args=[]), (three_ulps,), (reference,)).startswith(
        "output 0: 1 of 2 values outside atol=0.0001 rtol=0.002"
    )
    assert compare_outputs(list_record(), CASE, Call(args=[]), (two_ulps,), (reference,)) is not None


def test_fp64_opinion_covers_complex64_and_lists():
    reference = torch.tensor([3 + 4j, 0 + 0j], dtype=torch.complex128)
    output = torch.tensor([3 + 4.05j, 0 + 0j], dtype=torch.complex64)

    assert abs(fp64_relative_error((output,), (reference,), min_values=1) - 0.01) < 1e-6
    assert abs(fp64_relative_error(([output.real.contiguous()],), ([reference.real],), min_values=1)) < 1e-12
    assert fp64_relative_error((output.to(torch.complex128),), (reference,), min_values=1) is None  # fp32 only


def test_fp64_opinion_pools_a_list_and_has_none_on_a_handful_of_values():
    """Over a few values the relative norm measures cancellation, not precision: c - a*b with c = fl(a*b)
    is exactly the product's rounding error, which an exact float32 kernel returns as 0 (relative error 1).
    A list (pointer-array BLAS: one tensor per batch entry) is one output: one cancelling entry among many
    weighs by its size."""
    exact = torch.tensor([2.4e-8], dtype=torch.float64)
    assert fp64_relative_error((torch.zeros(1),), (exact,)) is None  # no opinion on one value
    assert fp64_relative_error((torch.zeros(1),), (exact,), min_values=1) == 1.0  # what the old rule said

    entries = [torch.rand(1, dtype=torch.float64) + 0.5 for _ in range(80)]
    references = [exact] + entries
    outputs = [torch.zeros(1)] + [entry.float() for entry in entries]
    assert fp64_relative_error((outputs,), (references,)) < 1e-7  # pooled over 81 values
    # Precision lost everywhere (5e-4, a TF32-sized error) is still seen, pooled or not.
    lossy = [torch.zeros(1)] + [(entry * (1 + 5e-4)).float() for entry in entries]
    assert fp64_relative_error((lossy,), (references,)) > 4e-4
    assert fp64_relative_error((torch.cat(lossy),), (torch.cat(references),)) > 4e-4


def update_list_record(*cases: Case) -> OperatorSpec:
    """Test-only: ``update_list(cs, a, b)``: c_i -= a_i * b_i on one-value float32 tensors (a pointer-array
    GEMM at m = n = k = 1), judged with the fp64 opinion's 1e-5 bound. Case params: ``entries``;
    ``cancelling``: the first so many entries get c_i = fl32(a_i * b_i), whose exact result is the product's
    rounding error (the others: c_i in [-scale**2, scale**2)); ``scale``: a and b in [-scale, scale)."""

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        entries, scale = case.params["entries"], case.params["scale"]
        a = [(torch.rand(1, generator=generator, dtype=torch.float64) * 2 - 1) * scale for _ in range(entries)]
        b = [(torch.rand(1, generator=generator, dtype=torch.float64) * 2 - 1) * scale for _ in range(entries)]
        a, b = [x.float() for x in a], [x.float() for x in b]
        cs = [
            (
                x * y
                if index < case.params["cancelling"]
                else (torch.rand(1, generator=generator) * 2 - 1) * scale * scale
            ).float()
            for index, (x, y) in enumerate(zip(a, b, strict=True))
        ]
        return Call(args=[cs, a, b])

    def reference(case: Case, call: Call) -> None:
        for c, x, y in zip(*call.args, strict=True):  # float64 throughout, rounded once into c
            c.copy_((c.double() - x.double() * y.double()).to(c.dtype))

    entry = EntryPoint(
        "update_list",
        "update_list(cs: list[Tensor], a: list[Tensor], b: list[Tensor]) -> None",
        mutates=(0,),
        compare_return=False,
        mutated_are_inputs=True,
    )
    return OperatorSpec(
        "test::update_list",
        "cublas",
        "test record",
        (entry,),
        make_inputs,
        reference,
        smoke=cases,
        public=(),
        held_out=lambda rng: (),
        fp64_relative_bound=1e-5,
    )


def test_an_exact_float32_kernel_passes_the_fp64_opinion_on_cancelling_tiny_outputs(warm_forkserver):
    # Seen on the H200: cublasSgemmBatched_64 rejected at m=n=k=1 (6.89e-5 > 1e-5) by per-tensor norms.
    spec = update_list_record(
        Case("update_list", {"entries": 4, "cancelling": 4, "scale": 2.0}),
        Case("update_list", {"entries": 80, "cancelling": 1, "scale": 2.0}),
    )
    result = judge_record(warm_forkserver, "lists/update_list.py", spec)

    assert (result.status, result.cases_passed) == ("passed", 2), result.reason
    assert check_outcomes(result)["fp64_second_opinion"] == "passed"


def test_a_tf32_precision_cheat_still_fails_the_fp64_opinion(warm_forkserver):
    # Small values: TF32's error (~1e-5 absolute) hides under atol = 1e-4; only the float64 opinion sees it.
    spec = update_list_record(Case("update_list", {"entries": 80, "cancelling": 0, "scale": 0.1}))
    honest = judge_record(warm_forkserver, "lists/update_list.py", spec)
    cheat = judge_record(warm_forkserver, "cheats/tf32_update_list.py", spec)

    assert honest.status == "passed", honest.reason
    assert cheat.status == "failed_correctness"
    assert check_outcomes(cheat)["fp64_second_opinion"] == "failed", cheat.reason
    assert "precision loss" in cheat.reason


# ---------------------------------------------------------------- F: what was timed


def test_timing_names_the_baseline_only_when_it_was_timed():
    sets = [{"args": [torch.ones(2)], "kwargs": {}}]

    def reference(args, kwargs):
        return args[0]

    missing = dataclasses.replace(small_cos_record(), baseline=lambda case, call: None, baseline_name="cuBLAS 12")
    reference.baseline = (missing, CASE)
    assert reference_thunks(reference, sets)[1] == "reference"
    present = dataclasses.replace(missing, baseline=lambda case, call: lambda: None)
    reference.baseline = (present, CASE)
    assert reference_thunks(reference, sets)[1] == "cuBLAS 12"
    del reference.baseline
    assert reference_thunks(reference, sets)[1] == "reference"


# ---------------------------------------------------------------- A: 0-dim cases through the timing path


def test_zero_dim_cases_pass_the_timing_spot_checks(warm_forkserver):
    spec = dataclasses.replace(
        small_cos_record(),
        smoke=(
            Case("cos", {"shape": [], "dtype": "float32", "range": [-2.0, 2.0]}),
            Case("cos", {"shape": [], "dtype": "float16", "range": [-2.0, 2.0]}),
        ),
    )
    source = kernel_source("good/cos_plain.py")
    job = JudgeJob(
        "aten::cos",
        source,
        "cpu-interpreter",
        "cpu",
        measure_timing=True,
        peak_bandwidth_bytes_per_s=1e15,
        peak_flops_by_dtype={"float32": 1e18, "float16": 1e18},
    )
    options = JudgeOptions(
        spec=spec,
        timing_on_cpu_for_tests=True,
        timing=TimingOptions(sets_per_side=4, min_iterations=12, max_iterations=12, spot_checks=8),
    )
    result = judge_with(job, options)

    assert (result.status, result.reason) == ("passed", "all 2 cases passed")
    assert check_outcomes(result)["timing_spot_check"] == "passed"
    assert result.environment["timing_baseline"] == "reference"
    assert all(case.spread["reference_kind"] == "reference" for case in result.case_results)


def test_the_spot_checks_of_a_creation_op_fit_their_reply_cap(warm_forkserver, monkeypatch):
    # A creation op's outputs dwarf its inputs (on the H200 aten::zeros sent 165 MB of spot copies for 16 B
    # of sizes once an operator's spots travelled in one reply): the cap counts the cases' output bytes.
    from pathlib import Path

    from evaluation.judge import timing_spots
    from evaluation.judge.records import find_operator

    monkeypatch.setattr(timing_spots, "SPOT_REPLY_SLACK_BYTES", 0)  # only what the cases account for
    spec = dataclasses.replace(
        find_operator("aten::zeros"),
        smoke=tuple(Case("zeros", {"size": [rows, 64], "dtype": "float32"}) for rows in (32, 48, 64)),
    )
    source = (
        Path(__file__).resolve().parents[3] / "evaluation" / "catalog" / "reference_kernels" / "aten__zeros.py"
    ).read_text()
    job = JudgeJob("aten::zeros", source, "cpu-interpreter", "cpu", measure_timing=True)
    result = judge_with(
        job,
        JudgeOptions(
            spec=spec,
            timing_on_cpu_for_tests=True,
            timing=TimingOptions(sets_per_side=2, min_iterations=4, max_iterations=4, spot_checks=1),
        ),
    )

    assert (result.status, result.reason) == ("passed", "all 3 cases passed")
    assert check_outcomes(result)["timing_spot_check"] == "passed"


def test_encoder_never_confuses_a_freed_storage_with_a_new_one_at_the_same_address():
    # The timing spot-check bug on the H200: 0-dim clones freed and reallocated at the same address were
    # taken for the earlier storage, so a later spot decoded an earlier iteration's inputs.
    encoder = wire.Encoder()
    values = []
    for step in range(50):
        tensor = torch.tensor(float(step))
        values.append(encoder.encode(tensor))
        del tensor
    decoder = wire.Decoder(encoder.blobs)
    assert [float(decoder.decode(value)) for value in values] == [float(step) for step in range(50)]


# ---------------------------------------------------------------- I: proportionate timing


def test_timing_stops_at_the_first_limit_and_says_which():
    def run(budget_s: float, rse_target: float) -> dict:
        sets = [{"args": [torch.ones(4)], "kwargs": {}}]
        return time_interleaved(
            candidate=lambda x: x,
            reference=lambda args, kwargs: None,
            candidate_sets=sets,
            reference_sets=sets,
            flush_buffer=None,
            budget_s=budget_s,
            rse_target=rse_target,
            min_iterations=20,
            max_iterations=60,
            spot_checks=0,
            rng=random.Random(0),
            keep_alive=[],
            min_launches=0,
            math_isfinite=lambda value: True,
            host_clock=True,
        )

    assert (run(60.0, 0.0)["stop_reason"], run(60.0, 0.0)["iterations"]) == ("max_iterations", 60)
    assert (run(0.0, 0.0)["stop_reason"], run(0.0, 0.0)["iterations"]) == ("budget", 20)
    assert (run(60.0, 1e9)["stop_reason"], run(60.0, 1e9)["iterations"]) == ("rse", 20)


def test_stream_holds_cover_host_enqueue_time_up_to_a_cap():
    # The device-side spin before each start event is sized from the side's recent host enqueue times (so
    # launch overhead never sits inside a timed window), capped at HOLD_MAX_MS: a wrapper that spends longer
    # on the host pays for the excess, and such calls are counted as exposed. Host clock stand-ins here: the
    # "spin" sleeps on the host, one cycle per nanosecond.
    import time

    from evaluation.judge.backends import HostClockEvent
    from evaluation.judge.untrusted.clock import HOLD_MARGIN, HOLD_MAX_MS, StreamHolds

    spins: list[int] = []

    def spin(cycles: int) -> None:
        spins.append(cycles)
        time.sleep(cycles / 1e9)

    def run(host_work_s: float) -> dict:
        spins.clear()
        sets = [{"args": [torch.ones(4)], "kwargs": {}}, {"args": [torch.ones(4)], "kwargs": {}}]

        def candidate(x):
            time.sleep(host_work_s)
            return x

        return time_interleaved(
            candidate=candidate,
            reference=lambda args, kwargs: None,
            candidate_sets=sets,
            reference_sets=sets,
            flush_buffer=None,
            budget_s=60.0,
            rse_target=0.0,
            min_iterations=10,
            max_iterations=10,
            spot_checks=0,
            rng=random.Random(0),
            keep_alive=[],
            min_launches=0,
            math_isfinite=lambda value: True,
            event_class=HostClockEvent,
            synchronize=lambda: None,
            spin=spin,
        )

    # Sizing, from given enqueue times (host sleeps overshoot on a busy machine: not for exact figures).
    holds = StreamHolds(spin, HostClockEvent, lambda: None)
    for _ in range(10):
        holds.enqueued("candidate", 0.3, counted=True)
        holds.enqueued("reference", 0.05, counted=True)
    quick = holds.summary()
    # Calibrated against the events: about 1e6, lower when host sleeps overshoot on a loaded machine (0.49e6 seen).
    assert 0.2e6 < quick["cycles_per_ms"] < 1.5e6
    assert HOLD_MARGIN * 0.3 <= quick["candidate_hold_ms"] < HOLD_MAX_MS
    assert quick["candidate_hold_ms"] > quick["reference_hold_ms"]  # each side sized by its own calls
    assert quick["candidate_exposed_calls"] <= 1  # only the first, under the initial hold
    # In the timing loop, a wrapper with more host work per call than the cap covers.
    slow = run(1.5 * HOLD_MAX_MS / 1000)["holds"]
    assert slow["candidate_hold_ms"] == HOLD_MAX_MS
    assert slow["candidate_exposed_calls"] == 10  # every timed call outlasted its capped hold
    *loop_spins, probe_spin = spins
    assert max(loop_spins) <= HOLD_MAX_MS * slow["cycles_per_ms"] * 1.01 or max(loop_spins) == 1_000_000  # calibration
    # The kernel-time probe after the loop holds for the whole of one more call: twice the longest enqueue
    # and the cap, so every launch it makes queues behind the hold.
    assert probe_spin > 2 * 1.5 * HOLD_MAX_MS * slow["cycles_per_ms"] * 0.99
    # The interpreter's host-clock path never spins.
    assert (
        time_interleaved(
            candidate=lambda x: x,
            reference=lambda args, kwargs: None,
            candidate_sets=[{"args": [torch.ones(4)], "kwargs": {}}],
            reference_sets=[{"args": [torch.ones(4)], "kwargs": {}}],
            flush_buffer=None,
            budget_s=1.0,
            rse_target=0.0,
            min_iterations=3,
            max_iterations=3,
            spot_checks=0,
            rng=random.Random(0),
            keep_alive=[],
            min_launches=0,
            math_isfinite=lambda value: True,
            host_clock=True,
            spin=spin,
        )["holds"]
        is None
    )


def test_timed_calls_count_work_off_the_timed_stream_and_compute_outside_triton():
    # While the timed stream is held, other streams run freely: work a kernel hides there would finish before
    # the start event (the H200 judged cheats/stream_hide.py, scan off, "passed" at 1.36x). Every launch on
    # another stream is counted, and timed calls run under the dispatch audit too. Fake streams here.
    from evaluation.judge.untrusted import guard

    current = ["timed"]
    launch = guard._wrap_run(lambda self, *args, grid, warmup, **kwargs: None, object)  # a hooked Triton launch

    def run(candidate) -> dict:
        sets = [{"args": [torch.ones(4)], "kwargs": {}}, {"args": [torch.ones(4)], "kwargs": {}}]
        return time_interleaved(
            candidate=candidate,
            reference=lambda args, kwargs: None,
            candidate_sets=sets,
            reference_sets=sets,
            flush_buffer=None,
            budget_s=60.0,
            rse_target=0.0,
            min_iterations=5,
            max_iterations=5,
            spot_checks=0,
            rng=random.Random(0),
            keep_alive=[],
            min_launches=1,
            math_isfinite=lambda value: True,
            host_clock=True,
            stream_of=lambda: current[0],
        )

    def honest(x):
        launch(None, grid=(1,), warmup=False)
        return x

    def side_stream(x):
        current[0] = "side"
        try:
            launch(None, grid=(1,), warmup=False)
        finally:
            current[0] = "timed"
        return x

    def torch_compute(x):
        launch(None, grid=(1,), warmup=False)
        return x.cos()

    clean = run(honest)
    assert (clean["foreign_stream_calls"], clean["compute_calls"], clean["low_launch_calls"]) == (0, 0, 0)
    assert run(side_stream)["foreign_stream_calls"] == 8  # 3 warm-up + 5 timed calls
    computed = run(torch_compute)
    # 3 warm-up + 5 timed calls, and the kernel-time probe after them: audited like them.
    assert computed["compute_calls"] == 9 and computed["compute_ops"] == ["aten::cos"]
    assert guard.STATE.timed_stream is None and not guard.STATE.auditing  # nothing left switched on


def test_default_timing_budget_is_small():
    options = TimingOptions()

    assert (options.budget_s_per_case, options.min_iterations, options.max_iterations) == (0.15, 20, 200)
    assert (options.max_timed_cases, options.spot_checks) == (6, 1)


def test_work_left_running_after_the_timed_stream_is_refused():
    from evaluation.judge.timing_stats import hidden_work_message

    assert hidden_work_message(0.012, 0.010, 0.017) == ""  # synchronize latency on both sides
    assert hidden_work_message(0.400, 0.010, 0.017) == (
        "the device was still busy 0.400 ms after the timed stream finished (reference: 0.010 ms): "
        "work on another stream"
    )
    assert hidden_work_message(1.5, 0.01, 4.0) == ""  # within half the candidate's own time


def test_the_tail_check_reads_the_fast_tails_so_host_jitter_is_not_hidden_work():
    """Hidden work lengthens every tail; a busy host only some (an honest neg was rejected on the H200 when
    the check compared median tails under 16 judges at once)."""
    from evaluation.judge.timing_stats import hidden_work_message, low_quantile

    reference = [0.010] * 60 + [0.18] * 40
    jittery = [0.011] * 50 + [0.31] * 50  # more of its calls hit a busy host, as in that run
    hiding = [0.40 + 0.01 * (index % 5) for index in range(100)]

    assert low_quantile(jittery) == 0.011 and low_quantile(hiding) == 0.40 and low_quantile([]) != low_quantile([])
    assert hidden_work_message(low_quantile(jittery), low_quantile(reference), 0.015) == ""
    assert hidden_work_message(low_quantile(hiding), low_quantile(reference), 0.015) != ""


def test_large_cases_rotate_fewer_input_sets():
    from evaluation.judge.timing_stats import sets_for

    assert [sets_for(4, size) for size in (1 << 10, 20 << 20, 40 << 20, 1 << 30)] == [4, 3, 2, 2]


def test_ghost_replay_never_convicts_where_the_poison_is_the_right_answer(warm_forkserver):
    # fmax of two NaNs is NaN, which the case allows and which is also what the replay fills fresh memory
    # with: a no-op replay then proves nothing (it rejected the honest reference kernel on the H200). A case
    # whose answer is not the poison still convicts a kernel that needs no launch (cheats/cache_by_shape.py).
    from evaluation.judge.records import find_operator

    spec = find_operator("aten::fmax")
    all_nan = Case("fmax", {"shape": [], "other_shape": [], "dtype": "float32", "nan_fraction": 1.0}, allow_nan=True)
    source = (Path(__file__).resolve().parents[3] / "evaluation/catalog/reference_kernels/aten__fmax.py").read_text()
    job = JudgeJob("aten::fmax", source, "cpu-interpreter", "cpu", time_budget_s=120)
    result = judge_with(job, JudgeOptions(spec=dataclasses.replace(spec, smoke=(all_nan,))))

    assert result.status == "passed", result.reason
    assert result.case_results[0].passed


def test_an_out_of_memory_error_is_the_kernels_unless_the_whole_device_was_full():
    # Sixteen judges on one H200 filled it (2026-11-30): a 256 MiB request failed with 165 MiB free. That is
    # the neighbours' doing ("error", judge again); a kernel asking for more than the device has is its own.
    from evaluation.judge.verdicts import device_was_full

    full = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total "
        "capacity of 139.80 GiB of which 164.75 MiB is free. Process 498 has 3.44 GiB memory in use."
    )
    assert device_was_full(full, "cuda", lambda: 0.99)
    assert device_was_full(full, "cuda")  # no tool to read the device: the allocator's figures decide
    assert not device_was_full(full.replace("164.75 MiB", "64.00 GiB"), "cuda")
    assert not device_was_full(
        "CUDA out of memory. Tried to allocate 300.00 GiB. GPU 0 has a total capacity of "
        "139.80 GiB of which 130.10 GiB is free.",
        "cuda",
    )
    assert not device_was_full("RuntimeError: DefaultCPUAllocator: can't allocate memory", "cuda")


def test_the_judges_own_allocation_on_a_full_device_is_our_error_wherever_it_fails(monkeypatch):
    # Thirteen judges on one H100 (2026-12-07 night): the judge's code in a sandbox loading a timed case's
    # inputs, and the trusted side, ran out of a device the neighbours filled. Both are ours, to judge again:
    # never the kernel's failed_runtime, and not a bare infrastructure failure either.
    import torch

    from evaluation.judge import runner
    from evaluation.judge.job import JudgeJob
    from evaluation.judge.session import harness_failure_after_the_kernel_ran
    from evaluation.judge.verdicts import DEVICE_FULL

    monkeypatch.setattr("evaluation.judge.verdicts.device_memory_used_share", lambda device_type: 0.99)
    full = (
        'Traceback (most recent call last):\n  File "harness.py", line 9, in load_sets\n'
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 32.00 MiB. GPU 0 has a total "
        "capacity of 79.18 GiB of which 6.06 MiB is free. Process 3779 has 11.24 GiB memory in use."
    )
    verdict = harness_failure_after_the_kernel_ran(full, "cuda", " in case sum[x]", None, "public")
    assert (verdict.status, verdict.retryable) == ("error", True) and verdict.reason.startswith(DEVICE_FULL)
    plenty = full.replace("6.06 MiB is free", "60.00 GiB is free").replace("32.00 MiB", "300.00 GiB")
    assert harness_failure_after_the_kernel_ran(plenty, "cuda", "", None, "public").status == "failed_runtime"
    assert harness_failure_after_the_kernel_ran(full, "cpu", "", None, "smoke").status == "failed_runtime"

    def trusted_side_runs_out(judgement):
        raise torch.OutOfMemoryError(full.splitlines()[-1].split(": ", 1)[1])

    monkeypatch.setattr(runner, "run", trusted_side_runs_out)
    job = JudgeJob(operator_id="aten::cos", source_code="", chip_slug="nvidia-h100", device_type="cuda")
    result = runner.judge_with(job, runner.JudgeOptions())
    assert (result.status, result.retryable) == ("error", True) and result.reason.startswith(DEVICE_FULL)
    job = JudgeJob(operator_id="aten::cos", source_code="", chip_slug="cpu-interpreter", device_type="cpu")
    result = runner.judge_with(job, runner.JudgeOptions())
    assert (result.status, result.retryable) == ("error", False)
    assert result.reason.startswith("judge infrastructure failure")


def test_a_kernel_raising_the_allocators_words_itself_does_not_turn_its_failure_into_our_error():
    # The message is the kernel's process's text: a failing kernel that raises a "device full" message of its
    # own would be retried and never counted. It counts only on a shared GPU, and only where the trusted
    # side's own reading finds the device at least half full.
    from evaluation.judge.verdicts import device_was_full

    forged = (
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 256.00 MiB. GPU 0 has a total "
        "capacity of 139.80 GiB of which 100.00 MiB is free."
    )
    assert not device_was_full(forged, "cpu")  # the interpreter shares no device memory between judges
    assert not device_was_full(forged, "cuda", lambda: 0.12)  # the device was nearly empty
    assert device_was_full(forged, "cuda", lambda: 0.5)


def test_a_side_whose_host_latency_outlasts_its_holds_is_marked_host_bound():
    # On the H200 the references that synchronise with the host (merge_attn_states, masked_fill_.Tensor)
    # had every call exposed, and their speedups moved 20-90 % between runs: the evidence says so.
    from evaluation.judge.timing_stats import host_bound_sides

    holds = {"reference_exposed_calls": 20.0, "candidate_exposed_calls": 1.0}
    assert host_bound_sides(holds, 20) == ["reference"]
    assert host_bound_sides(dict(holds, candidate_exposed_calls=10.0), 20) == ["reference", "candidate"]
    assert host_bound_sides({"reference_exposed_calls": 9.0}, 20) == []
    assert host_bound_sides(None, 20) == [] and host_bound_sides(holds, 0) == []


# ---------------------------------------------------------------- well-posed comparisons


def _floor_divide_by(scalar: float) -> OperatorSpec:
    from evaluation.catalog.aten.pointwise import OPERATORS

    record = next(spec for spec in OPERATORS if spec.operator_id == "aten::floor_divide")
    # 400 integers drawn from [-20, 20] hold the exact multiples of 7 (-14, -7, 7, 14) whatever the seed.
    params = {"shape": [400], "dtype": "float16", "scalar": scalar, "integral": True, "range": [-20, 20]}
    return dataclasses.replace(record, smoke=(Case("floor_divide_Scalar", params),))


def _judge_floor_divide(kernel: str, scalar: float = 0.7):
    job = JudgeJob("aten::floor_divide", kernel_source(kernel), "cpu-interpreter", "cpu", tiers=("smoke",))
    return judge_with(job, JudgeOptions(spec=_floor_divide_by(scalar)))


def test_a_quotient_at_an_exact_multiple_may_round_as_exact_arithmetic_does(warm_forkserver):
    # fp16 integers // 0.7: torch's fmod-based floor says -7 // 0.7 = -11, an exactly rounded division -10.
    # The kernel gives the correctly rounded exact answer, and passes, with the check saying why.
    result = _judge_floor_divide("well_posed/floor_divide_exact.py")

    assert result.status == "passed", result.reason
    check = next(check for check in result.checks if check.name == "exact_rounding")
    assert "value(s) equal the correctly rounded float64 result, not the reference's" in check.detail
    assert int(check.detail.split(": ")[1].split(" ")[0]) >= 1


def test_the_exact_alternative_does_not_let_a_real_rounding_bug_through(warm_forkserver):
    result = _judge_floor_divide("well_posed/floor_divide_truncates.py")

    assert result.status == "failed_correctness"
    assert "from the kernel" in result.reason and "from the reference" in result.reason
    assert not any(check.name == "exact_rounding" for check in result.checks)


def _squared_difference_record(dtype: str) -> OperatorSpec:
    """A test-only record whose reference rounds an intermediate in half: torch's (x - y) on half tensors
    is rounded to half before it is squared (and rounded again), as ATen's half-precision kernels do."""

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        shape, half = case.params["shape"], getattr(torch, case.params["dtype"])
        draw = [torch.rand(shape, generator=generator) * 8 - 4 for _ in range(2)]
        return Call(args=[value.to(half) for value in draw], kwargs={})

    def reference(case: Case, call: Call) -> torch.Tensor:
        x, y = call.args
        return (x - y) * (x - y)

    base = cos_record()
    return dataclasses.replace(
        base,
        operator_id="test::squared_difference",
        entry_points=(EntryPoint("squared_difference", "squared_difference(Tensor x, Tensor y) -> Tensor"),),
        make_inputs=make_inputs,
        reference=reference,
        # One unit in the last place of half apart from the reference is a failure here.
        output_tolerances=((0.0, 1e-4),),
        fp64_relative_bound=None,
        exact_formula=None,
        smoke=(Case("squared_difference", {"shape": [512], "dtype": dtype}),),
    )


# bfloat16 too: the sandbox rounds the interpreter's float32 -> bfloat16 conversion to nearest even
# (untrusted/interpreter_mends.py), so a bfloat16 kernel rounds once there as on a GPU.
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_a_half_precision_output_may_round_once_where_the_reference_rounds_twice(warm_forkserver, dtype):
    job = JudgeJob(
        "test::squared_difference",
        kernel_source("well_posed/squared_difference_float32.py"),
        "cpu-interpreter",
        "cpu",
        tiers=("smoke",),
    )
    strict = compare_outputs_refuses(dtype)
    result = judge_with(job, JudgeOptions(spec=_squared_difference_record(dtype)))

    assert strict, "the test's inputs must make the reference's double rounding visible"
    assert result.status == "passed", result.reason
    check = next(check for check in result.checks if check.name == "exact_rounding")
    assert f"value(s) equal the float64 result rounded once to {dtype}, not the reference's" in check.detail
    assert int(check.detail.split(": ")[1].split(" ")[0]) >= 1


def test_the_float64_alternative_does_not_let_a_wrong_half_precision_kernel_through(warm_forkserver):
    job = JudgeJob(
        "test::squared_difference",
        kernel_source("well_posed/squared_difference_wrong.py"),
        "cpu-interpreter",
        "cpu",
        tiers=("smoke",),
    )
    result = judge_with(job, JudgeOptions(spec=_squared_difference_record("float16")))

    assert result.status == "failed_correctness"
    assert "from the kernel" in result.reason and "from the reference" in result.reason
    assert not any(check.name == "exact_rounding" for check in result.checks)


def compare_outputs_refuses(dtype: str) -> bool:
    """Whether the float32-once answer differs from the reference's beyond the record's tolerance on the
    test's own inputs (seed 0): the well-posed path must be what lets the kernel pass."""
    spec = _squared_difference_record(dtype)
    case = spec.smoke[0]
    call = spec.make_inputs(case, torch.Generator().manual_seed(0))
    x, y = call.args
    once = ((x.float() - y.float()) ** 2).to(x.dtype)
    return compare_outputs(spec, case, call, (once,), (spec.reference(case, call),)) is not None


def test_the_float64_alternative_covers_every_half_output_and_skips_an_absent_one():
    # rotary_embedding writes query and key in fp16 (key may be None): a value the reference's staged half
    # rounding refuses passes where it equals the float64 answer rounded once, on every output it has.
    from evaluation.catalog.registry import get_operator
    from evaluation.judge.compare import exact_alternative_accepts

    spec = get_operator("vllm13::rotary_embedding")
    case = spec.public[0]
    exact = torch.tensor([0.30007, -0.00878906, 1.0], dtype=torch.float64)
    reference = torch.tensor([0.2998, -0.0085983, 1.0], dtype=torch.float16)  # staged rounding: off exact
    honest = exact.to(torch.float16)
    wrong = torch.tensor([0.30007, 0.00878906, 1.0], dtype=torch.float16)

    # One value (-0.00879, after cancellation) matches only the exact answer; 0.3 is near both.
    assert exact_alternative_accepts(spec, case, (honest, None), (reference, None), (exact, None)) == 1
    assert exact_alternative_accepts(spec, case, (wrong, None), (reference, None), (exact, None)) is None
    assert exact_alternative_accepts(spec, case, (honest, honest), (reference, reference), (exact, exact)) == 2
    assert exact_alternative_accepts(spec, case, (honest, None), (reference, reference), (exact, exact)) is None


def test_an_integer_code_at_a_tie_may_go_either_way_and_nowhere_else():
    # scaled_int8_quant's exact formula gives each code before rounding: at a .5 tie fp32 math of the same
    # formula lands on either side (an honest kernel was 1 off on 1 of 35,287 codes on the H200); a kernel
    # that truncates is 1 off where the value is nowhere near a tie, and fails.
    from evaluation.catalog.registry import get_operator
    from evaluation.judge.compare import exact_alternative_accepts

    spec = get_operator("vllm13::scaled_int8_quant")
    case = spec.public[0]
    at_tie = torch.tensor([63.50000001, 10.2], dtype=torch.float64)
    reference = torch.tensor([64, 10], dtype=torch.int8)
    scale = torch.tensor([[0.5]])

    def accepts(codes, exact):
        return exact_alternative_accepts(
            spec,
            case,
            (torch.tensor(codes, dtype=torch.int8), scale, None),
            (reference, scale, None),
            (exact, scale.double(), None),
        )

    assert accepts([63, 10], at_tie) == 1
    assert accepts([62, 10], at_tie) is None
    assert accepts([64, 10], torch.tensor([63.7, 10.2], dtype=torch.float64)) == 0
    assert accepts([63, 10], torch.tensor([63.7, 10.2], dtype=torch.float64)) is None  # truncation


def test_codes_carrying_a_zero_point_at_a_tie_may_take_either_neighbour():
    # Dynamic asymmetric int8: q = rne(x / s) + zp with zp = rne(-128 - min / s) rounded too. Where zp sits
    # at a tie a whole row may carry either neighbour: the exact formula gives the codes' (lowest, highest).
    from evaluation.catalog.registry import get_operator
    from evaluation.judge.compare import exact_alternative_accepts

    spec = get_operator("vllm13::scaled_int8_quant")
    case = spec.public[0]
    codes = torch.tensor([10.2, -3.9], dtype=torch.float64)
    bounds = (codes + 4.0, codes + 5.0)  # zero point 4.5: either 4 or 5
    reference = torch.tensor([14, 0], dtype=torch.int8)
    scale = torch.tensor([[0.5]])

    def accepts(values):
        return exact_alternative_accepts(
            spec,
            case,
            (torch.tensor(values, dtype=torch.int8), scale, None),
            (reference, scale, None),
            (bounds, scale.double(), None),
        )

    assert accepts([15, 1]) == 2  # the other zero point, the whole row
    assert accepts([16, 1]) is None  # two off
    assert accepts([14, 0]) == 0


def test_a_rotation_in_float32_passes_where_cancellation_makes_the_staged_half_reference_one_answer_of_many():
    # rotary_embedding's reference rounds each product in half (vLLM's arithmetic); after cancellation a
    # kernel computing in float32 (or with fused multiply-adds) lands 1-2 product ulps away. Its exact formula
    # gives the range any once-rounded products can give; a kernel pairing the wrong elements is far outside.
    from evaluation.catalog.registry import get_operator
    from evaluation.catalog.spec import Call
    from evaluation.judge.compare import compare_outputs, exact_alternative_accepts

    spec = get_operator("vllm13::rotary_embedding")
    case = next(c for c in spec.public if c.params["dtype"] == "float16" and c.params["tokens"] == 1024)
    call = spec.make_inputs(case, torch.Generator().manual_seed(0))
    positions, query, key, head_size, cache, is_neox = call.args

    def rotated(in_float32: bool, neox: bool):
        q, k = query.clone(), key.clone() if key is not None else None
        if in_float32:
            rows = cache[positions].float()
            half = cache.size(1) // 2
            for tensor in (q, k):
                if tensor is None:
                    continue
                wide = tensor.float()
                x = wide[..., :half] if neox else wide[..., 0::2]
                y = wide[..., half:] if neox else wide[..., 1::2]
                c, s = rows[:, None, :half], rows[:, None, half:]
                x_new, y_new = x * c - y * s, y * c + x * s
                (wide[..., :half] if neox else wide[..., 0::2]).copy_(x_new)
                (wide[..., half:] if neox else wide[..., 1::2]).copy_(y_new)
                tensor.copy_(wide)
        else:
            spec.reference(case, Call(args=[positions, q, k, head_size, cache, neox]))
        return q, k

    expected = rotated(False, is_neox)
    exact = spec.exact_formula(case, call)
    honest = rotated(True, is_neox)
    swapped = rotated(True, not is_neox)

    assert compare_outputs(spec, case, call, honest, expected) is not None  # refused by the staged reference
    assert exact_alternative_accepts(spec, case, honest, expected, exact) >= 1
    assert exact_alternative_accepts(spec, case, swapped, expected, exact) is None


def test_a_composite_aten_loss_accepts_eagers_own_half_rounding_beside_the_float32_one():
    # ATen's margin_ranking_loss is op by op (Loss.cpp), each step rounded in half on CUDA as on the CPU: the
    # original's reference. The record's widened reference (float32, rounded once) is the accurate answer;
    # a kernel matching either passes (the corpus's honest round-5 losses imitate eager's steps).
    from evaluation.catalog.aten._build import record
    from evaluation.catalog.registry import get_operator

    spec = get_operator("aten::margin_ranking_loss")
    assert spec.eager_alternative is not None
    assert get_operator("aten::binary_cross_entropy_with_logits").eager_alternative is not None
    assert get_operator("aten::logit").eager_alternative is None  # one fused kernel on CUDA: float32 inside
    case = Case("margin_ranking_loss", {"shape": [4096], "dtype": "float16", "margin": 0.5, "reduction": 0})
    call = spec.make_inputs(case, torch.Generator().manual_seed(3))
    widened, eager = spec.reference(case, call), spec.eager_alternative(case, call)
    assert widened.dtype == eager.dtype == torch.float16
    assert not torch.equal(widened, eager), "the two answers must differ for the alternative to matter"

    with pytest.raises(ValueError, match="composite_in_aten"):
        record("cos", "d", [], make_inputs=None, smoke=(), public=(), held_out=None, composite_in_aten=True)


def test_the_gpu_check_of_the_composite_claim_runs_and_checks_itself_on_the_cpu():
    # scripts/gpu/composite_half_check.py settles the claim above on a GPU (CUDA eager against CPU eager);
    # on the CPU both sides are one computation, so it must find them bit-equal and refute nothing.
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[3] / "scripts" / "gpu" / "composite_half_check.py"
    done = subprocess.run(
        [sys.executable, str(script), "--draws", "1", "--max-cases", "1", "--device", "cpu"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.strip().splitlines()
    assert lines[-1] == "2 half cases of 2 composite records on cpu; 0 refute the claim", lines
    assert all("cpu eager vs cpu eager: worst 0 ulp, 0/1 draws outside tolerance" in line for line in lines[:-1])


def _half_neighbour(values: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """The other ``dtype`` neighbour of float64 ``values`` (the one rounding to nearest does not give)."""
    nearest = values.to(dtype)
    upward = torch.nextafter(nearest, torch.full_like(nearest, float("inf")))
    downward = torch.nextafter(nearest, torch.full_like(nearest, float("-inf")))
    return torch.where(values > nearest.double(), upward, downward)


def test_a_staged_loss_whose_log_sigmoid_rounds_the_other_way_passes_and_a_wrong_formula_does_not():
    # BCE with logits is composite in ATen: log_sigmoid, (1 - y) * x and the subtraction each round to half.
    # On the H200 an honest kernel staging exactly so, with a GPU's log, rounded log_sigmoid to the other
    # neighbour next to midpoints: after the cancellation its loss sat 0.003 from CUDA eager's on 7 % of a
    # 1024 x 1024 fp16 case. The record's exact formula gives the range such staging can give; a kernel that
    # drops the (1 - y) factor is off by a whole term and stays outside.
    from evaluation.catalog.registry import get_operator
    from evaluation.judge.compare import compare_outputs, exact_alternative_accepts

    spec = get_operator("aten::binary_cross_entropy_with_logits")
    case = Case("binary_cross_entropy_with_logits", {"shape": [256, 64], "dtype": "float16", "reduction": 0})
    call = spec.make_inputs(case, torch.Generator().manual_seed(5))
    logits, target = call.args[0], call.args[1]
    expected = spec.reference(case, call)

    def staged(log_sigmoid: torch.Tensor, keep_factor: bool = True) -> torch.Tensor:
        factor = (1 - target.float()).half().float() if keep_factor else torch.ones_like(target.float())
        product = (factor * logits.float()).half().float()
        return (product - log_sigmoid.float()).half()

    exact_log_sigmoid = torch.nn.functional.logsigmoid(logits.double())
    flipped = staged(_half_neighbour(exact_log_sigmoid, torch.float16))  # every one the other way
    some = torch.rand(logits.shape, generator=torch.Generator().manual_seed(1)) < 0.1
    honest = torch.where(some, flipped, staged(exact_log_sigmoid.half()))
    wrong = staged(exact_log_sigmoid.half(), keep_factor=False)
    exact = spec.exact_formula(case, call)

    assert compare_outputs(spec, case, call, (honest,), (expected,)) is not None
    assert compare_outputs(spec, case, call, (honest,), (spec.eager_alternative(case, call),)) is not None
    assert exact_alternative_accepts(spec, case, (honest,), (expected,), exact) >= 1
    assert exact_alternative_accepts(spec, case, (wrong,), (expected,), exact) is None


def test_a_float8_code_at_a_midpoint_may_take_either_neighbour_and_nowhere_else():
    # scaled_fp8_quant per token: q = e4m3(x / s), s = amax / 448 rounded (CUDA: amax * (1/448)). With fp16
    # inputs x / s lands exactly on the midpoint of two e4m3 values often, and the rounded scale pushes it
    # either way: an honest kernel dividing exactly was a step (-192 against -176) from the reference on 3 of
    # 35,287 codes on the H200. Away from a midpoint only the nearest code passes, so truncation still fails.
    from evaluation.catalog.registry import get_operator
    from evaluation.judge.compare import exact_alternative_accepts

    spec = get_operator("vllm13::scaled_fp8_quant")
    case = next(c for c in spec.public if c.params["per_token"] and c.params["dtype"] == "float16")
    e4m3 = torch.float8_e4m3fn
    scales = torch.tensor([[0.5]])
    reference = torch.tensor([[-176.0, 20.0]]).to(e4m3)

    def accepts(codes, exact):
        exact = torch.tensor([exact], dtype=torch.float64)
        return exact_alternative_accepts(
            spec, case, (torch.tensor([codes]).to(e4m3), scales), (reference, scales), (exact, scales.double())
        )

    assert accepts([-192.0, 20.0], [-184.0 - 1e-6, 20.2]) == 1  # at the midpoint: either neighbour
    assert accepts([-192.0, 20.0], [-181.0, 20.2]) is None  # nowhere near it: the nearest only
    assert accepts([-176.0, 18.0], [-181.0, 19.9]) is None  # truncation toward zero
    assert accepts([-176.0, 20.0], [-181.0, 20.2]) == 0


def test_the_quantisers_exact_formulas_line_up_with_their_outputs_and_hold_the_reference():
    # The exact formulas of the fp8 quantisers (a value, or a (lowest, highest) range where the formula's
    # half roundings leave one open) must line up with their outputs element by element, padding rows
    # included, and the reference's own answer must lie within them: it is one honest evaluation.
    from evaluation.catalog.registry import get_operator
    from evaluation.judge.compare import exact_alternative_accepts

    for name in ("vllm13::scaled_fp8_quant", "vllm13::rms_norm_per_block_quant"):
        spec = get_operator(name)
        for case in spec.smoke:
            call = spec.make_inputs(case, torch.Generator().manual_seed(2))
            expected = spec.outputs_of(case, call, spec.reference(case, call))
            exact = spec.exact_formula(case, call)
            assert len(exact) == len(expected), (name, case.case_id)
            for got, want in zip(exact, expected, strict=True):
                for bound in got if isinstance(got, tuple) else (got,):
                    assert bound.shape == want.shape, (name, case.case_id)
            assert exact_alternative_accepts(spec, case, expected, expected, exact) == 0, (name, case.case_id)


def test_a_code_that_a_half_rounding_of_the_normalised_value_moves_may_take_either_neighbour():
    # rms_norm_per_block_quant's y = dtype(dtype(x * inv) * w) rounds twice in half; a GPU's rsqrt and
    # another order of mean(x^2) round it to the other neighbour next to a midpoint, and that moves an int8
    # code across its .5 (8 of 4,194,304 codes of an honest kernel on the H200). The exact formula's range
    # follows y's roundings; a kernel that truncates its codes still fails.
    from evaluation.catalog.registry import get_operator
    from evaluation.judge.compare import exact_alternative_accepts

    spec = get_operator("vllm13::rms_norm_per_block_quant")
    case = next(c for c in spec.public if c.params["quant"] == "int8" and c.params["shape"] == [128, 256])
    call = spec.make_inputs(case, torch.Generator().manual_seed(6))
    codes, scales = spec.reference(case, call)
    exact = spec.exact_formula(case, call)
    (low, high), _ = exact
    movable = (low.round() != high.round()) & (low.abs() < 127)
    assert bool(movable.any()), "some code must sit where y's rounding can move it"
    other = codes.clone()
    flat = torch.nonzero(movable.reshape(-1))[0]
    moved_to = torch.where(
        codes.reshape(-1)[flat].double() == low.reshape(-1)[flat].round(),
        high.reshape(-1)[flat].round(),
        low.reshape(-1)[flat].round(),
    )
    other.view(-1)[flat] = moved_to.to(torch.int8)
    truncated = torch.trunc((low + high) / 2).to(torch.int8)  # toward zero, not to nearest
    assert not torch.equal(truncated, codes)

    assert exact_alternative_accepts(spec, case, (other, scales), (codes, scales), exact) == 1
    assert exact_alternative_accepts(spec, case, (truncated, scales), (codes, scales), exact) is None


def test_half_sums_in_another_order_pass_reflection_pad1d_backward_and_a_lost_mirror_does_not():
    # With left + right padding past the width an input position sums three terms; CUDA adds them with half
    # atomics in no fixed order, so its answer is one of several. A kernel adding (left + centre) + right in
    # half (round 5's honest file, 2 units off CUDA on 1.3 % of a case on the H200) passes; one that forgets
    # the right mirror does not.
    from evaluation.catalog.registry import get_operator
    from evaluation.judge.compare import compare_outputs, exact_alternative_accepts

    spec = get_operator("aten::reflection_pad1d_backward")
    case = Case("reflection_pad1d_backward", {"shape": [8, 64], "padding": [32, 63], "dtype": "float16"})
    call = spec.make_inputs(case, torch.Generator().manual_seed(4))
    grad, x, (left, right) = call.args
    width = x.size(-1)
    g = grad.float()
    index = torch.arange(width)
    centre = g[..., left : left + width]
    left_terms = torch.where((index >= 1) & (index <= left), g[..., (left - index).clamp(min=0)], 0.0)
    mirror = (left + 2 * (width - 1) - index).clamp(max=g.size(-1) - 1)
    right_terms = torch.where((index >= width - 1 - right) & (index <= width - 2), g[..., mirror], 0.0)

    def in_order(first, second, third):
        return ((first + second).half().float() + third).half()

    expected = in_order(right_terms, centre, left_terms)  # one order CUDA's atomics may take
    honest = in_order(left_terms, centre, right_terms)
    lost_mirror = in_order(left_terms, centre, torch.zeros_like(centre))
    exact = spec.exact_formula(case, call)

    assert compare_outputs(spec, case, call, (honest,), (expected,)) is not None, "the orders must differ"
    assert exact_alternative_accepts(spec, case, (honest,), (expected,), exact) >= 1
    assert exact_alternative_accepts(spec, case, (lost_mirror,), (expected,), exact) is None


def test_an_affine_grid_built_on_eagers_half_coordinates_passes_and_a_lost_scale_does_not():
    # ATen builds affine_grid's base coordinates with half ops (linspace, then * (n - 1) / n), CUDA's linspace
    # rounding once and the CPU's at every step; the reference computes them in float32. An honest fp16
    # kernel rebuilding them as eager does (round 7's, blind) was 0.0007 from it on 1 % of a smoke case, and
    # CUDA's own answer 769 values of 32,336. Both pass; forgetting the (n - 1) / n scale does not.
    from evaluation.catalog.registry import get_operator
    from evaluation.judge.compare import exact_alternative_accepts

    spec = get_operator("aten::affine_grid_generator")
    size = [8, 1, 47, 43]
    case = Case("affine_grid_generator", {"size": size, "dtype": "float16", "align_corners": False, "reduce_dim": 3})
    call = spec.make_inputs(case, torch.Generator().manual_seed(3))
    theta = call.args[0]
    expected = spec.reference(case, call)

    def grid(coordinates):
        rows, columns = (coordinates(n) for n in size[2:])
        base = torch.stack(torch.meshgrid(columns, rows, indexing="xy") + (torch.ones(size[2], size[3]),), -1)
        return torch.einsum("hwk,njk->nhwj", base, theta.float()).half()

    def eager_cpu(n):  # ATen's CPU linspace in half, then the scale as two half ops
        return ((torch.linspace(-1, 1, n, dtype=torch.float16).float() * (n - 1)).half().float() / n).half().float()

    def lost_scale(n):
        return torch.linspace(-1, 1, n, dtype=torch.float64).float()

    honest, wrong = grid(eager_cpu), grid(lost_scale)
    exact = spec.exact_formula(case, call)

    assert exact_alternative_accepts(spec, case, (honest,), (expected,), exact) > 0
    assert exact_alternative_accepts(spec, case, (wrong,), (expected,), exact) is None
    float32 = Case("affine_grid_generator", {**case.params, "dtype": "float32"})
    call32 = spec.make_inputs(float32, torch.Generator().manual_seed(3))
    ((low, high),) = spec.exact_formula(float32, call32)
    assert float((high - low).max()) < 1e-5  # float32 stays strict

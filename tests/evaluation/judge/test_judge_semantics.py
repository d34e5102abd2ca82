"""In-place and out= semantics, and the timing path (run on the interpreter with host clocks, tests only)."""

from __future__ import annotations

import dataclasses

import torch
from conftest import check_outcomes, kernel_source, small_cos_record

from evaluation.catalog.spec import Call, Case, EntryPoint
from evaluation.judge.job import JudgeJob
from evaluation.judge.runner import JudgeOptions, TimingOptions, judge_with


def inplace_cos_record():
    """A test-only ``cos_`` record: mutates and returns ``self`` (an in-out argument, never poisoned)."""
    base = small_cos_record()

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        return base.make_inputs(dataclasses.replace(case, entry_point="cos"), generator)

    def reference(case: Case, call: Call) -> torch.Tensor:
        return call.args[0].cos_()

    cases = (
        Case("cos_", {"shape": [33], "dtype": "float32", "range": [-2.0, 2.0]}),
        Case("cos_", {"shape": [4, 17], "dtype": "float32", "layout": "transposed", "range": [-2.0, 2.0]}),
    )
    return dataclasses.replace(
        base,
        operator_id="aten::cos_",
        entry_points=(
            EntryPoint("cos_", "cos_(self: Tensor) -> Tensor", "aten::cos_", mutates=(0,), compare_return=False),
        ),
        make_inputs=make_inputs,
        reference=reference,
        smoke=cases,
    )


def test_in_place_kernel_passes_because_self_is_not_poisoned(warm_forkserver):
    job = JudgeJob("aten::cos_", kernel_source("good/cos_inplace.py"), "cpu-interpreter", "cpu")
    result = judge_with(job, JudgeOptions(spec=inplace_cos_record()))

    assert (result.status, result.cases_passed) == ("passed", 2)
    assert check_outcomes(result)["ghost_replay"] == "passed"


def test_out_buffer_is_poisoned_so_an_idle_cos_out_fails(run_judge):
    source = kernel_source("good/cos_plain.py").replace(
        "def cos_out(x: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:\n    result = cos(x)\n"
        "    out.copy_(result.view(out.shape))\n    return out",
        "def cos_out(x: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:\n    cos(x)\n    return out",
    )
    result = run_judge("", source=source)

    assert result.status == "failed_correctness"
    assert result.failed_case["case_id"].startswith("cos_out[")
    assert result.failed_case["message"] == "output 0: 33 NaN value(s) (the case does not allow NaN)"


def test_public_judge_never_reports_a_speedup_on_the_interpreter(warm_forkserver):
    job = JudgeJob("aten::cos", kernel_source("good/cos_plain.py"), "cpu-interpreter", "cpu", measure_timing=True)
    result = judge_with(job, JudgeOptions(spec=small_cos_record()))

    assert result.status == "passed"
    assert result.speedup is None and result.speedup_ci95 is None
    assert check_outcomes(result)["timing"] == "skipped"
    assert "timing" not in result.stage_seconds


def test_timing_path_end_to_end_with_host_clocks(warm_forkserver):
    job = JudgeJob(
        "aten::cos",
        kernel_source("good/cos_plain.py"),
        "cpu-interpreter",
        "cpu",
        measure_timing=True,
        peak_bandwidth_bytes_per_s=1e15,
        peak_flops_by_dtype={"float32": 1e18},
    )
    options = JudgeOptions(
        spec=small_cos_record(),
        timing_on_cpu_for_tests=True,
        timing=TimingOptions(sets_per_side=2, min_iterations=5, max_iterations=8, budget_s_per_case=2.0, spot_checks=2),
    )
    result = judge_with(job, options)

    assert result.status == "passed"
    outcomes = check_outcomes(result)
    for name in ("timing_spot_check", "timing_crosscheck", "roofline", "post_timing_recheck", "timing"):
        assert outcomes[name] == "passed"
    assert result.speedup is not None and result.speedup > 0
    low, high = result.speedup_ci95
    assert low <= high
    assert all(case.timed and case.spread["iterations"] == 8 for case in result.case_results)
    assert all(case.roofline_floor_ms is not None and not case.below_roofline for case in result.case_results)


def test_roofline_flags_impossible_speed(warm_forkserver):
    # Peaks so low that every case "beats physics": flagged, not ranked, no speedup.
    job = JudgeJob(
        "aten::cos",
        kernel_source("good/cos_plain.py"),
        "cpu-interpreter",
        "cpu",
        measure_timing=True,
        peak_bandwidth_bytes_per_s=1.0,
    )
    options = JudgeOptions(
        spec=small_cos_record(),
        timing_on_cpu_for_tests=True,
        timing=TimingOptions(sets_per_side=2, min_iterations=3, max_iterations=4),
    )
    result = judge_with(job, options)

    assert (result.status, result.flagged) == ("passed", True)
    assert result.speedup is None
    assert check_outcomes(result)["roofline"] == "failed"
    assert all(case.below_roofline for case in result.case_results)

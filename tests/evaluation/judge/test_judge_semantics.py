"""In-place and out= semantics, and the timing path (run on the interpreter with host clocks, tests only)."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from conftest import check_outcomes, kernel_source, small_cos_record

from evaluation.catalog.smoke_twins import load_twins
from evaluation.catalog.spec import Call, Case, EntryPoint
from evaluation.judge.context import protocol_timing_options
from evaluation.judge.job import JudgeJob
from evaluation.judge.runner import JudgeOptions, TimingOptions, judge_with
from evaluation.judge.untrusted.timing_do_bench import LONG_CALL_MIN_ITERATIONS
from evaluation.judge.version import JUDGE_VERSION, PROTOCOL_STAGE_VERSION


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
    assert result.protocol_speedup is None and result.protocol_speedup_ci95 is None
    assert check_outcomes(result)["timing"] == "skipped"
    assert "protocol_timing" not in check_outcomes(result)
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


def _timed_grid_record():
    """Four cases the original's grid times and one it does not (``timed=False``)."""
    value_range = [-2.0, 2.0]
    smoke = (
        Case("cos", {"shape": [64], "dtype": "float32", "range": value_range}),
        Case("cos", {"shape": [5], "dtype": "float32", "range": value_range}),
        Case("cos", {"shape": [3, 7], "dtype": "float16", "range": value_range}),
        Case("cos_out", {"shape": [9], "dtype": "float32", "range": value_range}),
        Case("cos", {"shape": [2], "dtype": "float32", "range": value_range}, timed=False),
    )
    return dataclasses.replace(small_cos_record(), smoke=smoke)


def _protocol_judgement(**options):
    options.setdefault("protocol_timing", protocol_timing_options())
    job = JudgeJob(
        "aten::cos",
        kernel_source("good/cos_plain.py"),
        "cpu-interpreter",
        "cpu",
        measure_timing=True,
        peak_bandwidth_bytes_per_s=1e15,
        peak_flops_by_dtype={"float32": 1e18},
    )
    return judge_with(
        job,
        JudgeOptions(
            spec=_timed_grid_record(),
            timing_on_cpu_for_tests=True,
            # The device-time stage times one case; the protocol stage every case of the timed grid.
            timing=TimingOptions(sets_per_side=2, min_iterations=3, max_iterations=4, max_timed_cases=1),
            **options,
        ),
    )


def test_the_protocol_stage_times_every_case_of_the_timed_grid_beside_the_device_time_stage(warm_forkserver):
    result = _protocol_judgement()

    assert result.status == "passed" and result.judge_version == PROTOCOL_STAGE_VERSION
    outcomes = check_outcomes(result)
    assert outcomes["protocol_timing"] == "passed" and outcomes["post_timing_recheck"] == "passed"
    timed_by_protocol = [case for case in result.case_results if case.protocol_timing is not None]
    assert len(timed_by_protocol) == 4  # every timed case; the untimed one is not
    assert all(case.params["shape"] != [2] for case in timed_by_protocol)
    assert sum(case.timed for case in result.case_results) == 1  # the device-time stage's one case
    for case in timed_by_protocol:
        figures = case.protocol_timing
        assert figures["speedup"] == figures["reference_ms"] / figures["candidate_ms"]
        # ATen's timer, do_bench's loop: two batches a side of 4 to 10 timed calls, of 2 for calls of a
        # millisecond or more (an interpreted call is); the median.
        assert 2 * LONG_CALL_MIN_ITERATIONS <= figures["iterations"] <= 20 and figures["stop_reason"] == "do_bench"
        assert (figures["loop"], figures["statistic"]) == ("do_bench", "median")
    speedups = [case.protocol_timing["speedup"] for case in timed_by_protocol]
    expected = torch.tensor(speedups, dtype=torch.float64).log().mean().exp().item()
    assert abs(result.protocol_speedup - expected) < 1e-9 * expected
    low, high = result.protocol_speedup_ci95
    assert low <= high
    assert result.speedup is not None  # the device-time speedup stays, beside it
    breakdown = result.environment["stage_breakdown"]
    assert breakdown["protocol_timing.input_sets"] > 0 and breakdown["sandbox.protocol_timing_loop"] > 0
    assert "protocol_timing" in result.stage_seconds


def test_the_protocol_stage_can_be_switched_off_for_measuring_the_rest(warm_forkserver):
    result = _protocol_judgement(protocol_timing=None)

    assert result.status == "passed" and result.speedup is not None
    assert result.protocol_speedup is None and result.protocol_speedup_ci95 is None
    assert check_outcomes(result)["protocol_timing"] == "skipped"
    assert all(case.protocol_timing is None for case in result.case_results)
    assert result.judge_version == JUDGE_VERSION  # the stage on is version PROTOCOL_STAGE_VERSION


# Honest wherever the judge's audit (a dispatch mode) watches: correctness and the device-time stage. Where
# nothing watches, the protocol stage's loops, it fails as FAILURE says.
FAILS_ONLY_UNWATCHED = """
import triton
import triton.language as tl
from torch.utils._python_dispatch import _get_current_dispatch_mode
import torch


@triton.jit
def cos_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, tl.cos(x).to(out_ptr.dtype.element_ty), mask=mask)


def cos(x):
    if _get_current_dispatch_mode() is None:
        FAILURE
    x = x.contiguous()
    out = torch.empty_like(x)
    cos_kernel[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    return out


def cos_out(x, *, out):
    out.copy_(cos(x))
    return out
"""


@pytest.mark.parametrize(
    ("failure", "status", "reason"),
    [
        ("raise RuntimeError('unwatched')", "failed_runtime", "raised: RuntimeError: unwatched"),
        (
            "import numpy; numpy.lib.stride_tricks.as_strided(numpy.zeros(1), (2,), (1 << 40,))[1] + 1",
            "failed_runtime",
            "the sandbox process died in case cos[",
        ),
    ],
)
def test_a_protocol_loop_that_fails_in_the_device_time_stage_s_hold_is_the_protocol_case_s_failure(
    warm_forkserver, failure, status, reason
):
    # The protocol stage's first chunk is timed in the device-time stage's exclusive hold (ship_ahead). A
    # loop that raised is reported by the protocol stage, after the device-time stage's own checks; one that
    # took the sandbox down ends the judgement right after that hold, naming the protocol's case.
    job = JudgeJob(
        "aten::cos",
        FAILS_ONLY_UNWATCHED.replace("FAILURE", failure),
        "cpu-interpreter",
        "cpu",
        measure_timing=True,
        peak_bandwidth_bytes_per_s=1e15,
        peak_flops_by_dtype={"float32": 1e18},
    )
    result = judge_with(
        job,
        JudgeOptions(
            spec=_timed_grid_record(),
            static_scan=False,
            timing_on_cpu_for_tests=True,
            timing=TimingOptions(sets_per_side=2, min_iterations=3, max_iterations=4, max_timed_cases=1),
            protocol_timing=protocol_timing_options(),
        ),
    )

    assert result.status == status and reason in result.reason, result.reason
    breakdown = result.environment["stage_breakdown"]
    assert breakdown["sandbox.timing_loop"] > 0 and breakdown["protocol_timing.input_sets"] > 0
    if "died" not in reason:  # the sandbox lived on: the device-time stage finished first
        assert check_outcomes(result)["timing"] == "passed"
        assert check_outcomes(result).get("post_timing_recheck") is None


def test_the_public_judge_measures_the_protocol_speedup_only_when_the_worker_asks(monkeypatch):
    from evaluation.judge import runner

    seen = []
    monkeypatch.setattr(runner, "judge_with", lambda job, options: seen.append(options.protocol_timing))
    job = JudgeJob("aten::cos", "", "nvidia-h200", "cuda", measure_timing=True)
    runner.judge(job)
    monkeypatch.setenv("KGB_PROTOCOL_TIMING", "on")
    runner.judge(job)

    monkeypatch.setenv("KGB_PROTOCOL_WINDOW", "whole_call")
    runner.judge(job)
    monkeypatch.setenv("KGB_PROTOCOL_WINDOW", "device")  # not a protocol window: the default one
    runner.judge(job)

    assert seen[0] is None
    assert seen[1] == protocol_timing_options() and seen[1].window == "original"
    assert seen[2].window == "whole_call" and seen[3].window == "original"


@pytest.mark.parametrize(
    ("loop", "statistic"), [("do_bench", "median"), ("do_bench", "mean"), ("back_to_back", "mean")]
)
def test_a_case_is_timed_by_the_timer_the_original_gives_its_source(warm_forkserver, monkeypatch, loop, statistic):
    # PROTOCOL.md 6 and VLLM_CUBLAS.md: ATen do_bench's median, vLLM do_bench's mean, cuBLAS the mean of calls
    # back to back between two events with no flush (context.ORIGINAL_TIMERS). The sandbox finds its
    # reference by the operator's id, so the cos record stands in for each source's by taking its timer.
    from evaluation.judge import context

    monkeypatch.setitem(context.ORIGINAL_TIMERS, "aten", (loop, statistic))
    result = _protocol_judgement()

    assert result.status == "passed" and result.protocol_speedup is not None
    timed = [case.protocol_timing for case in result.case_results if case.protocol_timing is not None]
    assert len(timed) == 4
    assert {(figures["loop"], figures["statistic"], figures["stop_reason"]) for figures in timed} == {
        (loop, statistic, loop)
    }
    detail = check_outcomes_detail(result, "protocol_timing")
    assert detail.endswith(f"the {statistic}") and ("no flush" in detail) == (loop == "back_to_back")
    assert result.environment["protocol_window"] == "original"


def test_a_source_s_timer_can_be_replaced_by_one_loop_for_every_source():
    from evaluation.judge.context import ORIGINAL_TIMERS, protocol_timer

    assert {source: protocol_timer("original", f"{source}::op") for source in ORIGINAL_TIMERS} == ORIGINAL_TIMERS
    # Another window times every source with its loop; the statistic stays the source's (the original's formula).
    assert protocol_timer("do_bench", "cublas::cublasSaxpy_v2") == ("do_bench", "mean")
    assert protocol_timer("back_to_back", "aten::cos") == ("back_to_back", "median")


@pytest.mark.parametrize("window", ["caller", "whole_call"])
def test_the_synchronised_windows_time_every_case_too(warm_forkserver, window):
    # Kept for comparing them with do_bench's loop on a GPU (KGB_PROTOCOL_WINDOW).
    result = _protocol_judgement(protocol_timing=protocol_timing_options(window))

    assert result.status == "passed" and result.protocol_speedup is not None
    assert result.environment["protocol_window"] == window
    assert f"{window} window" in check_outcomes_detail(result, "protocol_timing")
    timed = [case for case in result.case_results if case.protocol_timing is not None]
    assert len(timed) == 4 and all(case.protocol_timing["stop_reason"] != "do_bench" for case in timed)


def check_outcomes_detail(result, name):
    return next(check.detail for check in result.checks if check.name == name)


def test_a_result_round_trips_its_protocol_figures(warm_forkserver):
    from evaluation.judge.job import JudgeResult

    result = _protocol_judgement()
    again = JudgeResult.from_json(result.to_json())

    assert again.protocol_speedup == result.protocol_speedup
    assert again.protocol_speedup_ci95 == result.protocol_speedup_ci95
    figures = [case.protocol_timing for case in result.case_results]
    assert [case.protocol_timing for case in again.case_results] == figures


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
    assert result.speedup is None and result.protocol_speedup is None  # no case of either stage is ranked
    assert check_outcomes(result)["roofline"] == "failed"
    assert all(case.below_roofline for case in result.case_results)


def test_the_unwatched_check_compares_with_the_smaller_of_the_audited_window_and_the_probed_kernels():
    import pytest

    from evaluation.judge.job import CaseResult
    from evaluation.judge.timed_requests import TimedCase
    from evaluation.judge.timing_protocol import audited_device_ms, audited_evidence, check_against_device_time
    from evaluation.judge.verdicts import Verdict

    case = Case("cos", {"shape": [8], "dtype": "float32"})
    timed = CaseResult(case.case_id, "public", dict(case.params), True, timed=True, candidate_ms=0.27)
    item = TimedCase("public", case, None, None, host_ms=1.0, sent_bytes=0, sets=2)
    assert audited_device_ms(timed) == 0.27  # no probe figure (none launched, or its call unchecked): the window
    with pytest.raises(Verdict, match="it does less work when it is not watched") as raised:
        check_against_device_time(item, 0.11, audited_device_ms(timed))
    assert raised.value.check == "timing_crosscheck"
    check_against_device_time(item, 0.25, audited_device_ms(timed))  # launch cost on top of device time: fine
    # A readback (.item()) waits for the host inside its call, so its audited window held audited host time:
    # its kernels' own device time, from the device-time loop's probe call, is the floor, marked or not.
    timed.spread = {"kernel_device_ms": 0.02}
    assert audited_device_ms(timed) == 0.02
    check_against_device_time(item, 0.11, audited_device_ms(timed))
    with pytest.raises(Verdict, match="not watched"):  # less than even its kernels' own time
        check_against_device_time(item, 0.005, audited_device_ms(timed))
    # A probe whose launches waited for the host (a readback's second kernel on an idle device) reads more
    # than the window: the window, then.
    timed.spread = {"kernel_device_ms": 0.4, "host_bound_sides": ["candidate"]}
    assert audited_device_ms(timed) == 0.27
    timed.spread = {"kernel_device_ms": None}  # the probe's call was not spot-checked: its figure is dropped
    assert audited_device_ms(timed) == 0.27
    # A refusal says what it compared with, and why the probe's figure did not count where it did not.
    timed.spread = {"kernel_device_ms": None, "probe_note": "no figure: a launch made no window"}
    with pytest.raises(Verdict) as raised:
        check_against_device_time(item, 0.11, audited_device_ms(timed), evidence=audited_evidence(timed))
    assert "its timed window's median 0.2700 ms, its probe call's kernels no figure: a launch made no window" in str(
        raised.value
    )
    timed.spread = {"kernel_device_ms": 0.2, "probe_note": "spot-checked"}
    assert audited_evidence(timed) == "its timed window's median 0.2700 ms, its probe call's kernels 0.2000 ms"
    assert audited_device_ms(CaseResult(case.case_id, "public", {}, True)) is None  # not timed that way


def test_the_unwatched_floor_moves_with_the_loop_s_cache_state_as_the_reference_s_calls_show():
    # Calls back to back find the L2 warm (cuBLAS's loop): an honest call may run under its flushed device
    # time there, and so does the reference's. The floor is lowered by as much as the reference gained.
    import pytest

    from evaluation.judge.job import CaseResult
    from evaluation.judge.timed_requests import TimedCase
    from evaluation.judge.timing_protocol import (
        CALLER_FLOOR_FRACTION,
        WARM_CACHE_MAX_GAIN,
        check_against_device_time,
        warm_cache_allowance,
    )
    from evaluation.judge.verdicts import Verdict

    case = Case("cos", {"shape": [8], "dtype": "float32"})
    flushed = CaseResult(case.case_id, "public", {}, True, timed=True, candidate_ms=0.30, reference_ms=0.40)
    item = TimedCase("public", case, None, None, host_ms=1.0, sent_bytes=0, sets=1)

    # The reference ran at half its flushed device time in this loop: the candidate may too.
    allowance = warm_cache_allowance("back_to_back", 0.20, flushed)
    assert allowance == 0.5
    check_against_device_time(item, 0.15, flushed.candidate_ms, CALLER_FLOOR_FRACTION * allowance)
    # Doing less than that still fails; and a loop in which the reference is not faster lowers nothing.
    with pytest.raises(Verdict, match="not watched"):
        check_against_device_time(item, 0.05, flushed.candidate_ms, CALLER_FLOOR_FRACTION * allowance)
    assert warm_cache_allowance("back_to_back", 0.45, flushed) == 1.0
    assert warm_cache_allowance("back_to_back", 0.20, CaseResult(case.case_id, "public", {}, True)) == 1.0
    # At most WARM_CACHE_MAX_GAIN times faster, however fast the reference read.
    assert warm_cache_allowance("back_to_back", 0.001, flushed) == 1 / WARM_CACHE_MAX_GAIN
    # The flushed loops lower nothing: there a reference that read faster did so by noise.
    assert warm_cache_allowance("do_bench", 0.20, flushed) == 1.0


TWIN_IDS = {case.case_id for case in load_twins().get("aten::cos", ())}


def test_the_sandbox_draws_the_protocol_stages_unchecked_sets_itself(warm_forkserver):
    """The catalog's own record: the protocol stage's sets that nothing checks are drawn by the sandbox from
    seeds (none cross the pipe); its spot-checked cases keep sets drawn here, checked against a redraw."""
    from evaluation.judge.timing_protocol import PROTOCOL_SPOT_CASES

    job = JudgeJob("aten::cos", kernel_source("good/cos_plain.py"), "cpu-interpreter", "cpu", measure_timing=True)
    result = judge_with(
        job,
        JudgeOptions(
            timing_on_cpu_for_tests=True,
            timing=TimingOptions(sets_per_side=2, min_iterations=3, max_iterations=4, max_timed_cases=1),
            protocol_timing=protocol_timing_options(),
        ),
    )

    assert result.status == "passed", result.reason
    timed = [case for case in result.case_results if case.protocol_timing is not None]
    # Every hand-written smoke case is timed; the derived twins of the public grid's structures are not.
    untimed = [case for case in result.case_results if case.protocol_timing is None]
    assert len(timed) > PROTOCOL_SPOT_CASES and all(case.case_id in TWIN_IDS for case in untimed)
    assert result.protocol_speedup is not None and check_outcomes(result)["protocol_timing"] == "passed"
    drawn = result.environment["timing_sets_drawn_by_sandbox"]
    assert drawn == {"protocol_timing": len(timed) - PROTOCOL_SPOT_CASES}


def test_a_record_the_sandbox_cannot_find_has_every_set_drawn_here(warm_forkserver):
    """A record built by a test (or a script) is not the one the sandbox would find by its id: its sets are
    all drawn on the trusted side and sent."""
    result = _protocol_judgement()

    assert result.status == "passed" and result.protocol_speedup is not None
    assert "timing_sets_drawn_by_sandbox" not in result.environment

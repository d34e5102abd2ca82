"""scripts/gpu/judge_h200.py's protocol_dobench section, the parts that need no GPU: which cases it times
(those the judge gave a protocol timing), what it times as the reference side, putting in-place arguments
back between timed calls, and the per-operator agreement figures."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest
import torch

from evaluation.judge.job import CaseResult, JudgeResult
from evaluation.judge.records import find_operator

ROOT = Path(__file__).resolve().parents[3]


def _script():
    path = ROOT / "scripts" / "gpu" / "judge_h200.py"
    module_spec = importlib.util.spec_from_file_location("judge_h200", path)
    module = importlib.util.module_from_spec(module_spec)
    sys.modules["judge_h200"] = module
    module_spec.loader.exec_module(module)
    return module


script = _script()


def _case_result(case_id: str, protocol: dict | None, **spread) -> CaseResult:
    result = CaseResult(case_id=case_id, tier="public", params={}, passed=True, spread=dict(spread))
    result.protocol_timing = protocol  # a field of the judge with the protocol pass; set either way
    return result


def test_only_protocol_timed_cases_are_taken_in_the_judges_order():
    spec = find_operator("aten::zero_")
    public = [case for case in spec.cases("public") if case.timed]
    second, first = public[1], public[0]
    result = JudgeResult(
        status="passed",
        reason="",
        case_results=[
            _case_result(second.case_id, {"speedup": 1.1}),
            _case_result(first.case_id, None),  # timed by device time only
            _case_result("zero_[held-out draw]", {"speedup": 0.9}),
            _case_result(public[2].case_id, {"speedup": 1.0}),
        ],
    )
    found, unknown = script.protocol_cases(spec, result)
    assert [case.case_id for case, _ in found] == [second.case_id, public[2].case_id]
    assert [case_result.protocol_timing["speedup"] for _, case_result in found] == [1.1, 1.0]
    assert unknown == ["zero_[held-out draw]"]
    dry, none = script.protocol_cases(spec, None)
    assert [case.case_id for case, _ in dry] == [case.case_id for case in public] and none == []


def test_the_reference_side_is_what_the_judge_timed():
    result = JudgeResult(status="passed", reason="", environment={"timing_baseline": "cuBLAS (C API via ctypes)"})
    own = _case_result("a", {"speedup": 1.0, "reference_kind": "reference"})
    from_spread = _case_result("b", {"speedup": 1.0}, reference_kind="vllm._custom_ops")
    neither = _case_result("c", {"speedup": 1.0})
    assert script.protocol_reference_kind(result, own) == "reference"
    assert script.protocol_reference_kind(result, from_spread) == "vllm._custom_ops"
    assert script.protocol_reference_kind(result, neither) == "cuBLAS (C API via ctypes)"
    assert script.protocol_reference_kind(JudgeResult(status="passed", reason=""), neither) == "reference"


def test_in_place_arguments_are_put_back_for_both_sides():
    spec = find_operator("aten::zero_")
    case = next(case for case in spec.cases("public") if case.timed and case.params.get("shape"))
    # A torch-written kernel file: the restore is the script's, whatever the kernel.
    kernel = types.SimpleNamespace(zero_=lambda tensor: tensor.zero_())
    sides = script.protocol_case_sides(spec, kernel, case, "reference", torch.device("cpu"))
    assert sides["timed_against"] == "reference"
    for side in ("candidate", "reference"):
        returned = sides[side]()
        target = returned if isinstance(returned, torch.Tensor) else None
        assert target is not None and not target.any()
        restore = sides["restore"][side]
        assert restore is not None
        restore()
        assert target.any(), f"{side}: the drawn values are back"
    # do_bench iterates grad_to_none before every timed call: iterating restores, and yields nothing.
    calls = []
    assert list(script._BeforeEachTimedCall(lambda: calls.append(1))) == [] and calls == [1]


def test_a_pure_function_has_nothing_to_restore():
    spec = find_operator("aten::index_select")
    case = spec.cases("public")[0]
    kernel = types.SimpleNamespace(index_select=torch.index_select)
    sides = script.protocol_case_sides(spec, kernel, case, "reference", torch.device("cpu"))
    assert sides["restore"] == {"candidate": None, "reference": None}


def test_agreement_is_over_the_cases_both_timed():
    cases = [
        {"case_id": "a", "judge": 1.0, "do_bench": 1.05},
        {"case_id": "b", "judge": 2.0, "do_bench": 2.1},
        {"case_id": "c", "judge": None, "do_bench": 9.0},  # not in the comparison
        {"case_id": "d", "judge": 1.0, "error": "RuntimeError: x"},
    ]
    row = script.protocol_operator_row("aten::x", JudgeResult(status="passed", reason="", speedup=0.5), cases, 5, [])
    assert row["compared_cases"] == 2 and row["timed_cases"] == 3 and row["failed_cases"] == ["d"]
    assert row["ratio"] == pytest.approx(1 / 1.05)
    assert row["within_10pct"] is True and row["judge_device_time"] == 0.5
    far = script.protocol_operator_row("aten::x", None, [{"case_id": "a", "judge": 1.0, "do_bench": 1.2}], 1, [])
    assert far["within_10pct"] is False and far["status"] == "not judged"


def test_each_side_s_microseconds_are_compared_with_do_bench_s_to_say_which_side_parts_them():
    # The candidate read 4x do_bench's us on one case and the same on the other (geometric mean 2); the
    # reference 0.9x on both: the candidate's side is what parts the speedups.
    def case(name, candidate_ms, do_bench_candidate_ms):
        return {
            "case_id": name,
            "judge": 1.0,
            "do_bench": 1.0,
            "judge_reference_ms": 0.009,
            "do_bench_reference_ms": 0.010,
            "judge_candidate_ms": candidate_ms,
            "do_bench_candidate_ms": do_bench_candidate_ms,
        }

    row = script.protocol_operator_row("aten::x", None, [case("a", 0.040, 0.010), case("b", 0.010, 0.010)], 2, [])
    assert row["sides_judge_over_do_bench"] == {"reference": pytest.approx(0.9), "candidate": pytest.approx(2.0)}
    untimed = script.protocol_operator_row("aten::x", None, [{"case_id": "a", "judge": 1.0, "do_bench": 1.2}], 1, [])
    assert untimed["sides_judge_over_do_bench"] == {"reference": None, "candidate": None}


def test_each_source_is_compared_with_the_original_s_timer_for_it():
    # ATen do_bench's median, vLLM do_bench's mean, cuBLAS 100 calls back to back between events.
    assert script.original_timer("aten::cos") is script.do_bench_median_ms
    assert script.original_timer("vllm13::rms_norm") is script.do_bench_mean_ms
    assert script.original_timer("cublas::cublasSaxpy_v2") is script.cublas_events_mean_ms
    from evaluation.judge.context import ORIGINAL_TIMERS

    assert set(script.ORIGINAL_TIMERS) == set(ORIGINAL_TIMERS)  # the judge's table and the script's agree

"""The 50 vLLM 0.13 records: complete, named like the original wrappers, and their smoke cases run on the CPU."""

from __future__ import annotations

import copy
import csv
import importlib
import json
import random
import re
from pathlib import Path

import pytest
import torch

from evaluation.catalog import registry
from evaluation.catalog.spec import Call, Case, OperatorSpec

OPERATORS_CSV = Path(__file__).resolve().parents[2] / "leaderboard" / "data" / "operators.csv"
VLLM_MODULES = tuple(name for name in registry.RECORD_MODULES if name.startswith("evaluation.catalog.vllm."))
SPECS: list[OperatorSpec] = [spec for name in VLLM_MODULES for spec in importlib.import_module(name).OPERATORS]
AVAILABLE = [spec for spec in SPECS if not spec.unavailable_reason]
SMOKE = [(spec, case) for spec in AVAILABLE for case in spec.smoke]


def tensors_in(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [tensor for item in value for tensor in tensors_in(item)]
    if isinstance(value, dict):
        return [tensor for item in value.values() for tensor in tensors_in(item)]
    return []


def signature_parameters(signature: str) -> list[str]:
    inside = signature[signature.index("(") + 1 : signature.rindex(")")]
    return [re.split(r"[:=]", part)[0].strip() for part in re.split(r",(?![^\[]*\])", inside) if part.strip()]


def test_ids_are_the_vllm13_operators_of_operators_csv() -> None:
    with OPERATORS_CSV.open() as handle:
        expected = {row["operator_id"] for row in csv.DictReader(handle) if row["operator_id"].startswith("vllm13::")}
    ids = [spec.operator_id for spec in SPECS]
    assert len(expected) == 50
    assert len(ids) == len(set(ids)) == 50
    assert set(ids) == expected


def test_unavailable_records_are_the_two_known_ones() -> None:
    unavailable = sorted(spec.name for spec in SPECS if spec.unavailable_reason)
    assert unavailable == ["allspark_w8a16_gemm", "gptq_marlin_24_gemm"]


@pytest.mark.parametrize("spec", SPECS, ids=lambda spec: spec.name)
def test_record_is_complete(spec: OperatorSpec) -> None:
    assert spec.source == "vllm"
    assert spec.operator_id == f"vllm13::{spec.name}"
    assert [entry.name for entry in spec.entry_points] == [spec.name]
    assert spec.entry_points[0].signature.startswith(f"{spec.name}(")
    assert spec.description and spec.prompt_notes
    assert spec.baseline_name == ""
    assert spec.judgement in ("allclose", "statistical")
    assert (spec.judgement == "statistical") == (spec.stat_check is not None)
    if spec.unavailable_reason:
        assert spec.smoke == () and spec.public == ()
        assert spec.held_out(random.Random(0)) == []
    else:
        assert spec.smoke and spec.public
        assert len(spec.definition_hash()) == 64


@pytest.mark.parametrize("spec", AVAILABLE, ids=lambda spec: spec.name)
def test_cases_are_serialisable_and_named_after_the_entry_point(spec: OperatorSpec) -> None:
    held_out = spec.cases("held_out", random.Random(7))
    assert held_out, "held-out draw is empty"
    assert held_out == spec.cases("held_out", random.Random(7))
    for case in spec.smoke + spec.public + held_out:
        assert case.entry_point == spec.name
        json.dumps(case.to_json())
        assert case.reduce_dim >= 1
    assert any(case.timed for case in spec.public), "no public case is timed"
    assert len({case.case_id for case in spec.public}) == len(spec.public)


@pytest.mark.parametrize(("spec", "case"), SMOKE, ids=[case.case_id for _, case in SMOKE])
def test_smoke_case_builds_cpu_inputs_and_runs_the_reference(spec: OperatorSpec, case: Case) -> None:
    call = spec.make_inputs(case, torch.Generator().manual_seed(1234))
    again = spec.make_inputs(case, torch.Generator().manual_seed(1234))
    parameters = signature_parameters(spec.entry_point(case.entry_point).signature)
    assert len(call.args) <= len(parameters)
    assert set(call.kwargs) <= set(parameters)
    entry = spec.entry_point(case.entry_point)
    written = {id(tensor) for key in entry.mutates + entry.scratch for tensor in tensors_in(call.get(key))}
    for tensor, twin in zip(
        tensors_in(call.args) + tensors_in(call.kwargs), tensors_in(again.args) + tensors_in(again.kwargs), strict=True
    ):
        assert tensor.device.type == "cpu"
        if id(tensor) not in written:  # outputs may start as torch.empty garbage
            assert torch.equal(
                tensor.view(torch.uint8) if tensor.dtype.itemsize == 1 else tensor,
                twin.view(torch.uint8) if twin.dtype.itemsize == 1 else twin,
            )

    private = Call(args=copy.deepcopy(call.args), kwargs=copy.deepcopy(call.kwargs))
    returned = spec.reference(case, private)
    outputs = spec.outputs_of(case, private, returned)
    assert outputs, "nothing is compared"
    compared = [output for output in outputs if output is not None]
    assert compared and all(isinstance(output, (torch.Tensor, list)) for output in compared)
    for index, output in enumerate(outputs):
        for tensor in tensors_in(output):
            atol, rtol = spec.tolerance(case, index, tensor.dtype)
            assert atol >= 0 and rtol >= 0
            if not tensor.dtype.is_floating_point or tensor.dtype.itemsize > 1:
                assert not torch.isnan(tensor.float()).any() or case.allow_nan
    if spec.stat_check is not None:
        assert spec.stat_check(case, private, outputs) is None


def test_in_place_records_compare_what_they_write() -> None:
    by_name = {spec.name: spec for spec in SPECS}
    assert by_name["rms_norm"].entry_points[0].mutates == (0,)
    assert by_name["fused_add_rms_norm"].entry_points[0].mutates == (0, 1)
    assert by_name["reshape_and_cache"].entry_points[0].mutates == (2, 3)
    assert by_name["paged_attention_v2"].entry_points[0].scratch == (1, 2, 3)
    assert by_name["rms_norm_dynamic_per_token_quant"].output_tolerances[0] == (1.0, 0.0)
    assert all(
        not entry.compare_return
        for name in ("rms_norm", "copy_blocks", "merge_attn_states")
        for entry in by_name[name].entry_points
    )


def test_moe_align_check_accepts_any_order_inside_a_segment_and_nothing_else() -> None:
    spec = next(spec for spec in SPECS if spec.name == "moe_align_block_size")
    case = spec.smoke[0]
    call = spec.make_inputs(case, torch.Generator().manual_seed(5))
    spec.reference(case, call)
    sorted_ids = call.args[3]
    segment_end = int((sorted_ids < call.args[0].numel()).nonzero()[1]) + 1
    sorted_ids[:segment_end] = sorted_ids[:segment_end].flip(0)
    assert spec.stat_check(case, call, spec.outputs_of(case, call, None)) is None
    sorted_ids[0] = sorted_ids[0] + 1
    assert (
        spec.stat_check(case, call, spec.outputs_of(case, call, None))
        == "sorted_token_ids differ (as a multiset per expert segment)"
    )


def on_device(value: object, device: str) -> object:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (list, tuple)):
        return type(value)(on_device(item, device) for item in value)
    return value


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("spec", AVAILABLE, ids=lambda spec: spec.name)
def test_public_references_run_on_cuda_and_agree_with_the_cpu(spec: OperatorSpec) -> None:
    """References are device-agnostic: sampled public cases run on CUDA; the first one matches the CPU."""
    public = spec.public
    for position, case in enumerate(public[index] for index in sorted({0, len(public) // 2, len(public) - 1})):
        call = spec.make_inputs(case, torch.Generator().manual_seed(99))
        device_call = Call(args=on_device(call.args, "cuda"), kwargs=on_device(call.kwargs, "cuda"))
        device_outputs = spec.outputs_of(case, device_call, spec.reference(case, device_call))
        if spec.stat_check is not None:
            assert spec.stat_check(case, device_call, device_outputs) is None
            continue
        if position:
            continue
        cpu_outputs = spec.outputs_of(case, call, spec.reference(case, call))
        for index, (got, want) in enumerate(zip(device_outputs, cpu_outputs, strict=True)):
            for got_tensor, want_tensor in zip(tensors_in(got), tensors_in(want), strict=True):
                atol, rtol = spec.tolerance(case, index, want_tensor.dtype)
                torch.testing.assert_close(
                    got_tensor.cpu().float()
                    if want_tensor.dtype.itemsize == 1 and want_tensor.dtype.is_floating_point
                    else got_tensor.cpu(),
                    want_tensor.float()
                    if want_tensor.dtype.itemsize == 1 and want_tensor.dtype.is_floating_point
                    else want_tensor,
                    atol=atol,
                    rtol=rtol,
                    equal_nan=case.allow_nan,
                )

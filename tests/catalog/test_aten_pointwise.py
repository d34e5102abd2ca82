"""The pointwise and copy/conversion ATen records: complete, pinned to the real schemas, and runnable on CPU."""

from __future__ import annotations

import math
import random

import pytest
import torch

from evaluation.catalog import registry
from evaluation.catalog.aten import copies, pointwise
from evaluation.catalog.spec import Case, OperatorSpec, dtype_of

POINTWISE_IDS = [
    "acosh",
    "add",
    "add_",
    "asin",
    "bitwise_not",
    "cos",
    "cosh",
    "div",
    "div_",
    "eq",
    "erfc",
    "floor",
    "floor_divide",
    "fmax",
    "gt",
    "hardsigmoid",
    "heaviside",
    "i0",
    "le",
    "log10",
    "logaddexp2",
    "logit",
    "mish",
    "mul",
    "neg",
    "polygamma",
    "pow",
    "rsqrt",
    "rsub",
    "sgn",
    "silu",
    "sin",
    "special_entr",
    "square",
    "sub",
    "masked_fill_",
    "fill_",
    "zero_",
]
COPY_IDS = ["clone", "copy_", "_to_copy", "to", "contiguous", "resolve_conj", "resolve_neg"]
RECORDS: list[OperatorSpec] = pointwise.OPERATORS + copies.OPERATORS
BY_ID = {spec.operator_id: spec for spec in RECORDS}
SMOKE = [pytest.param(spec, case, id=case.case_id) for spec in RECORDS for case in spec.smoke]
COMPARISONS = {"eq", "gt", "le"}
# Ops whose output is constant by definition (no "not all the same value" check for them).
CONSTANT_BY_DEFINITION = {"zero_", "fill_"}


def test_the_records_are_exactly_the_assigned_operators():
    assert sorted(BY_ID) == sorted(f"aten::{name}" for name in POINTWISE_IDS + COPY_IDS)
    assert len(RECORDS) == 45


def test_both_modules_are_registered():
    assert "evaluation.catalog.aten.pointwise" in registry.RECORD_MODULES
    assert "evaluation.catalog.aten.copies" in registry.RECORD_MODULES


def _schema_of(aten_overload: str) -> torch.FunctionSchema:
    qualified = aten_overload.removeprefix("aten::")
    op_name, _, overload_name = qualified.partition(".")
    return getattr(getattr(torch.ops.aten, op_name), overload_name or "default")._schema


@pytest.mark.parametrize("spec", RECORDS, ids=lambda spec: spec.operator_id)
def test_entry_points_follow_the_naming_rule_and_the_pinned_schema(spec):
    for entry in spec.entry_points:
        schema = _schema_of(entry.aten_overload)
        expected_name = (
            f"{schema.name.removeprefix('aten::')}_{schema.overload_name}"
            if schema.overload_name
            else schema.name.removeprefix("aten::")
        )
        assert entry.name == expected_name
        assert entry.signature.startswith(f"{entry.name}(")
        # Argument names and order, and where the keyword-only marker sits, match torch's registry.
        pinned = entry.signature[len(entry.name) + 1 : entry.signature.rindex(") ->")]
        pinned_names = [part.split(":")[0].strip() for part in pinned.split(", ")]
        expected = []
        for argument in schema.arguments:
            if argument.kwarg_only and "*" not in expected:
                expected.append("*")
            expected.append(argument.name)
        assert pinned_names == expected
        if schema.overload_name.endswith("out"):
            assert (entry.mutates, entry.compare_return) == (("out",), False)
        elif schema.name.endswith("_"):
            assert (entry.mutates, entry.compare_return) == ((0,), False)
        else:
            assert (entry.mutates, entry.compare_return) == ((), True)


@pytest.mark.parametrize("spec", RECORDS, ids=lambda spec: spec.operator_id)
def test_each_record_is_complete(spec):
    assert spec.source == "aten"
    assert spec.judgement == "allclose"
    assert spec.description.endswith(".")
    assert spec.smoke and spec.public
    names = {entry.name for entry in spec.entry_points}
    for tier in (spec.smoke, spec.public):
        assert {case.entry_point for case in tier} == names  # every entry point is exercised in every tier
        assert len({case.case_id for case in tier}) == len(tier)
        assert all(case.reduce_dim == 1 for case in tier)
    assert all(math.prod(case.params["shape"]) <= 200 for case in spec.smoke)


@pytest.mark.parametrize("spec", RECORDS, ids=lambda spec: spec.operator_id)
def test_held_out_cases_are_drawn_deterministically_per_generator(spec):
    first = spec.cases("held_out", random.Random(11))
    again = spec.cases("held_out", random.Random(11))
    other = spec.cases("held_out", random.Random(12))
    assert [case.case_id for case in first] == [case.case_id for case in again]
    assert [case.case_id for case in first] != [case.case_id for case in other]
    assert len(first) >= 6
    public_ids = {case.case_id for case in spec.public}
    assert not public_ids & {case.case_id for case in first}
    assert {case.entry_point for case in first} <= {entry.name for entry in spec.entry_points}


def test_cos_keeps_its_grid():
    spec = BY_ID["aten::cos"]
    assert [entry.name for entry in spec.entry_points] == ["cos", "cos_out"]
    assert (len(spec.smoke), len(spec.public)) == (20, 21)
    assert spec.smoke[15].params == {"shape": [4, 17], "dtype": "float32", "layout": "transposed", "range": [-2.0, 2.0]}
    # The public grid's ranks 4 and 5, small and in one dtype, after the layouts.
    assert [case.params["shape"] for case in spec.smoke[17:19]] == [[2, 3, 2, 4], [2, 1, 3, 2, 3]]


def expected_dtype(spec: OperatorSpec, case: Case) -> torch.dtype:
    params = case.params
    if spec.name in COMPARISONS:
        return torch.bool
    if "to_dtype" in params:
        return dtype_of(params["to_dtype"])
    integer_input = not dtype_of(params["dtype"]).is_floating_point and params["dtype"] != "complex64"
    if spec.name == "div" and integer_input and params.get("rounding_mode") is None:
        return torch.float32  # true division of integers
    return dtype_of(params["dtype"])


@pytest.mark.parametrize(("spec", "case"), SMOKE)
def test_smoke_case_builds_and_the_reference_runs_on_cpu(spec, case):
    call = spec.make_inputs(case, torch.Generator().manual_seed(7))
    same = spec.make_inputs(case, torch.Generator().manual_seed(7))
    for built, rebuilt in zip(
        call.args + list(call.kwargs.values()), same.args + list(same.kwargs.values()), strict=True
    ):
        if isinstance(built, torch.Tensor) and "out" not in call.kwargs:
            torch.testing.assert_close(
                built.resolve_conj().resolve_neg(), rebuilt.resolve_conj().resolve_neg(), rtol=0, atol=0, equal_nan=True
            )
            assert built.stride() == rebuilt.stride()
        elif not isinstance(built, torch.Tensor):
            assert built == rebuilt
    outputs = spec.outputs_of(case, call, spec.reference(case, call))
    assert len(outputs) == 1
    (output,) = outputs
    assert isinstance(output, torch.Tensor)
    assert output.dtype == expected_dtype(spec, case)
    if output.is_floating_point() and not case.allow_nan:
        assert not output.isnan().any()
    if output.numel() >= 30 and spec.name not in CONSTANT_BY_DEFINITION:
        # EXPLOITS 4: a constant output must not be the right answer.
        assert len(set(output.resolve_conj().flatten().tolist())) > 1


def test_in_place_records_never_write_through_a_broadcast_view():
    for spec in RECORDS:
        if any(0 in entry.mutates for entry in spec.entry_points):
            drawn = spec.cases("held_out", random.Random(5))
            assert all(case.params.get("layout") != "broadcast" for case in spec.smoke + spec.public + drawn)


def test_fmax_cases_hold_nans_on_one_side_and_allow_them_only_where_both_are():
    spec = BY_ID["aten::fmax"]
    case = next(case for case in spec.smoke if case.params["shape"] == [33])
    call = spec.make_inputs(case, torch.Generator().manual_seed(3))
    assert case.allow_nan
    assert call.args[0].isnan().any() and call.args[1].isnan().any()
    result = spec.reference(case, call)
    assert torch.equal(result.isnan(), call.args[0].isnan() & call.args[1].isnan())


BOOL_RESULTS = ("aten::eq", "aten::gt", "aten::le", "aten::_to_copy", "aten::to")


@pytest.mark.parametrize("operator_id", BOOL_RESULTS)
def test_bool_results_have_at_least_30_elements_so_the_ghost_replay_poison_cannot_match(operator_id):
    spec = BY_ID[operator_id]
    for case in spec.smoke + spec.public + spec.cases("held_out", random.Random(2)):
        if spec.name in COMPARISONS or case.params.get("to_dtype") == "bool":
            shapes = [tuple(case.params[key]) for key in pointwise.SHAPE_KEYS if key in case.params]
            assert math.prod(torch.broadcast_shapes(*shapes)) >= 30, case.case_id


def test_contiguous_is_only_asked_of_views_that_are_not_contiguous():
    spec = BY_ID["aten::contiguous"]
    small_held_out = [
        case for case in spec.cases("held_out", random.Random(4)) if math.prod(case.params["shape"]) < 100_000
    ]
    for case in spec.smoke + tuple(small_held_out):
        (view,) = spec.make_inputs(case, torch.Generator().manual_seed(0)).args
        assert not view.is_contiguous(), case.case_id
    assert all(case.params["layout"] != "contiguous" for case in spec.public)
    for seed in range(50):
        for case in spec.cases("held_out", random.Random(seed)):
            assert min(case.params["shape"][-2:]) >= 2 and case.params["layout"] != "contiguous"


def test_resolve_records_always_set_the_bit():
    for name, bit in (("aten::resolve_conj", "conj_bit"), ("aten::resolve_neg", "neg_bit")):
        spec = BY_ID[name]
        assert all(case.params[bit] for case in spec.smoke + spec.public + spec.cases("held_out", random.Random(1)))

"""The creation, view, reduction, linalg, random, indexing and loss ATen records: complete, pinned to the real
schemas, and runnable on the CPU (every smoke case builds inputs and runs the reference)."""

from __future__ import annotations

import json
import math
import random

import pytest
import torch

from evaluation.catalog import registry
from evaluation.catalog.aten import creation, indexing, linalg, losses, random_ops, reductions, views
from evaluation.catalog.spec import Call, OperatorSpec

MODULES = (creation, views, reductions, linalg, random_ops, indexing, losses)
ASSIGNED = """
arange empty_strided full new_empty_strided new_ones ones_like scalar_tensor zeros zeros_like _local_scalar_dense item
as_strided expand expand_as narrow reshape select t unsqueeze unsafe_split unsafe_split_with_sizes rot90 cat stack diff
amin argmax cumsum mean sum softmax _softmax sort renorm pairwise_distance
bmm linear matmul mm
bernoulli exponential_ poisson rrelu_with_noise
_index_put_impl_ embedding gather index index_put_ index_select scatter im2col affine_grid_generator
binary_cross_entropy_with_logits huber_loss log_sigmoid_backward margin_ranking_loss mish_backward prelu
smooth_l1_loss_backward soft_margin_loss softplus_backward rrelu_with_noise_backward select_backward
reflection_pad1d_backward upsample_nearest2d_backward
""".split()  # noqa: SIM905 (the brief's list, kept as written)
RECORDS: list[OperatorSpec] = [spec for module in MODULES for spec in module.OPERATORS]
BY_ID = {spec.operator_id: spec for spec in RECORDS}
SMOKE = [pytest.param(spec, case, id=case.case_id) for spec in RECORDS for case in spec.smoke]
RANDOM_SMOKE = [pytest.param(spec, case, id=case.case_id) for spec in random_ops.OPERATORS for case in spec.smoke]
IN_PLACE = {"aten::index_put_", "aten::_index_put_impl_", "aten::exponential_"}
SCALAR_READERS = {"aten::item", "aten::_local_scalar_dense"}
# A smoke case must stay cheap on the CPU Triton interpreter.
SMOKE_MAX_ELEMENTS = 5000


def _tensors(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)


def _schema_of(aten_overload: str) -> torch.FunctionSchema:
    op_name, _, overload_name = aten_overload.removeprefix("aten::").partition(".")
    return getattr(getattr(torch.ops.aten, op_name), overload_name or "default")._schema


def test_the_records_are_exactly_the_assigned_operators():
    assert sorted(BY_ID) == sorted(f"aten::{name}" for name in ASSIGNED)
    assert len(RECORDS) == 65


def test_every_module_is_registered_and_loads_through_the_registry():
    for module in MODULES:
        assert module.__name__ in registry.RECORD_MODULES
    as_written = registry.records_as_written()
    for operator_id in BY_ID:
        assert as_written[operator_id] is BY_ID[operator_id]
    # all_operators() is each record with its derived smoke twins appended (evaluation/catalog/smoke_twins.py).
    catalog = registry.all_operators()
    for operator_id, spec in BY_ID.items():
        assert catalog[operator_id].smoke[: len(spec.smoke)] == spec.smoke


@pytest.mark.parametrize("spec", RECORDS, ids=lambda spec: spec.operator_id)
def test_entry_points_follow_the_naming_rule_and_the_pinned_schema(spec):
    for entry in spec.entry_points:
        schema = _schema_of(entry.aten_overload)
        base = schema.name.removeprefix("aten::")
        assert entry.name == (f"{base}_{schema.overload_name}" if schema.overload_name else base)
        assert entry.signature.startswith(f"{entry.name}(")
        pinned = entry.signature[len(entry.name) + 1 : entry.signature.rindex(") ->")]
        depth, names, current = 0, [], ""
        for char in pinned + ",":
            depth += char in "[("
            depth -= char in "])"
            if char == "," and depth == 0:
                names.append(current.strip().split(":")[0].strip())
                current = ""
            else:
                current += char
        expected = []
        for argument in schema.arguments:
            if argument.kwarg_only and "*" not in expected:
                expected.append("*")
            expected.append(argument.name)
        assert names == expected, entry.name
        # The pinned return text is the schema's.
        assert entry.signature.endswith("-> " + str(schema).rsplit(" -> ", 1)[1])


@pytest.mark.parametrize("spec", RECORDS, ids=lambda spec: spec.operator_id)
def test_record_is_complete(spec):
    assert spec.source == "aten" and spec.description
    assert spec.smoke and spec.public
    names = {entry.name for entry in spec.entry_points}
    first = spec.cases("held_out", random.Random(7))
    assert first and first == spec.cases("held_out", random.Random(7))
    assert first != spec.cases("held_out", random.Random(8))
    for case in spec.smoke + spec.public + tuple(first):
        assert case.entry_point in names
        assert case.reduce_dim >= 1
        json.dumps(case.to_json())
    called = {case.entry_point for case in spec.smoke + spec.public}
    assert called == names, f"entry points no case calls: {names - called}"
    for tier in (spec.smoke, spec.public):
        assert len({case.case_id for case in tier}) == len(tier)
    if spec.judgement != "allclose":
        assert spec.judgement_notes
    assert (spec.stat_check is not None) == (spec.judgement == "statistical")


def test_in_place_ops_compare_the_mutated_self_only():
    for operator_id in IN_PLACE:
        (entry,) = BY_ID[operator_id].entry_points
        assert entry.mutates == (0,) and entry.compare_return is False
    (rrelu,) = BY_ID["aten::rrelu_with_noise"].entry_points
    assert rrelu.mutates == (1,) and rrelu.compare_return is True


def test_special_judgements():
    assert {spec.operator_id for spec in RECORDS if spec.judgement == "statistical"} == {
        "aten::bernoulli",
        "aten::exponential_",
        "aten::poisson",
        "aten::rrelu_with_noise",
    }
    assert {spec.operator_id for spec in RECORDS if spec.judgement == "metadata"} == {
        "aten::empty_strided",
        "aten::new_empty_strided",
    }


def test_matmuls_use_k_as_reduce_dim_and_the_float64_bound():
    for spec in linalg.OPERATORS:
        assert spec.fp64_relative_bound == 1e-5
        assert spec.flops is not None and spec.bytes_moved is not None
        for case in spec.smoke + spec.public:
            assert case.reduce_dim == case.params["mnk"][2]
    mm_case = next(case for case in BY_ID["aten::mm"].public if case.params["mnk"] == [1000, 999, 1001])
    assert BY_ID["aten::mm"].flops(mm_case) == 2 * 1000 * 999 * 1001


def test_reductions_use_the_reduced_length_as_reduce_dim():
    sums = {
        case.params.get("dim", "all")
        if not isinstance(case.params.get("dim"), list)
        else tuple(case.params["dim"]): case.reduce_dim
        for case in BY_ID["aten::sum"].public
        if case.params["shape"] == [200, 40999, 3] and case.params["dtype"] == "float32" and "layout" not in case.params
    }
    assert sums == {"all": 200 * 40999 * 3, 2: 3, 1: 40999, (0, 2): 600}


@pytest.mark.parametrize(("spec", "case"), SMOKE)
def test_smoke_case_builds_runs_and_gives_what_the_judgement_expects(spec, case):
    call = spec.make_inputs(case, torch.Generator().manual_seed(42))
    assert isinstance(call, Call)
    again = spec.make_inputs(case, torch.Generator().manual_seed(42))
    for tensor, twin in zip(_tensors(call.args + [call.kwargs]), _tensors(again.args + [again.kwargs]), strict=True):
        assert tensor.device.type == "cpu"
        assert tensor.numel() <= SMOKE_MAX_ELEMENTS
        if tensor.dtype in (torch.int64, torch.int32) and spec.operator_id in (
            "aten::gather",
            "aten::index_select",
            "aten::embedding",
            "aten::index",
            "aten::scatter",
        ):
            assert tensor.numel() == 0 or int(tensor.min()) >= 0
        if spec.judgement != "statistical" or spec.operator_id == "aten::rrelu_with_noise":
            assert torch.equal(tensor, twin)  # same seed, same inputs
    returned = spec.reference(case, call)
    outputs = spec.outputs_of(case, call, returned)
    assert outputs
    if spec.operator_id in SCALAR_READERS:
        (value,) = outputs
        assert type(value) in (float, int, bool)
        return
    for output in outputs:
        assert isinstance(output, torch.Tensor)
    if spec.judgement == "statistical":
        assert spec.stat_check(case, call, outputs) is None


@pytest.mark.parametrize(("spec", "case"), RANDOM_SMOKE)
def test_stat_check_rejects_constant_and_zero_outputs(spec, case):
    call = spec.make_inputs(case, torch.Generator().manual_seed(5))
    outputs = spec.outputs_of(case, call, spec.reference(case, call))
    for fill in (0.0, 1.0):
        fake = tuple(torch.full_like(output, fill) for output in outputs)
        assert spec.stat_check(case, call, fake) is not None, fill


def test_stat_checks_reject_a_deterministic_threshold_and_sorted_draws():
    bernoulli = BY_ID["aten::bernoulli"]
    case = bernoulli.smoke[0]
    call = bernoulli.make_inputs(case, torch.Generator().manual_seed(3))
    rounded = (call.args[0] > 0.5).to(call.args[0].dtype)  # right mean, wrong spread and calibration
    assert bernoulli.stat_check(case, call, (rounded,)) is not None
    exponential = BY_ID["aten::exponential_"]
    case = exponential.smoke[0]
    call = exponential.make_inputs(case, torch.Generator().manual_seed(3))
    draws = torch.empty(call.args[0].numel()).exponential_(generator=torch.Generator().manual_seed(2))
    assert exponential.stat_check(case, call, (draws.reshape(call.args[0].shape),)) is None
    # Right distribution, but a fixed order: the lag-1 autocorrelation gives it away.
    assert exponential.stat_check(case, call, (draws.sort().values.reshape(call.args[0].shape),)) is not None


def _bernoulli_p_case(p: float, shape: list[int]):
    bernoulli = BY_ID["aten::bernoulli"]
    return bernoulli, next(
        case
        for case in bernoulli.public
        if case.entry_point == "bernoulli_p"
        and case.params["p"] == p
        and case.params["shape"] == shape
        and case.params["dtype"] == "float32"
    )


def test_a_rare_but_honest_bernoulli_draw_passes_where_the_normal_curve_refused_it():
    """p = 0.001 over 96,000 elements: ~96 ones, and two pairs of neighbouring ones (about a 0.4 % chance of an
    honest draw) put the lag-1 autocorrelation at ~0.02, past the normal curve's 5 sigma (0.016). The reference
    itself failed there 16 times in 4,000 draws (scripts/stat_check_calibration.py); an honest kernel failed on
    the H200."""
    bernoulli, case = _bernoulli_p_case(0.001, [20, 320, 15])
    call = bernoulli.make_inputs(case, torch.Generator().manual_seed(0))
    ones = torch.randperm(96_000, generator=torch.Generator().manual_seed(1))[:96] // 4 * 4  # apart, like draws
    draw = torch.zeros(96_000)
    draw[ones] = 1.0
    draw[[1000, 1001, 50_000, 50_001]] = 1.0  # two neighbour pairs
    lag1 = float(((draw[:-1] - draw.mean()) * (draw[1:] - draw.mean())).sum() / ((draw - draw.mean()) ** 2).sum())
    assert lag1 > 5 / (96_000 - 1) ** 0.5  # the old line
    assert bernoulli.stat_check(case, call, (draw.reshape(20, 320, 15),)) is None


def test_a_skewed_bernoulli_with_a_pattern_still_fails():
    """The wider line for skewed draws still refuses a kernel that gives two neighbours one draw."""
    bernoulli, case = _bernoulli_p_case(0.001, [20, 320, 15])
    call = bernoulli.make_inputs(case, torch.Generator().manual_seed(0))
    pairs = torch.bernoulli(torch.full((48_000,), 0.001), generator=torch.Generator().manual_seed(2))
    reason = bernoulli.stat_check(case, call, (pairs.repeat_interleave(2).reshape(20, 320, 15),))
    assert reason is not None and reason.startswith("lag-1 autocorrelation is 0.4"), reason
    assert "Bennett" in reason


def test_bennetts_line_is_the_normal_one_where_draws_are_not_skewed():
    n = 96_000
    normal = 5 * n**0.5
    assert random_ops.bennett_deviation(n, math.inf) == pytest.approx(normal)
    assert random_ops.bennett_deviation(n, 0.0) == pytest.approx(normal)
    # Terms of +-1 (bernoulli at p = 0.5): under 1 % wider; p = 0.001's ones (31.6 above the mean) under 15 %.
    assert normal < random_ops.bennett_deviation(n, 1.0) < 1.01 * normal
    assert normal < random_ops.bennett_deviation(n, 31.6) < 1.15 * normal
    # Bennett's inequality itself at the line: exp(-(V / b^2) h(b t / V)) = exp(-12.5).
    bound = 999.0
    t = random_ops.bennett_deviation(n, bound)
    u = bound * t / n
    assert (n / bound**2) * ((1 + u) * math.log1p(u) - u) == pytest.approx(12.5, rel=1e-6)


def test_a_p_one_half_bernoulli_keeps_the_normal_line():
    bernoulli, case = _bernoulli_p_case(0.5, [20, 320, 15])
    call = bernoulli.make_inputs(case, torch.Generator().manual_seed(0))
    alternating = (torch.arange(96_000) % 2).float()  # lag-1 autocorrelation -1
    reason = bernoulli.stat_check(case, call, (alternating.reshape(20, 320, 15),))
    assert reason is not None and "+- 5 *" in reason, reason


def test_argmax_and_sort_inputs_have_no_ties():
    argmax = BY_ID["aten::argmax"]
    for case in argmax.smoke + argmax.public[:6]:
        x = argmax.make_inputs(case, torch.Generator().manual_seed(0)).args[0].double()
        dim = case.params["dim"]
        top = x.amax() if dim is None else x.amax(dim=dim, keepdim=True)
        assert int((x == top).sum()) == (1 if dim is None else top.numel())
    sort = BY_ID["aten::sort"]
    for case in sort.smoke:
        if case.entry_point == "sort":
            x = sort.make_inputs(case, torch.Generator().manual_seed(0)).args[0]
            dim = case.params["dim"]
            ordered = x.double().sort(dim=dim).values
            assert bool((ordered.diff(dim=dim) > 0).all())


def test_index_put_without_accumulate_never_writes_one_element_twice():
    spec = BY_ID["aten::index_put_"]
    for case in spec.smoke:
        if case.params["accumulate"]:
            continue
        call = spec.make_inputs(case, torch.Generator().manual_seed(0))
        rows, cols = call.args[0].shape
        indices = call.args[1]
        if case.params["mode"] == "elements":
            flat = indices[0] * cols + indices[1]
        else:
            flat = indices[0] if indices[0] is not None else indices[1]
        assert flat.unique().numel() == flat.numel()


def test_views_are_the_entry_points_whose_schema_returns_an_alias():
    # A view's right answer is its argument's own memory, so the judge does not ghost-replay it
    # (correctness.prepare_case); an in-place op (-> Tensor(a!)) and a computing op are replayed.
    from evaluation.catalog.registry import get_operator

    def entry(operator_id: str, name: str):
        return next(e for e in get_operator(operator_id).entry_points if e.name == name)

    assert entry("aten::as_strided", "as_strided").returns_view
    assert entry("aten::expand", "expand").returns_view
    assert not entry("aten::div_", "div__Tensor").returns_view
    assert not entry("aten::cos", "cos").returns_view
    assert not entry("aten::unsafe_split", "unsafe_split_Tensor").returns_view

"""Q8_1's codes at a tie: GGUF's activation quantiser rounds x / d half away from zero, and a GPU's fp32
division (Triton's ``/`` is not correctly rounded) lands either side of an exact .5. One flipped code moves
every output of its token far past fp32's tolerance, so each ggml record's ``exact_formula`` gives the range
such roundings span; a quantiser that is wrong off the ties stays outside it."""

import pytest
import torch

from evaluation.catalog.registry import get_operator
from evaluation.catalog.vllm import ggml
from evaluation.judge.compare import compare_outputs, exact_alternative_accepts

SCALE = 1 / 16  # d = amax / 127 exactly when a block's largest value is 127 / 16


def with_ties(activations: torch.Tensor) -> torch.Tensor:
    """The activations with every block's amax 127 * SCALE and eight values at exact code midpoints."""
    tied = activations.clone().reshape(activations.size(0), -1, ggml.QK)
    tied[..., 0] = 127 * SCALE
    tied[..., 1:9] = (torch.arange(8, dtype=torch.float32) - 3.5) * SCALE * 3  # k + 0.5 codes, both signs
    return tied.reshape(activations.shape)


def quantiser(rounding):
    """``ggml.quantize_q8_1`` with its half-away-from-zero rounding of |x / d| replaced by ``rounding``."""
    original = ggml.quantize_q8_1

    def quantize(values):
        quants, scale, total = original(values)
        blocks = values.float().reshape(quants.shape)
        amax = blocks.abs().amax(dim=-1, keepdim=True)
        ratio = blocks / (amax / 127.0)
        codes = torch.sign(ratio) * rounding(ratio.abs())
        return torch.where(amax == 0, 0.0, codes).to(torch.int64), scale, total

    return quantize


HALF_TOWARD_ZERO = quantiser(lambda magnitude: torch.ceil(magnitude - 0.5))  # the other side of every tie
TRUNCATING = quantiser(torch.floor)  # a bug: off by one wherever the fraction is .5 or more


@pytest.mark.parametrize(
    "operator_id",
    ["vllm13::ggml_mul_mat_a8", "vllm13::ggml_mul_mat_vec_a8", "vllm13::ggml_moe_a8", "vllm13::ggml_moe_a8_vec"],
)
def test_a_code_at_a_tie_may_round_either_way_and_a_truncating_quantiser_still_fails(operator_id, monkeypatch):
    spec = get_operator(operator_id)
    case = spec.public[2]
    call = spec.make_inputs(case, torch.Generator().manual_seed(0))
    position = 1 if operator_id.endswith("mul_mat_a8") or operator_id.endswith("vec_a8") else 0
    call.args[position] = with_ties(call.args[position])

    def outputs(quantize):
        monkeypatch.setattr(ggml, "quantize_q8_1", quantize)
        return (spec.reference(case, call),)

    expected = outputs(ggml.quantize_q8_1)
    other_side, truncating = outputs(HALF_TOWARD_ZERO), outputs(TRUNCATING)
    monkeypatch.undo()
    exact = spec.exact_formula(case, call)

    assert compare_outputs(spec, case, call, other_side, expected) is not None  # the reference's rounding alone
    assert exact_alternative_accepts(spec, case, other_side, expected, exact) >= 1
    assert compare_outputs(spec, case, call, truncating, expected) is not None
    assert exact_alternative_accepts(spec, case, truncating, expected, exact) is None
    low, high = exact[0]
    assert bool((low <= high).all()) and bool((low < high).any())  # the ties, and only a range where they are


def test_the_reference_is_one_answer_of_the_range_and_the_range_is_narrow():
    # Random activations: a few blocks' half(d) or half(sum) sit near a half midpoint, no code at a tie.
    spec = get_operator("vllm13::ggml_mul_mat_a8")
    case = spec.public[2]
    call = spec.make_inputs(case, torch.Generator().manual_seed(1))
    ((low, high),) = spec.exact_formula(case, call)
    reference = spec.reference(case, call).double()

    assert exact_alternative_accepts(spec, case, (reference.float(),), (reference.float(),), ((low, high),)) == 0
    assert bool((reference >= low - 1e-4).all() and (reference <= high + 1e-4).all())
    assert float((high - low).max()) < 1e-3 * float(reference.abs().max())

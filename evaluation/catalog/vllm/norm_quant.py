"""vLLM fused RMSNorm + quantisation (csrc/quantization/fused_kernels): per-token and per-block int8 / fp8.

Same rounding order as the kernels: dtype(dtype(x * inv) * weight), then int8 via the fp32 reciprocal or fp8
via division, with vLLM's scale floors.
"""

from __future__ import annotations

import random

import torch

from evaluation.catalog.rounding import rounded_range
from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of
from evaluation.catalog.vllm.common import (
    FLOAT16_DTYPES,
    FP8_MAX,
    FP8_MIN_SCALING_FACTOR,
    cases,
    product,
    rand,
    randn,
    record,
    to_e4m3,
    to_int8_rne,
)

FLT_EPSILON = float(torch.finfo(torch.float32).eps)


def random_shape(rng: random.Random) -> list[int]:
    return [rng.randint(1, 3000), rng.randint(8, 6000)]


# --- rms_norm_dynamic_per_token_quant / rms_norm_per_block_quant ---------------------------------------------


def quant_params(quant_dtype: torch.dtype) -> tuple[float, float]:
    """(qmax, min_scale) of vLLM's fused RMSNorm quant kernels."""
    if quant_dtype == torch.int8:
        return 127.0, FLT_EPSILON
    return FP8_MAX, FP8_MIN_SCALING_FACTOR


def quantise_with(values: torch.Tensor, scales: torch.Tensor, quant_dtype: torch.dtype) -> torch.Tensor:
    """int8: rne(y * (1/s)) saturated; fp8: e4m3(y / s)."""
    if quant_dtype == torch.int8:
        return to_int8_rne(values * (1.0 / scales))
    return to_e4m3(values / scales)


def normalised_with_residual(
    values: torch.Tensor, weight: torch.Tensor, epsilon: float, residual: torch.Tensor | None
) -> torch.Tensor:
    """dtype(dtype(x * inv) * w) with x = input (+ residual in fp32, residual <- dtype(x))."""
    as_float = values.float()
    if residual is not None:
        as_float = as_float + residual.float()
        residual.copy_(as_float.to(residual.dtype))
    inverse = torch.rsqrt(as_float.pow(2).mean(-1, keepdim=True) + epsilon)
    return ((as_float * inverse).to(values.dtype) * weight).float()


def per_token_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    rows, cols = params["shape"]
    dtype = dtype_of(params["dtype"])
    values, weight = randn((rows, cols), dtype, generator), randn((cols,), dtype, generator)
    residual = randn((rows, cols), dtype, generator) if params["residual"] else None
    scale_ub = rand((1,), torch.float32, generator) + 0.5 if params.get("scale_ub") else None
    return Call(args=[values, weight, params["epsilon"], torch.int8, scale_ub, residual])


def per_token_reference(case: Case, call: Call) -> tuple[torch.Tensor, torch.Tensor]:
    values, weight, epsilon, quant_dtype, scale_ub, residual = call.args
    normalised = normalised_with_residual(values, weight, epsilon, residual)
    qmax, min_scale = quant_params(quant_dtype)
    amax = normalised.abs().amax(dim=-1, keepdim=True)
    if scale_ub is not None:
        amax = torch.minimum(amax, scale_ub.float().reshape(-1)[0])
    scales = torch.clamp(amax / qmax, min=min_scale)
    return quantise_with(normalised, scales, quant_dtype), scales


def per_token_timed(params: dict) -> bool:
    rows, cols = params["shape"]
    return rows * cols >= 2**20


RMS_NORM_DYNAMIC_PER_TOKEN_QUANT = record(
    "rms_norm_dynamic_per_token_quant",
    description="RMSNorm (optionally after adding a residual) then dynamic per-row int8 quantisation.",
    signature=(
        "rms_norm_dynamic_per_token_quant(input: Tensor, weight: Tensor, epsilon: float, quant_dtype: "
        "torch.dtype, scale_ub: Tensor | None = None, residual: Tensor | None = None) -> tuple[Tensor, Tensor]"
    ),
    make_inputs=per_token_inputs,
    reference=per_token_reference,
    smoke=cases(
        "rms_norm_dynamic_per_token_quant",
        product(shape=[(1, 32), (5, 64)], dtype=FLOAT16_DTYPES, epsilon=[1e-6], residual=[False, True])
        + [{"shape": [4, 96], "dtype": "float16", "epsilon": 1e-6, "residual": False, "scale_ub": True}],
        timed=per_token_timed,
    ),
    public=cases(
        "rms_norm_dynamic_per_token_quant",
        product(
            shape=[(t, h) for t in (1, 128, 1024, 5333) for h in (32, 512, 4096)],
            dtype=FLOAT16_DTYPES,
            epsilon=[1e-6],
            residual=[False, True],
        ),
        timed=per_token_timed,
    ),
    held_out=lambda rng: list(
        cases(
            "rms_norm_dynamic_per_token_quant",
            [
                {
                    "shape": random_shape(rng),
                    "dtype": rng.choice(FLOAT16_DTYPES),
                    "epsilon": 1e-6,
                    "residual": rng.random() < 0.5,
                    "scale_ub": rng.random() < 0.3,
                }
                for _ in range(6)
            ],
            timed=per_token_timed,
        )
    ),
    mutates=(5,),
    output_tolerances=((1.0, 0.0), None, None),
    prompt_notes=(
        "input [M, N] fp16/bf16, weight [N], quant_dtype torch.int8, scale_ub None or a 1-element fp32 tensor, "
        "residual None or [M, N] (updated in place). x = float(input) (+ float(residual), not rounded; then "
        "residual <- dtype(x)); inv = rsqrt(mean(x^2) + epsilon); y = dtype(dtype(x * inv) * weight); per row "
        "s = max(min(max|y|, scale_ub[0]) / 127, FLT_EPSILON); q = sat(rne(y * (1/s))). Returns (q int8 [M, N], "
        "s fp32 [M, 1])."
    ),
    judgement_notes="q within 1 of the reference (the original's max |diff| <= 1), scales and residual with "
    "the protocol's tolerance.",
    departures="The updated residual is compared too (the original does not); some cases pass scale_ub.",
)


def per_block_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    rows, cols = params["shape"]
    dtype = dtype_of(params.get("dtype", "float16"))
    values, weight = randn((rows, cols), dtype, generator), randn((cols,), dtype, generator)
    quant_dtype = torch.int8 if params["quant"] == "int8" else torch.float8_e4m3fn
    group = params["group"]
    return Call(args=[values, weight, params["epsilon"], quant_dtype, [group, group], None, None, params["transposed"]])


def per_block_reference(case: Case, call: Call) -> tuple[torch.Tensor, torch.Tensor]:
    values, weight, epsilon, quant_dtype, group_size, scale_ub, residual, transposed = call.args
    normalised = normalised_with_residual(values, weight, epsilon, residual)
    rows, cols = normalised.shape
    group = group_size[1]
    grouped = normalised.view(rows, cols // group, group)
    qmax, min_scale = quant_params(quant_dtype)
    amax = grouped.abs().amax(dim=-1, keepdim=True)
    if scale_ub is not None:
        amax = torch.minimum(amax, scale_ub.float().reshape(-1)[0])
    scales = torch.clamp(amax / qmax, min=min_scale)
    quantised = quantise_with(grouped, scales, quant_dtype).view(rows, cols)
    scales = scales.view(rows, cols // group)
    if transposed:
        scales = scales.t().contiguous().t()
    return quantised, scales


def per_block_exact(case: Case, call: Call):
    """The range of each code before rounding (saturated) and of each group scale, in float64, for the
    judge's ``exact_formula``. y = dtype(dtype(x * inv) * w) rounds twice to the dtype, and either rounding
    may go either way where fp32 math of it sits next to a midpoint (a GPU's rsqrt and another reduction
    order of mean(x^2) land apart): the codes' range follows y's and amax's (``rounded_range``). Where y and amax
    are half values, y / (amax / qmax) also lands exactly on a code's midpoint often, and the reference's
    rounded scale pushes it to either side. On the H200 an honest kernel was a step from the reference on
    1 of 128 fp8 codes (at a midpoint) and on 8 of 4,194,304 int8 codes (a y one unit apart)."""
    values, weight, epsilon, quant_dtype, group_size, scale_ub, residual, transposed = call.args
    dtype = values.dtype
    wide = values.double() + (residual.double() if residual is not None else 0.0)
    inverse = torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + epsilon)
    scaled_low, scaled_high = rounded_range(wide * inverse, wide * inverse, dtype)
    w = weight.double()
    y_low, y_high = rounded_range(
        torch.minimum(scaled_low * w, scaled_high * w), torch.maximum(scaled_low * w, scaled_high * w), dtype
    )
    rows, cols = wide.shape
    group = group_size[1]
    y_low, y_high = (bound.view(rows, cols // group, group) for bound in (y_low, y_high))
    magnitude_low = torch.where((y_low <= 0) & (y_high >= 0), 0.0, torch.minimum(y_low.abs(), y_high.abs()))
    magnitude_high = torch.maximum(y_low.abs(), y_high.abs())
    qmax, min_scale = quant_params(quant_dtype)
    amax_low, amax_high = magnitude_low.amax(dim=-1, keepdim=True), magnitude_high.amax(dim=-1, keepdim=True)
    if scale_ub is not None:
        bound = scale_ub.double().reshape(-1)[0]
        amax_low, amax_high = torch.minimum(amax_low, bound), torch.minimum(amax_high, bound)
    scale_low = torch.clamp(amax_low / qmax, min=min_scale)
    scale_high = torch.clamp(amax_high / qmax, min=min_scale)
    quotients = torch.stack([y / scale for y in (y_low, y_high) for scale in (scale_low, scale_high)])
    low = -128.0 if quant_dtype == torch.int8 else -qmax
    codes_low = quotients.amin(0).clamp(low, qmax).view(rows, cols)
    codes_high = quotients.amax(0).clamp(low, qmax).view(rows, cols)
    scales = (scale_low.view(rows, cols // group), scale_high.view(rows, cols // group))
    return (codes_low, codes_high), scales


def per_block_timed(params: dict) -> bool:
    rows, cols = params["shape"]
    return rows * cols >= 131072


RMS_NORM_PER_BLOCK_QUANT = record(
    "rms_norm_per_block_quant",
    description="RMSNorm then per-(row, group) int8 or fp8 quantisation with fp32 group scales.",
    signature=(
        "rms_norm_per_block_quant(input: Tensor, weight: Tensor, epsilon: float, quant_dtype: torch.dtype, "
        "group_size: list[int], scale_ub: Tensor | None = None, residual: Tensor | None = None, "
        "is_scale_transposed: bool = False) -> tuple[Tensor, Tensor]"
    ),
    make_inputs=per_block_inputs,
    reference=per_block_reference,
    smoke=cases(
        "rms_norm_per_block_quant",
        product(shape=[(3, 128)], epsilon=[1e-5], quant=["int8", "fp8"], group=[64, 128], transposed=[False, True]),
        timed=per_block_timed,
    ),
    public=cases(
        "rms_norm_per_block_quant",
        product(
            shape=[(1, 128), (128, 256), (1024, 4096), (4096, 8192)],
            epsilon=[1e-5, 1e-6],
            quant=["int8", "fp8"],
            group=[128, 64],
            transposed=[False, True],
        ),
        timed=per_block_timed,
    ),
    held_out=lambda rng: list(
        cases(
            "rms_norm_per_block_quant",
            [
                {
                    "shape": [rng.randint(1, 3000), 128 * rng.randint(1, 48)],
                    "epsilon": 1e-6,
                    "quant": rng.choice(("int8", "fp8")),
                    "group": rng.choice((64, 128)),
                    "transposed": rng.random() < 0.5,
                    "dtype": rng.choice(FLOAT16_DTYPES),
                }
                for _ in range(6)
            ],
            timed=per_block_timed,
        )
    ),
    prompt_notes=(
        "input [M, N] fp16 (N a multiple of the group), weight [N]; quant_dtype torch.int8 or "
        "torch.float8_e4m3fn; group_size [g, g] with g in {64, 128} (the group is group_size[1]); no "
        "scale_ub/residual here. y = dtype(dtype(float(x) * rsqrt(mean(x^2) + eps)) * weight); per (row, group): "
        "s = max(amax / qmax, min_scale) with qmax 127, min_scale FLT_EPSILON for int8 and qmax 448, "
        "min_scale 1/(448*512) for fp8; int8 q = sat(rne(y * (1/s))), fp8 q = e4m3(sat(y / s)). Returns "
        "(q [M, N], scales fp32 [M, N/g]); with is_scale_transposed the scales are stored group-major (a "
        "[N/g, M] buffer returned as its transpose); values are the same."
    ),
    judgement_notes="q compared exactly (the original's torch.equal), scales with the fp32 tolerance.",
    exact_formula=per_block_exact,
    exact_formula_why=(
        "a code whose value before rounding lies at a midpoint (an int8 .5 tie, or between two e4m3 values) "
        "goes either way under fp32 math of the same formula: y and amax are half values, so y / (amax / qmax) "
        "lands on one exactly, and the rounded scale pushes it to either side. Either neighbour of the exact "
        "value passes there, and a code that y's own two half roundings can move (an honest kernel was a step "
        "from the reference on 1 of 128 fp8 codes and 8 of 4,194,304 int8 codes on the H200)"
    ),
)


OPERATORS: list[OperatorSpec] = [
    RMS_NORM_DYNAMIC_PER_TOKEN_QUANT,
    RMS_NORM_PER_BLOCK_QUANT,
]

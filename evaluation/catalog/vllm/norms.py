"""vLLM RMSNorm operators: rms_norm and fused_add_rms_norm (csrc/layernorm_kernels.cu)."""

from __future__ import annotations

import random

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of
from evaluation.catalog.vllm.common import FLOAT_DTYPES, cases, product, randn, record

# Both norms round twice after an fp32 row reduction (x * rsqrt(mean) to the dtype, then the weight product):
# two correct kernels that sum the row in different orders may flip the first rounding, which the weight
# product turns into up to 2 ulps of the result. bf16's and fp32's protocol tolerances already cover 2 ulps;
# fp16's (1e-3, about 1 ulp) does not: on the H200 an honest Triton kernel missed it on 1 of 35,287 and 2 of
# 4.2M values, each by 2 ulps. 2e-3 >= 2 ulps of any normal fp16 value (2^-9 = 1.953e-3 relative).
TWO_ROUNDINGS_RTOL = (("float16", 2e-3),)
TWO_ROUNDINGS_DEPARTURE = (
    "fp16 outputs are compared with rtol 2e-3 instead of 1e-3 (the protocol's atol kept): the result is rounded "
    "twice after an fp32 reduction whose order is not fixed, so two correct kernels may differ by 2 ulps, and "
    "the original test's assert_close(fp16) would fail vLLM's own kernel against its PyTorch reference too."
)

RMS_SHAPES = ((1, 32), (71, 497), (128, 512), (1024, 4096), (5333, 8192))
SMOKE_SHAPES = ((1, 32), (7, 33), (4, 128))


def rms_normalise(values: torch.Tensor, weight: torch.Tensor, epsilon: float) -> torch.Tensor:
    """dtype(float(x) * rsqrt(mean(float(x)^2) + eps)) * weight, the weight product rounded in the dtype."""
    as_float = values.float()
    inverse = torch.rsqrt(as_float.pow(2).mean(-1, keepdim=True) + epsilon)
    return (as_float * inverse).to(values.dtype) * weight


# --- rms_norm ----------------------------------------------------------------------------------------------


def rms_norm_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    rows, hidden = params["shape"]
    dtype = dtype_of(params["dtype"])
    values = randn((rows, hidden), dtype, generator)
    weight = torch.ones(hidden, dtype=dtype) if params["weight"] == "ones" else randn((hidden,), dtype, generator)
    out = torch.empty((rows, hidden), dtype=dtype)
    return Call(args=[out, values, weight, params["epsilon"]])


def rms_norm_reference(case: Case, call: Call) -> None:
    out, values, weight, epsilon = call.args
    out.copy_(rms_normalise(values, weight, epsilon))


def rms_norm_timed(params: dict) -> bool:
    rows, hidden = params["shape"]
    return rows >= 1024 and hidden >= 4096 and params["dtype"] != "float32"


def rms_norm_held_out(rng: random.Random) -> list[Case]:
    configs = []
    for _ in range(6):
        configs.append(
            {
                "shape": [rng.randint(1, 3000), rng.randint(8, 6000)],
                "dtype": rng.choice(FLOAT_DTYPES),
                "epsilon": rng.choice((1e-6, 1e-5)),
                "weight": rng.choice(("ones", "randn")),
            }
        )
    return list(cases("rms_norm", configs, timed=rms_norm_timed))


RMS_NORM = record(
    "rms_norm",
    description="RMSNorm of each row of a 2-D tensor times a weight vector, written into `out`.",
    signature="rms_norm(out: Tensor, input: Tensor, weight: Tensor, epsilon: float) -> None",
    make_inputs=rms_norm_inputs,
    reference=rms_norm_reference,
    smoke=cases(
        "rms_norm",
        product(shape=SMOKE_SHAPES, dtype=FLOAT_DTYPES, epsilon=[1e-6], weight=["randn"]),
        timed=rms_norm_timed,
    ),
    public=cases(
        "rms_norm",
        product(shape=RMS_SHAPES, dtype=FLOAT_DTYPES, epsilon=[1e-6, 1e-5], weight=["ones", "randn"]),
        timed=rms_norm_timed,
    ),
    held_out=rms_norm_held_out,
    mutates=(0,),
    compare_return=False,
    prompt_notes=(
        "input [M, N] contiguous, weight [N], out [M, N], all of one dtype (fp16/bf16/fp32). Per row: "
        "inv = rsqrt(mean(float(x)^2) + epsilon) in fp32; out = dtype(float(x) * inv) * weight, the weight "
        "product done in the tensor dtype (a second rounding). Returns None; the result lives in `out`."
    ),
    judgement_notes="`out` compared with the protocol's tolerance for its dtype (reduce_dim 1), fp16 with rtol 2e-3.",
    rtol_by_dtype=TWO_ROUNDINGS_RTOL,
    departures=TWO_ROUNDINGS_DEPARTURE,
)


# --- fused_add_rms_norm ------------------------------------------------------------------------------------


def fused_add_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    rows, hidden = params["shape"]
    dtype = dtype_of(params["dtype"])
    values = randn((rows, hidden), dtype, generator)
    residual = randn((rows, hidden), dtype, generator)
    weight = randn((hidden,), dtype, generator)
    return Call(args=[values, residual, weight, params["epsilon"]])


def fused_add_reference(case: Case, call: Call) -> None:
    values, residual, weight, epsilon = call.args
    summed = values + residual  # rounded to the tensor dtype, as the kernel stores it
    residual.copy_(summed)
    values.copy_(rms_normalise(summed, weight, epsilon))


def fused_add_timed(params: dict) -> bool:
    rows, hidden = params["shape"]
    return rows * hidden >= 2**20


def fused_add_held_out(rng: random.Random) -> list[Case]:
    configs = [
        {
            "shape": [rng.randint(1, 3000), rng.randint(8, 6000)],
            "dtype": rng.choice(FLOAT_DTYPES),
            "epsilon": rng.choice((1e-6, 1e-5, 1e-4)),
        }
        for _ in range(6)
    ]
    return list(cases("fused_add_rms_norm", configs, timed=fused_add_timed))


FUSED_ADD_RMS_NORM = record(
    "fused_add_rms_norm",
    description="residual += input, then input = RMSNorm(residual) * weight, both in place.",
    signature="fused_add_rms_norm(input: Tensor, residual: Tensor, weight: Tensor, epsilon: float) -> None",
    make_inputs=fused_add_inputs,
    reference=fused_add_reference,
    smoke=cases(
        "fused_add_rms_norm", product(shape=SMOKE_SHAPES, dtype=FLOAT_DTYPES, epsilon=[1e-5]), timed=fused_add_timed
    ),
    public=cases(
        "fused_add_rms_norm",
        product(
            shape=[(t, h) for t in (1, 71, 128, 1024, 5333) for h in (32, 497, 512, 4096, 8192)],
            dtype=FLOAT_DTYPES,
            epsilon=[1e-6, 1e-5, 1e-4],
        ),
        timed=fused_add_timed,
    ),
    held_out=fused_add_held_out,
    mutates=(0, 1),
    compare_return=False,
    prompt_notes=(
        "input, residual [M, N] and weight [N], one dtype. Per row: z = dtype(input + residual) (the sum is "
        "rounded to the dtype); residual <- z; inv = rsqrt(mean(float(z)^2) + epsilon) in fp32; input <- "
        "dtype(float(z) * inv) * weight (weight product in the dtype). Both tensors are updated in place; "
        "returns None."
    ),
    rtol_by_dtype=TWO_ROUNDINGS_RTOL,
    departures=(
        "The original compares only `input`; we compare the updated `residual` as well, since writing it is "
        "part of the op's contract (an honest kernel writes both). " + TWO_ROUNDINGS_DEPARTURE
    ),
)


OPERATORS: list[OperatorSpec] = [RMS_NORM, FUSED_ADD_RMS_NORM]

"""Small vLLM operators: repetition penalties, column permutation and the Hadamard transform."""

from __future__ import annotations

import math

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of
from evaluation.catalog.vllm.common import FLOAT16_DTYPES, cases, product, rand, randint, randn, randperm, record

# --- apply_repetition_penalties_cuda ------------------------------------------------------------------------


def penalty_inputs(case: Case, generator: torch.Generator) -> Call:
    batch, vocab = case.params["shape"]
    logits = randn((batch, vocab), torch.float32, generator)
    prompt_mask = randint(0, 2, (batch, vocab), generator).bool()
    output_mask = randint(0, 2, (batch, vocab), generator).bool()
    penalties = rand((batch,), torch.float32, generator) + 1.0
    return Call(args=[logits, prompt_mask, output_mask, penalties])


def penalty_reference(case: Case, call: Call) -> None:
    logits, prompt_mask, output_mask, penalties = call.args
    penalty = penalties[:, None]
    penalised = torch.where(logits > 0, logits / penalty, logits * penalty)
    logits.copy_(torch.where(prompt_mask | output_mask, penalised, logits))


PENALTY_SHAPES = (
    (1, 32),
    (4, 100),
    (128, 512),
    (256, 1024),
    (512, 4096),
    (1024, 32000),
    (2048, 16000),
    (4096, 8000),
    (2048, 32000),
    (4096, 16000),
)
APPLY_REPETITION_PENALTIES_CUDA = record(
    "apply_repetition_penalties_cuda",
    description="In place: logits seen in the prompt or output are divided (if > 0) or multiplied by a penalty.",
    signature=(
        "apply_repetition_penalties_cuda(logits: Tensor, prompt_mask: Tensor, output_mask: Tensor, "
        "repetition_penalties: Tensor) -> None"
    ),
    make_inputs=penalty_inputs,
    reference=penalty_reference,
    smoke=cases(
        "apply_repetition_penalties_cuda",
        product(shape=[(1, 32), (4, 100)]),
        timed=lambda p: p["shape"][0] * p["shape"][1] >= 1024 * 32000,
    ),
    public=cases(
        "apply_repetition_penalties_cuda",
        product(shape=PENALTY_SHAPES),
        timed=lambda p: p["shape"][0] * p["shape"][1] >= 1024 * 32000,
    ),
    held_out=lambda rng: list(
        cases(
            "apply_repetition_penalties_cuda",
            [{"shape": [rng.randint(1, 4096), rng.randint(16, 50000)]} for _ in range(4)],
            timed=lambda p: p["shape"][0] * p["shape"][1] >= 1024 * 32000,
        )
    ),
    mutates=(0,),
    compare_return=False,
    prompt_notes=(
        "logits fp32 [B, V] (updated in place), prompt_mask and output_mask bool [B, V], repetition_penalties "
        "fp32 [B]. Where prompt_mask or output_mask: logit / p[b] if logit > 0 else logit * p[b] (true "
        "division). Other logits unchanged. Returns None."
    ),
    departures="Penalties are drawn per row in [1, 2) instead of the constant 1.1.",
)


# --- permute_cols ------------------------------------------------------------------------------------------


def permute_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    rows, cols = params["shape"]
    values = randn((rows, cols), dtype_of(params["dtype"]), generator)
    kind = params["perm"]
    if kind == "identity":
        perm = torch.arange(cols, dtype=torch.int32)
    elif kind == "reverse":
        perm = torch.arange(cols - 1, -1, -1, dtype=torch.int32)
    else:
        perm = randperm(cols, generator, torch.int32)
    return Call(args=[values, perm])


def permute_reference(case: Case, call: Call) -> torch.Tensor:
    values, perm = call.args
    return values[:, perm.to(torch.int64)]


def permute_timed(params: dict) -> bool:
    rows, cols = params["shape"]
    return cols >= 2048 and rows >= 512


PERMUTE_COLS = record(
    "permute_cols",
    description="Permute the columns of a 2-D tensor: out[:, j] = a[:, perm[j]].",
    signature="permute_cols(a: Tensor, perm: Tensor) -> Tensor",
    make_inputs=permute_inputs,
    reference=permute_reference,
    smoke=cases(
        "permute_cols",
        product(shape=[(1, 32), (5, 48)], perm=["identity", "reverse", "random"], dtype=FLOAT16_DTYPES),
        timed=permute_timed,
    ),
    public=cases(
        "permute_cols",
        product(
            shape=[(1, 32), (71, 504), (128, 512), (1024, 4096), (5333, 8192)],
            perm=["identity", "reverse", "random"],
            dtype=FLOAT16_DTYPES,
        ),
        timed=permute_timed,
    ),
    held_out=lambda rng: list(
        cases(
            "permute_cols",
            [
                {
                    "shape": [rng.randint(1, 5000), 8 * rng.randint(1, 1000)],
                    "perm": "random",
                    "dtype": rng.choice(FLOAT16_DTYPES),
                }
                for _ in range(5)
            ],
            timed=permute_timed,
        )
    ),
    tolerance_override=(0.0, 0.0),
    prompt_notes=(
        "a [M, K] contiguous fp16/bf16 with K a multiple of 8; perm int32 [K] (a permutation). Returns a new "
        "tensor like a with out[:, j] = a[:, perm[j]]."
    ),
    judgement_notes="Exact (a gather has no rounding; the original's assert_close is exact in practice).",
)


# --- hadacore_transform ------------------------------------------------------------------------------------


def hadamard_fp32(values: torch.Tensor) -> torch.Tensor:
    """x @ H_n / sqrt(n) along the last dimension (Sylvester order), by butterflies in fp32."""
    n = values.size(-1)
    result = values.float().reshape(-1, n)
    half = 1
    while half < n:
        pairs = result.view(-1, n // (2 * half), 2, half)
        top, bottom = pairs[:, :, 0], pairs[:, :, 1]
        result = torch.stack([top + bottom, top - bottom], dim=2).reshape(-1, n)
        half *= 2
    return (result / math.sqrt(n)).reshape(values.shape)


def hadamard_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    return Call(args=[randn(params["shape"], dtype_of(params["dtype"]), generator), True])


def hadamard_reference(case: Case, call: Call) -> torch.Tensor:
    values = call.args[0]
    result = hadamard_fp32(values).to(values.dtype)
    values.copy_(result)
    return values


def hadamard_timed(params: dict) -> bool:
    return math.prod(params["shape"]) >= 2**18


HADACORE_TRANSFORM = record(
    "hadacore_transform",
    description="Orthonormal Walsh-Hadamard transform along the last dimension: y = x H_n / sqrt(n).",
    signature="hadacore_transform(x: Tensor, inplace: bool = True) -> Tensor",
    make_inputs=hadamard_inputs,
    reference=hadamard_reference,
    smoke=cases(
        "hadacore_transform", product(shape=[(1, 32), (3, 128), (2, 256)], dtype=FLOAT16_DTYPES), timed=hadamard_timed
    ),
    public=cases(
        "hadacore_transform",
        product(
            shape=[(1, 32), (16, 128), (128, 512), (1024, 4096), (4096, 1024), (5333, 8192), (2, 8192), (777, 32)],
            dtype=FLOAT16_DTYPES,
        ),
        timed=hadamard_timed,
    ),
    held_out=lambda rng: list(
        cases(
            "hadacore_transform",
            [
                {"shape": [rng.randint(1, 3000), 2 ** rng.randint(5, 14)], "dtype": rng.choice(FLOAT16_DTYPES)}
                for _ in range(5)
            ],
            timed=hadamard_timed,
        )
    ),
    scratch=(0,),
    prompt_notes=(
        "x [M, n] fp16/bf16 with n a power of two (32 .. 32768). Returns y = x @ H_n / sqrt(n) along the last "
        "dimension, H_n the Sylvester Hadamard matrix (H_1 = [1], H_2k = [[H_k, H_k], [H_k, -H_k]]), computed "
        "as exactly as fp32 allows and rounded once to x's dtype. With inplace=True the returned tensor may be "
        "x itself (updated); only the returned tensor is compared."
    ),
    judgement_notes="The returned tensor with the protocol's tolerance; x may be overwritten (in place).",
    departures=(
        "vLLM's kernel runs 16-point Hadamard stages on tensor cores with fp16 accumulation (bf16: a rounding "
        "after every stage), whose result is device-dependent at the protocol's fp16 tolerance. We judge "
        "against the exact transform rounded once, and compare only the returned tensor (vLLM's in-place "
        "update does not reach the caller when it pads rows)."
    ),
)


OPERATORS: list[OperatorSpec] = [APPLY_REPETITION_PENALTIES_CUDA, PERMUTE_COLS, HADACORE_TRANSFORM]

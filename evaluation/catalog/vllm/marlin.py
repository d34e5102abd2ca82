"""Marlin weight layouts: GPTQ/AWQ -> Marlin repacks and the Marlin int4 GEMM (csrc/quantization/gptq_marlin).

The layout follows vLLM's pure-torch test utilities (marlin_utils_test.py): 16x16 tiles, then a fixed
1024-element permutation (``weight_perm``), then 32/bits consecutive values per int32, LSB first.
"""

from __future__ import annotations

import functools

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec
from evaluation.catalog.vllm.common import (
    cases,
    pack_bits,
    rand,
    randint,
    randn,
    randperm,
    record,
    unpack_bits,
    vllm_baseline,
)

TILE = 16
INTERLEAVE = {4: (0, 2, 4, 6, 1, 3, 5, 7), 8: (0, 2, 1, 3)}


@functools.cache
def weight_perm(bits: int) -> tuple[int, ...]:
    """vLLM's get_weight_perm(bits): the order of the 1024 values of a Marlin chunk."""
    perm: list[int] = []
    for i in range(32):
        first: list[int] = []
        col = i // 4
        for block in (0, 1):
            for row in (2 * (i % 4), 2 * (i % 4) + 1, 2 * (i % 4 + 4), 2 * (i % 4 + 4) + 1):
                first.append(16 * row + col + 8 * block)
        for j in range(4):
            perm.extend(p + 256 * j for p in first)
    interleave = INTERLEAVE[bits]
    grouped = [perm[k : k + len(interleave)] for k in range(0, len(perm), len(interleave))]
    return tuple(group[i] for group in grouped for i in interleave)


def scale_perm() -> list[int]:
    """vLLM's get_scale_perms()[0]: Marlin order of 64 consecutive group scales."""
    return [i + 8 * j for i in range(8) for j in range(8)]


def marlin_pack(values: torch.Tensor, bits: int) -> torch.Tensor:
    """[K, N] integers -> Marlin int32 [K/16, N*16*bits/32]."""
    size_k, size_n = values.shape
    tiles = values.reshape(size_k // TILE, TILE, size_n // TILE, TILE).permute(0, 2, 1, 3).reshape(size_k // TILE, -1)
    perm = torch.tensor(weight_perm(bits), device=values.device)
    permuted = tiles.reshape(-1, perm.numel())[:, perm].reshape(tiles.shape)
    return pack_bits(permuted, bits, dim=1)


def marlin_unpack(packed: torch.Tensor, size_k: int, size_n: int, bits: int) -> torch.Tensor:
    """Inverse of marlin_pack: Marlin int32 -> [K, N] int64 values."""
    permuted = unpack_bits(packed, bits, dim=1)
    perm = torch.tensor(weight_perm(bits), device=packed.device)
    chunks = permuted.reshape(-1, perm.numel())
    tiles = torch.empty_like(chunks)
    tiles[:, perm] = chunks
    tiles = tiles.reshape(size_k // TILE, size_n // TILE, TILE, TILE).permute(0, 2, 1, 3)
    return tiles.reshape(size_k, size_n)


def awq_pack(values: torch.Tensor, bits: int) -> torch.Tensor:
    """AWQ column packing: word c of a row holds columns c*pf + INTERLEAVE[i] at value slot i."""
    size_k, size_n = values.shape
    interleave = torch.tensor(INTERLEAVE[bits], device=values.device)
    reordered = values.reshape(-1, interleave.numel())[:, interleave].reshape(size_k, size_n)
    return pack_bits(reordered, bits, dim=1)


def awq_unpack(packed: torch.Tensor, bits: int) -> torch.Tensor:
    reordered = unpack_bits(packed, bits, dim=1)
    interleave = torch.tensor(INTERLEAVE[bits], device=packed.device)
    values = torch.empty_like(reordered).reshape(-1, interleave.numel())
    values[:, interleave] = reordered.reshape(-1, interleave.numel())
    return values.reshape(reordered.shape)


# --- gptq_marlin_moe_repack / awq_marlin_moe_repack --------------------------------------------------------


def repack_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    experts, size_k, size_n, bits = params["experts"], params["k"], params["n"], params["bits"]
    values = randint(0, 1 << bits, (experts, size_k, size_n), generator)
    if case.entry_point == "awq_marlin_moe_repack":
        packed = torch.stack([awq_pack(values[e], bits) for e in range(experts)])
        perm = torch.arange(size_k, dtype=torch.int32).repeat(experts, 1)
    else:
        packed = pack_bits(values, bits, dim=1)  # GPTQ: 32/bits consecutive rows per word
        if params.get("act_order"):
            perm = torch.stack([randperm(size_k, generator, torch.int32) for _ in range(experts)])
        else:
            perm = torch.arange(size_k, dtype=torch.int32).repeat(experts, 1)
    return Call(args=[packed, perm, size_k, size_n, bits])


def repack_reference(case: Case, call: Call) -> torch.Tensor:
    packed, perm, size_k, size_n, bits = call.args[:5]
    outputs = []
    for expert in range(packed.size(0)):
        if case.entry_point == "awq_marlin_moe_repack":
            values = awq_unpack(packed[expert], bits)  # perm is ignored by vLLM here
        else:
            values = unpack_bits(packed[expert], bits, dim=0)[perm[expert].to(torch.int64)]
        outputs.append(marlin_pack(values, bits))
    return torch.stack(outputs)


def repack_timed(params: dict) -> bool:
    return params["experts"] >= 8 and params["k"] >= 512 and params["n"] >= 512


REPACK_CONFIGS = (
    (4, 256, 256, 4),
    (8, 256, 512, 4),
    (4, 512, 256, 4),
    (16, 256, 256, 4),
    (4, 256, 256, 8),
    (8, 512, 512, 4),
    (8, 512, 512, 8),
    (16, 512, 512, 4),
    (16, 512, 512, 8),
    (8, 1024, 512, 4),
)


def repack_record(name: str, source_format: str, notes: str, departures: str) -> OperatorSpec:
    extra = [{"act_order": True}] if name.startswith("gptq") else [{}]
    return record(
        name,
        description=f"Per expert, repack {source_format} int4/int8 weights into vLLM's Marlin tile layout.",
        signature=(
            f"{name}(b_q_weight: Tensor, perm: Tensor, size_k: int, size_n: int, num_bits: int, "
            "is_a_8bit: bool = False) -> Tensor"
        ),
        make_inputs=repack_inputs,
        reference=repack_reference,
        smoke=cases(
            name,
            [
                {"experts": 2, "k": 16, "n": 64, "bits": 4},
                {"experts": 1, "k": 32, "n": 64, "bits": 8},
                {"experts": 2, "k": 32, "n": 64, "bits": 4, **extra[0]},
            ][: 3 if extra[0] else 2],
            timed=repack_timed,
        ),
        public=cases(
            name,
            [{"experts": e, "k": k, "n": n, "bits": b} for e, k, n, b in REPACK_CONFIGS]
            + ([{"experts": 8, "k": 512, "n": 512, "bits": 4, **extra[0]}] if extra[0] else []),
            timed=repack_timed,
        ),
        held_out=lambda rng: list(
            cases(
                name,
                [
                    {
                        "experts": rng.randint(1, 16),
                        "k": 64 * rng.randint(1, 24),
                        "n": 64 * rng.randint(1, 24),
                        "bits": rng.choice((4, 8)),
                        **rng.choice(extra + [{}]),
                    }
                    for _ in range(4)
                ],
                timed=repack_timed,
            )
        ),
        prompt_notes=notes
        + (
            " Marlin layout (vLLM marlin_utils_test.marlin_weights): the logical [K, N] matrix is cut into 16x16 "
            "tiles, reshaped to [K/16, N*16] with tiles in row-major tile order ([K/16, 16, N/16, 16] permuted "
            "to (0, 2, 1, 3)); every consecutive chunk of 1024 values is reordered by vLLM's get_weight_perm("
            "bits) (new[j] = old[perm[j]]); then 32/bits consecutive values are packed per int32, LSB first. "
            "Returns int32 [E, K/16, N*bits/2]."
        ),
        judgement_notes="Exact (integers; the original's torch.equal).",
        departures=departures,
    )


GPTQ_MARLIN_MOE_REPACK = repack_record(
    "gptq_marlin_moe_repack",
    "GPTQ row-packed",
    "b_q_weight int32 [E, K*bits/32, N]: value k of column n is bits-wide slot k % (32/bits) of word "
    "[k // (32/bits), n], LSB first; perm int32 [E, K]: logical row k of the Marlin matrix is GPTQ row perm[e, k].",
    "Some cases use a random act-order perm (the original always passes arange).",
)
AWQ_MARLIN_MOE_REPACK = repack_record(
    "awq_marlin_moe_repack",
    "AWQ column-packed",
    "b_q_weight int32 [E, K, N*bits/32]: word c of row k holds columns c*pf + (0,2,4,6,1,3,5,7)[i] (4-bit) or "
    "c*pf + (0,2,1,3)[i] (8-bit) at slot i, LSB first; perm is ignored.",
    "",
)


# --- gptq_marlin_gemm --------------------------------------------------------------------------------------


def marlin_gemm_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    size_m, size_k, size_n, group = params["m"], params["k"], params["n"], params.get("group", 128)
    a = randn((size_m, size_k), torch.float16, generator)
    values = randint(0, 16, (size_k, size_n), generator)
    scales = (rand((size_k // group, size_n), torch.float32, generator) * 0.1 + 0.01).to(torch.float16)
    perm = torch.tensor(scale_perm())
    marlin_scales = scales.reshape(-1, perm.numel())[:, perm].reshape(scales.shape).contiguous()
    empty = torch.empty(0, dtype=torch.int32)
    workspace = torch.zeros(max(size_n // 64 * 16, 256), dtype=torch.int32)
    return Call(
        args=[
            a,
            None,
            marlin_pack(values, 4),
            None,
            marlin_scales,
            None,
            None,
            empty,
            empty.clone(),
            empty.clone(),
            workspace,
            "uint4b8",
            size_m,
            size_n,
            size_k,
            True,
            False,
            False,
            False,
        ]
    )


def marlin_gemm_reference(case: Case, call: Call) -> torch.Tensor:
    a, _c, packed, _bias, marlin_scales = call.args[:5]
    size_m, size_n, size_k = call.args[12:15]
    values = marlin_unpack(packed, size_k, size_n, 4)
    perm = torch.tensor(scale_perm(), device=a.device)
    scales = torch.empty_like(marlin_scales).reshape(-1, perm.numel())
    scales[:, perm] = marlin_scales.reshape(-1, perm.numel())
    scales = scales.reshape(marlin_scales.shape)
    group = size_k // scales.size(0)
    weight = ((values - 8).float() * scales.float().repeat_interleave(group, dim=0)).to(torch.float16)
    return (a.float() @ weight.float()).to(torch.float16)


def marlin_gemm_baseline(case: Case, call: Call):
    """vLLM's op takes a ScalarType; our call carries its name."""
    try:
        from vllm.scalar_type import scalar_types  # noqa: PLC0415 - optional
    except Exception:  # noqa: BLE001
        return None
    args = list(call.args)
    args[11] = getattr(scalar_types, args[11])
    return vllm_baseline("gptq_marlin_gemm")(case, Call(args=args, kwargs=call.kwargs))


def gemm_flops(case: Case) -> int:
    return 2 * case.params["m"] * case.params["k"] * case.params["n"]


MARLIN_CONFIGS = (
    (1, 256, 256),
    (32, 256, 256),
    (64, 256, 512),
    (128, 512, 256),
    (128, 1024, 512),
    (256, 1024, 512),
    (512, 1024, 512),
    (1024, 2048, 1024),
)
GPTQ_MARLIN_GEMM = record(
    "gptq_marlin_gemm",
    description="fp16 A times uint4b8 Marlin-packed weights with grouped fp16 scales.",
    signature=(
        "gptq_marlin_gemm(a: Tensor, c: Tensor | None, b_q_weight: Tensor, b_bias: Tensor | None, b_scales: "
        "Tensor, a_scales: Tensor | None, global_scale: Tensor | None, b_zeros: Tensor, g_idx: Tensor, perm: "
        "Tensor, workspace: Tensor, b_q_type: ScalarType, size_m: int, size_n: int, size_k: int, is_k_full: "
        "bool = True, use_atomic_add: bool = False, use_fp32_reduce: bool = False, is_zp_float: bool = False"
        ") -> Tensor"
    ),
    make_inputs=marlin_gemm_inputs,
    reference=marlin_gemm_reference,
    smoke=cases(
        "gptq_marlin_gemm",
        [{"m": 3, "k": 128, "n": 64}, {"m": 5, "k": 256, "n": 128, "group": 64}],
        timed=lambda p: p["m"] >= 128 and p["k"] >= 512 and p["n"] >= 256,
        reduce_dim=lambda p: p["k"],
    ),
    public=cases(
        "gptq_marlin_gemm",
        [{"m": m, "k": k, "n": n} for m, k, n in MARLIN_CONFIGS],
        timed=lambda p: p["m"] >= 128 and p["k"] >= 512 and p["n"] >= 256,
        reduce_dim=lambda p: p["k"],
    ),
    held_out=lambda rng: list(
        cases(
            "gptq_marlin_gemm",
            [
                {"m": rng.randint(1, 1024), "k": 128 * rng.randint(1, 32), "n": 64 * rng.randint(1, 64)}
                for _ in range(4)
            ],
            timed=lambda p: p["m"] >= 128 and p["k"] >= 512 and p["n"] >= 256,
            reduce_dim=lambda p: p["k"],
        )
    ),
    scratch=(10,),
    baseline=marlin_gemm_baseline,
    flops=gemm_flops,
    bytes_moved=lambda case: (
        2 * case.params["m"] * (case.params["k"] + case.params["n"])
        + case.params["k"] * case.params["n"] // 2
        + 2 * case.params["k"] // case.params.get("group", 128) * case.params["n"]
    ),
    prompt_notes=(
        "a fp16 [M, K]; b_q_weight int32 [K/16, 2N] in the Marlin layout of gptq_marlin_moe_repack (4-bit); "
        "b_scales fp16 [K/g, N] in Marlin scale order (each row's consecutive 64 scales stored as "
        "S_marlin[:, i] = S[:, [i + 8j for i in 0..7 for j in 0..7][i]]); b_q_type is the string 'uint4b8' (vLLM: "
        "scalar_types.uint4b8): weight = fp16((q - 8) * s[k // g, n]). c, b_bias, a_scales, global_scale are None; "
        "b_zeros, g_idx, perm are empty int32 tensors (no act order); workspace int32 may be used as scratch. "
        "Returns fp16 [M, N] = a @ weight with fp32 accumulation."
    ),
    judgement_notes="fp16 tolerance with reduce_dim = K (the protocol's matmul rule).",
    departures=(
        "The original passes raw scales that the kernel reads as Marlin-permuted (scrambling which scale goes "
        "with which column) and turns on act-order with identity g_idx/perm; we pass Marlin-permuted scales "
        "and empty g_idx/perm (the plain grouped kernel, same arithmetic). b_q_type is passed by name."
    ),
)


OPERATORS: list[OperatorSpec] = [GPTQ_MARLIN_MOE_REPACK, AWQ_MARLIN_MOE_REPACK, GPTQ_MARLIN_GEMM]

"""vLLM KV-cache block copies (csrc/cache_kernels.cu): copy_blocks, copy_blocks_mla, swap_blocks."""

from __future__ import annotations

import random

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of
from evaluation.catalog.vllm.common import (
    EXACT,
    FLOAT16_DTYPES,
    cases,
    product,
    randn,
    randperm,
    record,
    vllm_baseline,
)

# --- copy_blocks / copy_blocks_mla / swap_blocks ------------------------------------------------------------


def disjoint_mapping(blocks: int, pairs: int, generator: torch.Generator) -> torch.Tensor:
    perm = randperm(blocks, generator)
    return torch.stack([perm[:pairs], perm[pairs : 2 * pairs]], dim=1).contiguous()


def copy_blocks_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params.get("dtype", "float16"))
    blocks, pairs, layers = params["blocks"], params["pairs"], params.get("layers", 1)
    mapping = disjoint_mapping(blocks, pairs, generator)
    if case.entry_point == "copy_blocks":
        shape = (blocks, params["heads"], params["head_size"], params["block_size"])
        keys = [randn(shape, dtype, generator) for _ in range(layers)]
        values = [randn(shape, dtype, generator) for _ in range(layers)]
        return Call(args=[keys, values, mapping])
    caches = [randn((blocks, params["block_size"], params["width"]), dtype, generator) for _ in range(layers)]
    return Call(args=[caches, mapping])


def copy_blocks_reference(case: Case, call: Call) -> None:
    *cache_lists, mapping = call.args
    src, dst = mapping[:, 0], mapping[:, 1]
    for caches in cache_lists:
        for cache in caches:
            cache[dst] = cache[src]


def copy_blocks_timed(params: dict) -> bool:
    return params["blocks"] >= 64 and params["pairs"] >= 8


COPY_CONFIGS = (
    (8, 4, 64, 16, 2),
    (32, 8, 128, 16, 4),
    (64, 4, 64, 32, 8),
    (64, 8, 128, 32, 8),
    (64, 16, 128, 32, 16),
    (128, 8, 64, 32, 8),
    (128, 16, 128, 32, 16),
    (128, 8, 128, 32, 16),
    (16, 8, 64, 16, 4),
    (256, 16, 128, 64, 16),
    (256, 32, 256, 64, 32),
    (512, 16, 128, 32, 16),
)


def copy_blocks_held_out(rng: random.Random) -> list[Case]:
    configs = []
    for _ in range(4):
        blocks = rng.randint(4, 400)
        configs.append(
            {
                "blocks": blocks,
                "heads": rng.choice((1, 4, 8)),
                "head_size": rng.choice((64, 80, 128)),
                "block_size": rng.choice((8, 16, 32)),
                "pairs": rng.randint(1, blocks // 2),
                "layers": rng.randint(1, 3),
                "dtype": rng.choice(FLOAT16_DTYPES),
            }
        )
    return list(cases("copy_blocks", configs, timed=copy_blocks_timed))


COPY_BLOCKS = record(
    "copy_blocks",
    description="Copy whole KV-cache blocks src -> dst in every layer's key and value cache.",
    signature="copy_blocks(key_caches: list[Tensor], value_caches: list[Tensor], block_mapping: Tensor) -> None",
    make_inputs=copy_blocks_inputs,
    reference=copy_blocks_reference,
    smoke=cases(
        "copy_blocks",
        [
            {"blocks": 6, "heads": 2, "head_size": 16, "block_size": 4, "pairs": 2, "layers": 2, "dtype": d}
            for d in FLOAT16_DTYPES
        ],
        timed=copy_blocks_timed,
    ),
    public=cases(
        "copy_blocks",
        [
            {"blocks": nb, "heads": h, "head_size": d, "block_size": bs, "pairs": p, "layers": 1, "dtype": "float16"}
            for nb, h, d, bs, p in COPY_CONFIGS
        ]
        + [
            {"blocks": 64, "heads": 8, "head_size": 128, "block_size": 16, "pairs": 8, "layers": 3, "dtype": "bfloat16"}
        ],
        timed=copy_blocks_timed,
    ),
    held_out=copy_blocks_held_out,
    mutates=(0, 1),
    compare_return=False,
    tolerance_override=EXACT,
    prompt_notes=(
        "key_caches and value_caches are Python lists (one tensor per layer) of caches [num_blocks, ...]; "
        "block_mapping int64 [P, 2] of (src, dst) block pairs (src and dst sets are disjoint). For every layer "
        "and pair, copy the whole block: cache[dst] = cache[src], for keys and values. In place; returns None."
    ),
    departures="Some cases have several layers (the original always has one) and bf16 caches; exact comparison "
    "(the original's torch.equal).",
)


def copy_mla_held_out(rng: random.Random) -> list[Case]:
    configs = []
    for _ in range(4):
        blocks = rng.randint(4, 400)
        configs.append(
            {
                "blocks": blocks,
                "block_size": rng.choice((16, 32, 64)),
                "width": 576,
                "pairs": rng.randint(1, blocks // 2),
                "layers": rng.randint(1, 3),
                "dtype": rng.choice(FLOAT16_DTYPES),
            }
        )
    return list(cases("copy_blocks_mla", configs, timed=copy_blocks_timed))


MLA_COPY_CONFIGS = (
    (8, 16, 2),
    (32, 16, 4),
    (64, 16, 8),
    (64, 32, 8),
    (64, 64, 16),
    (128, 16, 8),
    (128, 16, 16),
    (128, 32, 16),
    (16, 32, 4),
    (256, 32, 16),
    (256, 64, 32),
    (512, 32, 16),
)
COPY_BLOCKS_MLA = record(
    "copy_blocks_mla",
    description="Copy whole blocks src -> dst in every layer's joint MLA KV cache.",
    signature="copy_blocks_mla(kv_caches: list[Tensor], block_mapping: Tensor) -> None",
    make_inputs=copy_blocks_inputs,
    reference=copy_blocks_reference,
    smoke=cases(
        "copy_blocks_mla",
        [{"blocks": 6, "block_size": 4, "width": 40, "pairs": 2, "layers": 2, "dtype": d} for d in FLOAT16_DTYPES],
        timed=copy_blocks_timed,
    ),
    public=cases(
        "copy_blocks_mla",
        [
            {"blocks": nb, "block_size": bs, "width": 576, "pairs": p, "layers": 1, "dtype": "float16"}
            for nb, bs, p in MLA_COPY_CONFIGS
        ],
        timed=copy_blocks_timed,
    ),
    held_out=copy_mla_held_out,
    mutates=(0,),
    compare_return=False,
    tolerance_override=EXACT,
    prompt_notes=(
        "kv_caches: Python list (one per layer) of [num_blocks, block_size, width] tensors; block_mapping int64 "
        "[P, 2] of disjoint (src, dst) pairs; cache[dst] = cache[src] for every layer. In place; returns None."
    ),
    departures="Some cases have several layers; exact comparison (the original's torch.equal).",
)


def swap_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params["dtype"])
    blocks = params["blocks"]
    shape = (blocks, *params["block_shape"])
    src, dst = randn(shape, dtype, generator), randn(shape, dtype, generator)
    kind = params["mapping"]
    if kind == "identity":
        mapping = torch.stack([torch.arange(blocks), torch.arange(blocks)], dim=1)
    elif kind == "reverse":
        mapping = torch.stack([torch.arange(blocks), torch.arange(blocks - 1, -1, -1)], dim=1)
    else:
        count = max(1, blocks // 2)
        mapping = torch.stack([randperm(blocks, generator)[:count], randperm(blocks, generator)[:count]], dim=1)
    return Call(args=[src, dst, mapping.to(torch.int64).contiguous()])


def swap_baseline(case: Case, call: Call):
    """vLLM's swap_blocks requires block_mapping on the CPU."""
    src, dst, mapping = call.args
    return vllm_baseline("swap_blocks")(case, Call(args=[src, dst, mapping.cpu()]))


def swap_reference(case: Case, call: Call) -> None:
    src, dst, mapping = call.args
    mapping = mapping.to(src.device)
    dst[mapping[:, 1]] = src[mapping[:, 0]]


def swap_timed(params: dict) -> bool:
    shape = params["block_shape"]
    return params["blocks"] * shape[0] * shape[1] >= 131072


def swap_held_out(rng: random.Random) -> list[Case]:
    configs = [
        {
            "blocks": rng.randint(1, 700),
            "block_shape": [rng.choice((8, 16, 32)), rng.choice((64, 96, 128))],
            "dtype": rng.choice(FLOAT16_DTYPES),
            "mapping": rng.choice(("identity", "reverse", "random_subset")),
        }
        for _ in range(5)
    ]
    return list(cases("swap_blocks", configs, timed=swap_timed))


SWAP_BLOCKS = record(
    "swap_blocks",
    description="Copy blocks src[i] -> dst[j] for every (i, j) row of block_mapping (a one-way copy).",
    signature="swap_blocks(src: Tensor, dst: Tensor, block_mapping: Tensor) -> None",
    make_inputs=swap_inputs,
    reference=swap_reference,
    smoke=cases(
        "swap_blocks",
        product(
            blocks=[5], block_shape=[(4, 16)], dtype=FLOAT16_DTYPES, mapping=["identity", "reverse", "random_subset"]
        ),
        timed=swap_timed,
    ),
    public=cases(
        "swap_blocks",
        product(
            blocks=[1, 32, 512],
            block_shape=[(16, 64), (32, 128), (64, 256)],
            dtype=FLOAT16_DTYPES,
            mapping=["identity", "reverse", "random_subset"],
        ),
        timed=swap_timed,
    ),
    held_out=swap_held_out,
    baseline=swap_baseline,
    mutates=(1,),
    compare_return=False,
    tolerance_override=EXACT,
    prompt_notes=(
        "src, dst [num_blocks, ...] of one dtype; block_mapping int64 [P, 2] (distinct destinations): "
        "dst[j] = src[i] for each row (i, j), a raw copy of src.stride(0) elements per block. vLLM requires "
        "block_mapping on the CPU; here it may be on the device with the other tensors. In place; returns None."
    ),
    departures="Exact comparison (the original's assert_close on a pure copy is exact in practice); "
    "block_mapping is placed with the other inputs (the judge moves every tensor to the device).",
)


OPERATORS: list[OperatorSpec] = [
    COPY_BLOCKS,
    COPY_BLOCKS_MLA,
    SWAP_BLOCKS,
]

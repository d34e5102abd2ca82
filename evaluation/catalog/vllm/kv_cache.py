"""vLLM paged KV-cache writes (csrc/cache_kernels.cu): reshape_and_cache(_flash), concat_and_cache_mla."""

from __future__ import annotations

import random

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of
from evaluation.catalog.vllm.common import (
    EXACT,
    FLOAT16_DTYPES,
    cases,
    randn,
    randperm,
    record,
)

CACHE_SHAPES = (
    (4, 8, 64, 16),
    (32, 8, 64, 32),
    (128, 8, 64, 64),
    (128, 16, 128, 64),
    (256, 8, 64, 64),
    (256, 16, 128, 64),
    (512, 16, 64, 128),
    (512, 32, 128, 128),
    (1024, 16, 128, 256),
)
SCATTER_NOTE = "Slots < 0 (padding tokens) are skipped; other cache entries must stay untouched."


def slot_mapping(tokens: int, num_slots: int, generator: torch.Generator, padded: bool) -> torch.Tensor:
    """Distinct slots (randperm, as the original); with ``padded`` every third token gets slot -1."""
    slots = randperm(num_slots, generator)[:tokens]
    if padded:
        slots[::3] = -1
    return slots


def scatter_timed(params: dict) -> bool:
    return params["tokens"] >= 128


def scatter_held_out(entry: str, rng: random.Random) -> list[Case]:
    configs = []
    for _ in range(5):
        blocks = rng.randint(4, 300)
        block_size = rng.choice((8, 16, 32))
        configs.append(
            {
                "tokens": rng.randint(1, min(2000, blocks * block_size)),
                "heads": rng.choice((1, 4, 8, 12)),
                "head_size": rng.choice((64, 80, 96, 128, 256)),
                "blocks": blocks,
                "block_size": block_size,
                "dtype": rng.choice(FLOAT16_DTYPES),
                "padded": rng.random() < 0.3,
            }
        )
    return list(cases(entry, configs, timed=scatter_timed))


def scatter_configs(
    shapes: tuple[tuple[int, int, int, int], ...], dtypes: tuple[str, ...], padded: bool = False
) -> list[dict]:
    return [
        {"tokens": t, "heads": h, "head_size": d, "blocks": nb, "block_size": 16, "dtype": dtype, "padded": padded}
        for t, h, d, nb in shapes
        for dtype in dtypes
    ]


SCATTER_SMOKE = scatter_configs(((4, 2, 16, 2), (9, 1, 32, 4)), FLOAT16_DTYPES) + scatter_configs(
    ((7, 2, 16, 2),), ("float16",), padded=True
)
SCATTER_PUBLIC = scatter_configs(CACHE_SHAPES, FLOAT16_DTYPES) + scatter_configs(
    ((512, 8, 128, 64),), FLOAT16_DTYPES, padded=True
)


# --- reshape_and_cache / reshape_and_cache_flash ------------------------------------------------------------


def reshape_and_cache_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params["dtype"])
    tokens, heads, head_size = params["tokens"], params["heads"], params["head_size"]
    blocks, block_size = params["blocks"], params["block_size"]
    key = randn((tokens, heads, head_size), dtype, generator)
    value = randn((tokens, heads, head_size), dtype, generator)
    if case.entry_point == "reshape_and_cache":
        x = 16 // torch.empty((), dtype=dtype).element_size()
        key_cache = randn((blocks, heads, head_size // x, block_size, x), dtype, generator)
        value_cache = randn((blocks, heads, head_size, block_size), dtype, generator)
    else:
        key_cache = randn((blocks, block_size, heads, head_size), dtype, generator)
        value_cache = randn((blocks, block_size, heads, head_size), dtype, generator)
    slots = slot_mapping(tokens, blocks * block_size, generator, params.get("padded", False))
    scale = torch.ones(1, dtype=torch.float32)
    return Call(args=[key, value, key_cache, value_cache, slots, "auto", scale, scale.clone()])


def reshape_and_cache_reference(case: Case, call: Call) -> None:
    key, value, key_cache, value_cache, slots, _kind, _k_scale, _v_scale = call.args
    valid = slots >= 0
    key, value, slots = key[valid], value[valid], slots[valid]
    if case.entry_point == "reshape_and_cache":
        block_size, x = key_cache.size(3), key_cache.size(4)
        blocks, offsets = slots // block_size, slots % block_size
        tokens, heads, head_size = key.shape
        # key_cache[b, h, d // x, o, d % x] = key[t, h, d]
        key_cache[blocks, :, :, offsets, :] = key.view(tokens, heads, head_size // x, x)
        value_cache[blocks, :, :, offsets] = value
    else:
        block_size = key_cache.size(1)
        blocks, offsets = slots // block_size, slots % block_size
        key_cache[blocks, offsets] = key
        value_cache[blocks, offsets] = value


def scatter_record(name: str, layout_note: str, departures: str) -> OperatorSpec:
    return record(
        name,
        description=f"Scatter each token's key and value into a paged KV cache ({layout_note}).",
        signature=(
            f"{name}(key: Tensor, value: Tensor, key_cache: Tensor, value_cache: Tensor, slot_mapping: "
            "Tensor, kv_cache_dtype: str, k_scale: Tensor, v_scale: Tensor) -> None"
        ),
        make_inputs=reshape_and_cache_inputs,
        reference=reshape_and_cache_reference,
        smoke=cases(name, SCATTER_SMOKE, timed=scatter_timed),
        public=cases(name, SCATTER_PUBLIC, timed=scatter_timed),
        held_out=lambda rng: scatter_held_out(name, rng),
        mutates=(2, 3),
        compare_return=False,
        tolerance_override=EXACT,
        prompt_notes=(
            f"key, value [T, H, D]; slot_mapping int64 [T]; slot s goes to block s // block_size, offset "
            f"s % block_size. {layout_note}. kv_cache_dtype is always 'auto' here (plain copy; k_scale and "
            f"v_scale are 1-element fp32 tensors, unused). {SCATTER_NOTE} Returns None."
        ),
        judgement_notes="Both caches compared exactly (a copy has no rounding).",
        departures=departures,
    )


RESHAPE_AND_CACHE = scatter_record(
    "reshape_and_cache",
    "key_cache [num_blocks, H, D/x, block_size, x] with x = 16 bytes / element size, "
    "key_cache[b, h, d // x, o, d % x] = key[t, h, d]; value_cache [num_blocks, H, D, block_size], "
    "value_cache[b, h, d, o] = value[t, h, d]",
    "Caches start with random values instead of zeros (so a kernel that rewrites untouched entries fails), "
    "some cases pad slot_mapping with -1, and the comparison is exact (the original's assert_close on pure "
    "copies is exact in practice).",
)
RESHAPE_AND_CACHE_FLASH = scatter_record(
    "reshape_and_cache_flash",
    "key_cache and value_cache [num_blocks, block_size, H, D] (NHD), cache[b, o, h, :] = key[t, h, :]",
    "Caches start with random values instead of zeros, some cases pad slot_mapping with -1, and the "
    "comparison is exact.",
)


# --- concat_and_cache_mla ----------------------------------------------------------------------------------


def mla_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params["dtype"])
    tokens, rank, rope, blocks, block_size = (params[k] for k in ("tokens", "rank", "rope", "blocks", "block_size"))
    kv_c = randn((tokens, rank), dtype, generator)
    k_pe = randn((tokens, rope), dtype, generator)
    kv_cache = randn((blocks, block_size, rank + rope), dtype, generator)
    slots = slot_mapping(tokens, blocks * block_size, generator, params.get("padded", False))
    return Call(args=[kv_c, k_pe, kv_cache, slots, "auto", torch.ones(1, dtype=torch.float32)])


def mla_reference(case: Case, call: Call) -> None:
    kv_c, k_pe, kv_cache, slots, _kind, _scale = call.args
    valid = slots >= 0
    slots = slots[valid]
    block_size = kv_cache.size(1)
    kv_cache[slots // block_size, slots % block_size] = torch.cat([kv_c[valid], k_pe[valid]], dim=-1)


def mla_held_out(rng: random.Random) -> list[Case]:
    configs = []
    for _ in range(5):
        blocks = rng.randint(4, 200)
        configs.append(
            {
                "tokens": rng.randint(1, min(2000, blocks * 16)),
                "rank": rng.choice((256, 512)),
                "rope": rng.choice((32, 64)),
                "blocks": blocks,
                "block_size": 16,
                "dtype": rng.choice(FLOAT16_DTYPES),
                "padded": rng.random() < 0.3,
            }
        )
    return list(cases("concat_and_cache_mla", configs, timed=scatter_timed))


MLA_SHAPES = (
    (4, 512, 64, 16),
    (32, 512, 64, 32),
    (128, 256, 64, 64),
    (128, 256, 128, 64),
    (256, 256, 64, 64),
    (256, 512, 64, 64),
    (512, 256, 128, 128),
    (512, 512, 64, 128),
    (1024, 512, 64, 256),
)
CONCAT_AND_CACHE_MLA = record(
    "concat_and_cache_mla",
    description="Write [kv_c | k_pe] of each token into a paged MLA cache at its slot.",
    signature=(
        "concat_and_cache_mla(kv_c: Tensor, k_pe: Tensor, kv_cache: Tensor, slot_mapping: Tensor, "
        "kv_cache_dtype: str, scale: Tensor) -> None"
    ),
    make_inputs=mla_inputs,
    reference=mla_reference,
    smoke=cases(
        "concat_and_cache_mla",
        [
            {"tokens": 5, "rank": 32, "rope": 16, "blocks": 2, "block_size": 16, "dtype": d, "padded": p}
            for d in FLOAT16_DTYPES
            for p in (False, True)
        ],
        timed=scatter_timed,
    ),
    public=cases(
        "concat_and_cache_mla",
        [
            {"tokens": t, "rank": r, "rope": p, "blocks": nb, "block_size": 16, "dtype": d, "padded": False}
            for t, r, p, nb in MLA_SHAPES
            for d in FLOAT16_DTYPES
        ],
        timed=scatter_timed,
    ),
    held_out=mla_held_out,
    mutates=(2,),
    compare_return=False,
    tolerance_override=EXACT,
    prompt_notes=(
        "kv_c [T, R], k_pe [T, P], kv_cache [num_blocks, block_size, R+P], slot_mapping int64 [T]: "
        "kv_cache[s // block_size, s % block_size, :R] = kv_c[t], [..., R:] = k_pe[t]. kv_cache_dtype 'auto' "
        f"(plain copy; scale unused). {SCATTER_NOTE} Returns None."
    ),
    departures="Cache starts random instead of zeros; some cases pad slots with -1; exact comparison.",
)


OPERATORS: list[OperatorSpec] = [
    RESHAPE_AND_CACHE,
    RESHAPE_AND_CACHE_FLASH,
    CONCAT_AND_CACHE_MLA,
]

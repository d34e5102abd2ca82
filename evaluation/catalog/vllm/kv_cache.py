"""vLLM paged KV-cache writes and copies (csrc/cache_kernels.cu): scatter, block copies and gathers."""

from __future__ import annotations

import random

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of
from evaluation.catalog.vllm.common import (
    EXACT,
    FLOAT16_DTYPES,
    cases,
    product,
    randint,
    randn,
    randperm,
    record,
    vllm_baseline,
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


# --- cp_gather_cache / gather_and_maybe_dequant_cache -------------------------------------------------------


def token_positions(
    cu_seq_lens: torch.Tensor, total: int, seq_starts: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """For every dst token: its sequence and its position in that sequence's block table."""
    tokens = torch.arange(total, device=cu_seq_lens.device)
    cu = cu_seq_lens.to(torch.int64)
    sequence = torch.searchsorted(cu[1:], tokens, right=True)
    position = tokens - cu[sequence]
    if seq_starts is not None:
        position = position + seq_starts.to(torch.int64)[sequence]
    return sequence, position


def gather_layout(params: dict, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """block_table [B, blocks_per_seq] int32, cu_seq_lens [B+1] int32 and optional seq_starts [B] int32."""
    batch, block_size, per_seq = params["batch"], params["block_size"], params.get("blocks_per_seq", 2)
    block_table = randint(0, params["blocks"], (batch, per_seq), generator, torch.int32)
    capacity = per_seq * block_size
    starts = None
    if params.get("seq_starts"):
        starts = randint(0, block_size + 1, (batch,), generator, torch.int32)
        lengths = [int(torch.randint(1, capacity - int(s) + 1, (1,), generator=generator)) for s in starts]
    elif params.get("full", True):
        lengths = [capacity] * batch
    else:
        lengths = [int(v) for v in randint(1, capacity + 1, (batch,), generator)]
    cu = torch.tensor([0] + lengths, dtype=torch.int64).cumsum(0).to(torch.int32)
    return block_table, cu, starts


def cp_gather_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    dtype = dtype_of(params.get("dtype", "float16"))
    src = randn((params["blocks"], params["block_size"], params["heads"], params["head_size"]), dtype, generator)
    block_table, cu, starts = gather_layout(params, generator)
    dst = torch.zeros((int(cu[-1]), params["heads"], params["head_size"]), dtype=dtype)
    return Call(args=[src, dst, block_table, cu, params["batch"], starts])


def cp_gather_reference(case: Case, call: Call) -> None:
    src, dst, block_table, cu, _batch, starts = call.args
    sequence, position = token_positions(cu, dst.size(0), starts)
    block_size = src.size(1)
    blocks = block_table.to(torch.int64)[sequence, position // block_size]
    dst.copy_(src[blocks, position % block_size])


def gather_timed(params: dict) -> bool:
    return params["blocks"] >= 32 and params["batch"] >= 4


GATHER_CONFIGS = (
    (8, 16, 4, 64, 2),
    (16, 16, 8, 128, 2),
    (32, 32, 4, 64, 4),
    (16, 32, 8, 64, 2),
    (32, 16, 4, 128, 4),
    (64, 16, 4, 64, 4),
    (64, 32, 8, 128, 4),
    (128, 32, 8, 256, 8),
)


def cp_gather_held_out(rng: random.Random) -> list[Case]:
    configs = [
        {
            "blocks": rng.randint(4, 200),
            "block_size": rng.choice((16, 32)),
            "heads": rng.choice((1, 4, 8)),
            "head_size": rng.choice((64, 128)),
            "batch": rng.randint(1, 9),
            "blocks_per_seq": rng.randint(1, 4),
            "full": False,
            "seq_starts": rng.random() < 0.5,
            "dtype": rng.choice(FLOAT16_DTYPES),
        }
        for _ in range(4)
    ]
    return list(cases("cp_gather_cache", configs, timed=gather_timed))


CP_GATHER_CACHE = record(
    "cp_gather_cache",
    description="Gather each sequence's tokens from a paged cache into a contiguous dst tensor.",
    signature=(
        "cp_gather_cache(src_cache: Tensor, dst: Tensor, block_table: Tensor, cu_seq_lens: Tensor, "
        "batch_size: int, seq_starts: Tensor | None = None) -> None"
    ),
    make_inputs=cp_gather_inputs,
    reference=cp_gather_reference,
    smoke=cases(
        "cp_gather_cache",
        [
            {"blocks": 4, "block_size": 4, "heads": 2, "head_size": 8, "batch": 2},
            {"blocks": 4, "block_size": 4, "heads": 1, "head_size": 16, "batch": 3, "full": False, "dtype": "bfloat16"},
            {
                "blocks": 5,
                "block_size": 4,
                "heads": 2,
                "head_size": 8,
                "batch": 2,
                "blocks_per_seq": 3,
                "seq_starts": True,
            },
        ],
        timed=gather_timed,
    ),
    public=cases(
        "cp_gather_cache",
        [{"blocks": nb, "block_size": bs, "heads": h, "head_size": d, "batch": b} for nb, bs, h, d, b in GATHER_CONFIGS]
        + [
            {
                "blocks": 64,
                "block_size": 16,
                "heads": 8,
                "head_size": 128,
                "batch": 6,
                "blocks_per_seq": 4,
                "full": False,
                "seq_starts": True,
            }
        ],
        timed=gather_timed,
    ),
    held_out=cp_gather_held_out,
    mutates=(1,),
    compare_return=False,
    tolerance_override=EXACT,
    prompt_notes=(
        "src_cache [num_blocks, block_size, ...entry]; dst [total_tokens, ...entry]; "
        "block_table int32 [B, max_blocks]; cu_seq_lens int32 [B+1]. For sequence b and token "
        "i < cu[b+1]-cu[b]: pos = i + (seq_starts[b] if "
        "seq_starts is not None else 0); dst[cu[b] + i] = src_cache[block_table[b, pos // block_size], "
        "pos % block_size]. Block ids may repeat. Returns None."
    ),
    departures="Some cases use partial sequence lengths and seq_starts (the original always fills two whole "
    "blocks per sequence and passes no seq_starts).",
)


def dequant_gather_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    src = randn((params["blocks"], params["block_size"], 576), torch.float16, generator)
    block_table, cu, starts = gather_layout(params, generator)
    total = int(cu[-1])
    lengths = (cu[1:] - cu[:-1]).to(torch.int64)
    token_to_seq = torch.repeat_interleave(torch.arange(params["batch"], dtype=torch.int32), lengths)
    dst = torch.zeros((total, 576), dtype=torch.float16)
    return Call(
        args=[src, dst, block_table, cu, token_to_seq, total, "auto", torch.ones(1, dtype=torch.float32), starts]
    )


def dequant_gather_reference(case: Case, call: Call) -> None:
    src, dst, block_table, cu, _token_to_seq, total, _kind, _scale, starts = call.args
    sequence, position = token_positions(cu, total, starts)
    block_size = src.size(1)
    blocks = block_table.to(torch.int64)[sequence, position // block_size]
    dst[:total] = src[blocks, position % block_size]


def dequant_gather_held_out(rng: random.Random) -> list[Case]:
    configs = [
        {
            "blocks": rng.randint(4, 200),
            "block_size": rng.choice((16, 32, 64)),
            "batch": rng.randint(1, 9),
            "blocks_per_seq": rng.randint(1, 4),
            "full": False,
            "seq_starts": rng.random() < 0.5,
        }
        for _ in range(4)
    ]
    return list(cases("gather_and_maybe_dequant_cache", configs, timed=gather_timed))


DEQUANT_CONFIGS = (
    (4, 16, 2),
    (8, 16, 2),
    (16, 16, 4),
    (16, 32, 2),
    (32, 16, 4),
    (32, 32, 4),
    (64, 16, 4),
    (64, 32, 8),
    (64, 64, 4),
    (128, 16, 8),
    (128, 32, 8),
    (128, 64, 4),
    (128, 64, 8),
)
GATHER_AND_MAYBE_DEQUANT_CACHE = record(
    "gather_and_maybe_dequant_cache",
    description="Gather 576-wide MLA cache entries of each token into dst ('auto': a plain copy).",
    signature=(
        "gather_and_maybe_dequant_cache(src_cache: Tensor, dst: Tensor, block_table: Tensor, "
        "cu_seq_lens: Tensor, token_to_seq: Tensor, num_tokens: int, kv_cache_dtype: str, scale: Tensor, "
        "seq_starts: Tensor | None = None) -> None"
    ),
    make_inputs=dequant_gather_inputs,
    reference=dequant_gather_reference,
    smoke=cases(
        "gather_and_maybe_dequant_cache",
        [
            {"blocks": 4, "block_size": 4, "batch": 2},
            {"blocks": 5, "block_size": 4, "batch": 2, "blocks_per_seq": 3, "full": False, "seq_starts": True},
        ],
        timed=gather_timed,
    ),
    public=cases(
        "gather_and_maybe_dequant_cache",
        [{"blocks": nb, "block_size": bs, "batch": b} for nb, bs, b in DEQUANT_CONFIGS]
        + [{"blocks": 64, "block_size": 16, "batch": 6, "blocks_per_seq": 4, "full": False, "seq_starts": True}],
        timed=gather_timed,
    ),
    held_out=dequant_gather_held_out,
    mutates=(1,),
    compare_return=False,
    prompt_notes=(
        "src_cache fp16 [num_blocks, block_size, 576]; dst fp16 [num_tokens, 576]; block_table int32 [B, max_blocks]; "
        "cu_seq_lens int32 [B+1]; token_to_seq int32 [num_tokens] (sequence of each dst token). For token t: "
        "b = token_to_seq[t], i = t - cu[b] + (seq_starts[b] if given else 0); dst[t] = "
        "src_cache[block_table[b, i // block_size], i % block_size]. kv_cache_dtype is 'auto' (plain copy; "
        "scale, a 1-element fp32 tensor, unused). Returns None."
    ),
    departures="Some cases use partial sequence lengths and seq_starts; src is 3-D [nb, bs, 576] (the original "
    "adds a size-1 head axis, same memory).",
)


# --- cp_gather_indexer_k_quant_cache ------------------------------------------------------------------------


def indexer_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    head_dim, quant_block = params["head_dim"], params["quant_block"]
    scale_bytes = head_dim // quant_block * 4
    kv_cache = randint(0, 256, (params["blocks"], params["block_size"], head_dim + scale_bytes), generator, torch.uint8)
    block_table, cu, _ = gather_layout({**params, "full": params.get("full", False)}, generator)
    total = int(cu[-1])
    dst_k = torch.zeros((total, head_dim), dtype=torch.uint8)
    dst_scale = torch.zeros((total, scale_bytes), dtype=torch.uint8)
    return Call(args=[kv_cache, dst_k, dst_scale, block_table, cu])


def indexer_reference(case: Case, call: Call) -> None:
    kv_cache, dst_k, dst_scale, block_table, cu = call.args
    blocks_total, block_size, _ = kv_cache.shape
    head_dim, scale_bytes = dst_k.size(1), dst_scale.size(1)
    sequence, position = token_positions(cu, dst_k.size(0), None)
    blocks = block_table.to(torch.int64)[sequence, position // block_size]
    offsets = position % block_size
    flat = kv_cache.reshape(blocks_total, -1)  # per block: block_size*head_dim key bytes, then the scale bytes
    key_index = offsets[:, None] * head_dim + torch.arange(head_dim, device=flat.device)
    dst_k.copy_(flat[blocks[:, None], key_index])
    scale_index = block_size * head_dim + offsets[:, None] * scale_bytes + torch.arange(scale_bytes, device=flat.device)
    dst_scale.copy_(flat[blocks[:, None], scale_index])


def indexer_held_out(rng: random.Random) -> list[Case]:
    configs = [
        {
            "blocks": rng.randint(4, 200),
            "block_size": rng.choice((16, 32, 64)),
            "head_dim": 128,
            "quant_block": rng.choice((64, 128)),
            "batch": rng.randint(1, 9),
            "blocks_per_seq": rng.randint(1, 4),
        }
        for _ in range(4)
    ]
    return list(
        cases("cp_gather_indexer_k_quant_cache", configs, timed=lambda p: p["blocks"] >= 16 and p["batch"] >= 4)
    )


CP_GATHER_INDEXER_K_QUANT_CACHE = record(
    "cp_gather_indexer_k_quant_cache",
    description="Gather fp8 indexer keys and their fp32 scales (byte-addressed) from a paged uint8 cache.",
    signature=(
        "cp_gather_indexer_k_quant_cache(kv_cache: Tensor, dst_k: Tensor, dst_scale: Tensor, "
        "block_table: Tensor, cu_seq_lens: Tensor) -> None"
    ),
    make_inputs=indexer_inputs,
    reference=indexer_reference,
    smoke=cases(
        "cp_gather_indexer_k_quant_cache",
        [
            {"blocks": 4, "block_size": 4, "head_dim": 32, "quant_block": 32, "batch": 2},
            {"blocks": 5, "block_size": 8, "head_dim": 64, "quant_block": 32, "batch": 3, "blocks_per_seq": 3},
        ],
        timed=lambda p: p["blocks"] >= 16 and p["batch"] >= 4,
    ),
    public=cases(
        "cp_gather_indexer_k_quant_cache",
        [
            {"blocks": nb, "block_size": bs, "head_dim": 128, "quant_block": qb, "batch": b}
            for nb, bs, b in ((4, 16, 2), (16, 16, 4), (32, 32, 4), (64, 64, 8), (128, 64, 8))
            for qb in (64, 128)
        ],
        timed=lambda p: p["blocks"] >= 16 and p["batch"] >= 4,
    ),
    held_out=indexer_held_out,
    mutates=(1, 2),
    compare_return=False,
    tolerance_override=EXACT,
    prompt_notes=(
        "kv_cache uint8 [num_blocks, block_size, head_dim + head_dim/quant_block*4]; each block's bytes hold first "
        "block_size*head_dim key bytes (token o at o*head_dim), then block_size*(head_dim/quant_block*4) scale "
        "bytes (token o at block_size*head_dim + o*scale_bytes). dst_k uint8 [T, head_dim], dst_scale uint8 "
        "[T, scale_bytes]; head_dim = dst_k.size(1), scale_bytes = dst_scale.size(1). For sequence b, token "
        "i < cu[b+1]-cu[b]: block = block_table[b, i // block_size], o = i % block_size; copy the key and "
        "scale bytes of (block, o) to row cu[b] + i. Returns None."
    ),
    departures=(
        "The original passes fp16 [nb, bs, H, D] tensors that the kernel reads as bytes, and its dst_scale is "
        "too small: the kernel writes scales past its end (undefined). We build the intended byte layout "
        "(uint8 cache, uint8 dst_k and dst_scale sized as the kernel expects) with partial sequence lengths."
    ),
)


OPERATORS: list[OperatorSpec] = [
    RESHAPE_AND_CACHE,
    RESHAPE_AND_CACHE_FLASH,
    CONCAT_AND_CACHE_MLA,
    COPY_BLOCKS,
    COPY_BLOCKS_MLA,
    SWAP_BLOCKS,
    CP_GATHER_CACHE,
    GATHER_AND_MAYBE_DEQUANT_CACHE,
    CP_GATHER_INDEXER_K_QUANT_CACHE,
]

"""vLLM KV-cache gathers (csrc/cache_kernels.cu): cp_gather_cache, MLA and indexer-key gathers."""

from __future__ import annotations

import random

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of
from evaluation.catalog.vllm.common import (
    EXACT,
    FLOAT16_DTYPES,
    cases,
    randint,
    randn,
    record,
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
        # A start leaves at least one token of the table to read (a held-out draw on the H200 had one block
        # per sequence and a start at its end: nothing left, and the length draw failed).
        starts = randint(0, min(block_size + 1, capacity), (batch,), generator, torch.int32)
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
    CP_GATHER_CACHE,
    GATHER_AND_MAYBE_DEQUANT_CACHE,
    CP_GATHER_INDEXER_K_QUANT_CACHE,
]

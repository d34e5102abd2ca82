"""Triton port of vLLM's moe_align_block_size.

Three launches, mirroring the CUDA kernel's phases:
  1. ``_moe_count_kernel``   : fill sorted_token_ids with the sentinel ``numel`` and build the
                               per-expert token histogram (block-local tl.histogram, then one
                               atomic_add per expert per program).
  2. ``_moe_prefix_kernel``  : single program; pads every count to a multiple of block_size,
                               exclusive prefix sum -> per-expert write cursors, total padded length.
  3. ``_moe_scatter_kernel`` : every flat slot i claims a position inside its expert's segment
                               with atomic_add on the cursor; the same launch also writes
                               experts_ids (one entry per block of block_size slots).

Order inside an expert segment depends on atomic arrival order (as in vLLM); the segment contents,
experts_ids and num_tokens_post_pad are deterministic.
"""
from typing import Optional

import torch
import triton
import triton.language as tl


@triton.jit
def _moe_count_kernel(
    topk_ids_ptr,
    counts_ptr,  # int32 [num_experts], zero-initialised
    sorted_ids_ptr,
    numel,
    topk,
    stride_t,
    stride_k,
    sorted_len,
    stride_sorted,
    num_experts,
    BLOCK: tl.constexpr,
    NUM_BINS: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)

    # sentinel fill of the whole sorted buffer (grid covers max(numel, sorted_len))
    sentinel = tl.zeros([BLOCK], dtype=tl.int32) + numel
    tl.store(sorted_ids_ptr + offs.to(tl.int64) * stride_sorted, sentinel, mask=offs < sorted_len)

    valid = offs < numel
    tok = offs // topk
    slot = offs - tok * topk
    expert = tl.load(
        topk_ids_ptr + tok.to(tl.int64) * stride_t + slot.to(tl.int64) * stride_k,
        mask=valid,
        other=0,
    ).to(tl.int32)
    local_hist = tl.histogram(expert, NUM_BINS, mask=valid)
    bins = tl.arange(0, NUM_BINS)
    tl.atomic_add(counts_ptr + bins, local_hist, mask=(bins < num_experts) & (local_hist > 0))


@triton.jit
def _moe_prefix_kernel(
    counts_ptr,
    cursor_ptr,  # int32 [num_experts]: segment starts, later used as write cursors
    seg_end_ptr,  # int32 [num_experts]: inclusive prefix sum of padded counts
    num_tokens_post_pad_ptr,
    num_experts,
    block_size,
    NUM_BINS: tl.constexpr,
):
    e = tl.arange(0, NUM_BINS)
    emask = e < num_experts
    cnt = tl.load(counts_ptr + e, mask=emask, other=0)
    padded = ((cnt - 1) // block_size + 1) * block_size
    inclusive = tl.cumsum(padded, axis=0)
    tl.store(cursor_ptr + e, inclusive - padded, mask=emask)
    tl.store(seg_end_ptr + e, inclusive, mask=emask)
    tl.store(num_tokens_post_pad_ptr, tl.sum(padded, axis=0))


@triton.jit
def _moe_scatter_kernel(
    topk_ids_ptr,
    cursor_ptr,
    seg_end_ptr,
    num_tokens_post_pad_ptr,
    sorted_ids_ptr,
    experts_ids_ptr,
    numel,
    topk,
    stride_t,
    stride_k,
    stride_sorted,
    sorted_len,
    num_blocks,
    stride_eid,
    num_experts,
    block_size,
    BLOCK: tl.constexpr,
    EID_BLOCK: tl.constexpr,
    E_CHUNK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)

    # --- scatter token slots into their expert segments
    valid = offs < numel
    tok = offs // topk
    slot = offs - tok * topk
    expert = tl.load(
        topk_ids_ptr + tok.to(tl.int64) * stride_t + slot.to(tl.int64) * stride_k,
        mask=valid,
        other=0,
    ).to(tl.int32)
    pos = tl.atomic_add(cursor_ptr + expert, 1, mask=valid)
    # defensive bound: never write past the caller's buffer
    tl.store(sorted_ids_ptr + pos.to(tl.int64) * stride_sorted, offs, mask=valid & (pos < sorted_len))

    # --- expert id of every block of block_size slots (EID_BLOCK of them per program)
    blk = pid * EID_BLOCK + tl.arange(0, EID_BLOCK)
    bmask = blk < num_blocks
    start = blk * block_size
    # owner of slot `start` = number of experts whose padded segment ends at or before it
    owner = tl.zeros([EID_BLOCK], dtype=tl.int32)
    for e0 in range(0, num_experts, E_CHUNK):
        e = e0 + tl.arange(0, E_CHUNK)
        seg_end = tl.load(seg_end_ptr + e, mask=e < num_experts, other=2147483647)
        owner += tl.sum((seg_end[None, :] <= start[:, None]).to(tl.int32), axis=1)
    total = tl.load(num_tokens_post_pad_ptr)
    owner = tl.where(start < total, owner, 0)
    tl.store(experts_ids_ptr + blk.to(tl.int64) * stride_eid, owner, mask=bmask)


def moe_align_block_size(
    topk_ids: torch.Tensor,
    num_experts: int,
    block_size: int,
    sorted_token_ids: torch.Tensor,
    experts_ids: torch.Tensor,
    num_tokens_post_pad: torch.Tensor,
    expert_map: Optional[torch.Tensor] = None,
) -> None:
    assert expert_map is None, "expert_map is not supported by this port"
    if topk_ids.ndim == 1:
        topk_ids = topk_ids.view(-1, 1)
    assert topk_ids.ndim == 2
    numel = topk_ids.numel()
    topk = topk_ids.shape[1]
    sorted_len = sorted_token_ids.numel()
    num_blocks = experts_ids.numel()
    device = topk_ids.device

    num_bins = triton.next_power_of_2(max(num_experts, 2))
    counts = torch.zeros(num_experts, dtype=torch.int32, device=device)
    cursor = torch.empty(num_experts, dtype=torch.int32, device=device)
    seg_end = torch.empty(num_experts, dtype=torch.int32, device=device)

    BLOCK = 1024 if num_bins <= 64 else 256
    EID_BLOCK = 128
    E_CHUNK = min(num_bins, 64)
    grid1 = (max(triton.cdiv(max(numel, sorted_len), BLOCK), 1),)
    _moe_count_kernel[grid1](
        topk_ids,
        counts,
        sorted_token_ids,
        numel,
        max(topk, 1),
        topk_ids.stride(0),
        topk_ids.stride(1),
        sorted_len,
        sorted_token_ids.stride(0),
        num_experts,
        BLOCK=BLOCK,
        NUM_BINS=num_bins,
    )
    _moe_prefix_kernel[(1,)](
        counts,
        cursor,
        seg_end,
        num_tokens_post_pad,
        num_experts,
        block_size,
        NUM_BINS=num_bins,
    )
    grid3 = (max(triton.cdiv(numel, BLOCK), triton.cdiv(num_blocks, EID_BLOCK), 1),)
    _moe_scatter_kernel[grid3](
        topk_ids,
        cursor,
        seg_end,
        num_tokens_post_pad,
        sorted_token_ids,
        experts_ids,
        numel,
        max(topk, 1),
        topk_ids.stride(0),
        topk_ids.stride(1),
        sorted_token_ids.stride(0),
        sorted_len,
        num_blocks,
        experts_ids.stride(0),
        num_experts,
        block_size,
        BLOCK=BLOCK,
        EID_BLOCK=EID_BLOCK,
        E_CHUNK=E_CHUNK,
    )
    return None

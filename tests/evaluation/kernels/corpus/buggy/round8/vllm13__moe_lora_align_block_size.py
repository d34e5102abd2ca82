# BUG: expert counts are rounded up with (count // block_size + 1) * block_size, which adds a spurious extra block whenever a count is already a multiple of block_size (including experts with zero tokens).
# SPDX-License-Identifier: Apache-2.0
# Triton port of moe_lora_align_block_size: moe_align_block_size run once per
# active LoRA adapter, each into its own slice of the output buffers.
#
# One program per lora slot.  The program
#   1. histograms the expert ids of the slots routed to its adapter,
#   2. pads every expert count to block_size and prefix-sums the segments,
#   3. scatters the slot ids into their expert segments,
#   4. writes the padding sentinel (numel) into every other position and the
#      expert id of every block (-1 past the end).
# Steps 3 and 4 write disjoint positions, so no intra-program barrier is needed.
import functools

import torch
import triton
import triton.language as tl


@triton.jit
def _moe_lora_align_kernel(
    topk_ids_ptr,
    token_lora_mapping_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    num_tokens_post_pad_ptr,
    adapter_enabled_ptr,
    lora_ids_ptr,
    numel,
    num_experts,
    max_num_tokens_padded,
    max_num_m_blocks,
    stride_tt,
    stride_tk,
    stride_map,
    top_k: tl.constexpr,
    block_size: tl.constexpr,
    E_PAD: tl.constexpr,
    BLOCK: tl.constexpr,
):
    slot = tl.program_id(0)
    lora_id = tl.load(lora_ids_ptr + slot)
    if lora_id < 0:
        return
    enabled = tl.load(adapter_enabled_ptr + lora_id)
    if enabled == 0:
        return

    experts = tl.arange(0, E_PAD)
    lora64 = lora_id.to(tl.int64)
    sorted_base = sorted_token_ids_ptr + lora64 * max_num_tokens_padded
    expert_base = expert_ids_ptr + lora64 * max_num_m_blocks

    # ---- 1. per-expert counts for this adapter ----
    counts = tl.zeros((E_PAD,), dtype=tl.int32)
    for start in range(0, numel, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < numel
        tok = offs // top_k
        eid = tl.load(topk_ids_ptr + tok * stride_tt + (offs % top_k) * stride_tk, mask=m, other=-1)
        lid = tl.load(token_lora_mapping_ptr + tok * stride_map, mask=m, other=-1)
        valid = m & (lid == lora_id)
        onehot = ((eid[:, None] == experts[None, :]) & valid[:, None]).to(tl.int32)
        counts += tl.sum(onehot, axis=0)

    # ---- 2. padded segments ----
    padded = (counts // block_size + 1) * block_size
    seg_end = tl.cumsum(padded, axis=0)
    seg_start = seg_end - padded
    total = tl.sum(padded, axis=0)
    tl.store(num_tokens_post_pad_ptr + lora_id, total)

    # ---- 3. scatter slot ids ----
    filled = tl.zeros((E_PAD,), dtype=tl.int32)
    for start in range(0, numel, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        m = offs < numel
        tok = offs // top_k
        eid = tl.load(topk_ids_ptr + tok * stride_tt + (offs % top_k) * stride_tk, mask=m, other=-1)
        lid = tl.load(token_lora_mapping_ptr + tok * stride_map, mask=m, other=-1)
        valid = m & (lid == lora_id)
        onehot = ((eid[:, None] == experts[None, :]) & valid[:, None]).to(tl.int32)
        rank = tl.cumsum(onehot, axis=0) - 1
        pos = tl.sum(onehot * (rank + filled[None, :] + seg_start[None, :]), axis=1)
        tl.store(sorted_base + pos, offs.to(tl.int32), mask=valid & (pos < max_num_tokens_padded))
        filled += tl.sum(onehot, axis=0)

    # ---- 4a. padding sentinel ----
    used_end = seg_start + counts
    for start in range(0, max_num_tokens_padded, BLOCK):
        p = start + tl.arange(0, BLOCK)
        pm = p < max_num_tokens_padded
        is_tok = (p[:, None] >= seg_start[None, :]) & (p[:, None] < used_end[None, :])
        n_tok = tl.sum(is_tok.to(tl.int32), axis=1)
        pad_val = tl.zeros((BLOCK,), dtype=tl.int32) + numel
        tl.store(sorted_base + p, pad_val, mask=pm & (n_tok == 0))

    # ---- 4b. expert id of every block ----
    for start in range(0, max_num_m_blocks, BLOCK):
        b = start + tl.arange(0, BLOCK)
        bm = b < max_num_m_blocks
        p = b * block_size
        in_seg = ((p[:, None] >= seg_start[None, :]) & (p[:, None] < seg_end[None, :])).to(tl.int32)
        hit = tl.sum(in_seg, axis=1)
        eid = tl.sum(in_seg * experts[None, :], axis=1)
        tl.store(expert_base + b, tl.where(hit > 0, eid, -1), mask=bm)


@functools.lru_cache(maxsize=32)
def _launch_params(num_experts: int, numel: int):
    e_pad = max(16, triton.next_power_of_2(num_experts))
    block = max(16, min(256, triton.next_power_of_2(numel)))
    return e_pad, block


def moe_lora_align_block_size(
    topk_ids: torch.Tensor,
    token_lora_mapping: torch.Tensor,
    num_experts: int,
    block_size: int,
    max_loras: int,
    max_num_tokens_padded: int,
    max_num_m_blocks: int,
    sorted_token_ids: torch.Tensor,
    experts_ids: torch.Tensor,
    num_tokens_post_pad: torch.Tensor,
    adapter_enabled: torch.Tensor,
    lora_ids: torch.Tensor,
    expert_map: torch.Tensor | None = None,
) -> None:
    if expert_map is not None:
        raise NotImplementedError("expert_map is not supported")
    num_tokens, top_k = topk_ids.shape
    numel = num_tokens * top_k
    e_pad, block = _launch_params(num_experts, numel)
    _moe_lora_align_kernel[(max_loras,)](
        topk_ids,
        token_lora_mapping,
        sorted_token_ids,
        experts_ids,
        num_tokens_post_pad,
        adapter_enabled,
        lora_ids,
        numel,
        num_experts,
        max_num_tokens_padded,
        max_num_m_blocks,
        topk_ids.stride(0),
        topk_ids.stride(1),
        token_lora_mapping.stride(0),
        top_k=top_k,
        block_size=block_size,
        E_PAD=e_pad,
        BLOCK=block,
    )
    return None

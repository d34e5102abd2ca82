# BUG: the scale region is assumed to hold one fp32 scale (4 bytes) per token, so only the first 4 scale bytes are gathered and the per-token scale stride is wrong when quant_block < head_dim.
# SPDX-License-Identifier: Apache-2.0
# Triton port of cp_gather_indexer_k_quant_cache (DeepSeek V3.2 indexer).
#
# The paged indexer cache stores, per physical block, first all fp8 keys
# (block_size * head_dim bytes) and then all fp32 scales
# (block_size * head_dim / quant_block * 4 bytes).  We gather every token of
# every sequence into the dense dst_k / dst_scale byte buffers.
import torch
import triton
import triton.language as tl


@triton.jit
def _max_seq_len_kernel(cu_seq_lens_ptr, out_ptr, num_seqs, BLOCK_B: tl.constexpr):
    offs = tl.arange(0, BLOCK_B)
    mask = offs < num_seqs
    start = tl.load(cu_seq_lens_ptr + offs, mask=mask, other=0)
    end = tl.load(cu_seq_lens_ptr + offs + 1, mask=mask, other=0)
    tl.store(out_ptr, tl.max(end - start, axis=0))


@triton.jit
def _cp_gather_indexer_k_quant_cache_kernel(
    kv_cache_ptr,
    dst_k_ptr,
    dst_scale_ptr,
    block_table_ptr,
    cu_seq_lens_ptr,
    stride_kv_block,
    stride_dk_t,
    stride_dk_d,
    stride_ds_t,
    stride_ds_d,
    stride_bt_b,
    stride_bt_i,
    head_dim,
    scale_bytes,
    BLOCK_SIZE: tl.constexpr,
    BLOCK_T: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_S: tl.constexpr,
):
    batch = tl.program_id(0)
    tile = tl.program_id(1)

    seq_start = tl.load(cu_seq_lens_ptr + batch)
    seq_end = tl.load(cu_seq_lens_ptr + batch + 1)
    seq_len = seq_end - seq_start

    tok = tile * BLOCK_T + tl.arange(0, BLOCK_T)
    tok_mask = tok < seq_len
    if tile * BLOCK_T >= seq_len:
        return

    logical_block = tok // BLOCK_SIZE
    in_block = tok % BLOCK_SIZE
    phys_block = tl.load(
        block_table_ptr + batch * stride_bt_b + logical_block * stride_bt_i,
        mask=tok_mask,
        other=0,
    ).to(tl.int64)
    block_base = kv_cache_ptr + phys_block * stride_kv_block
    dst_row = (seq_start + tok).to(tl.int64)

    # ---- fp8 key bytes ----
    offs_d = tl.arange(0, BLOCK_D)
    d_mask = tok_mask[:, None] & (offs_d[None, :] < head_dim)
    k_src = block_base[:, None] + in_block[:, None] * head_dim + offs_d[None, :]
    k = tl.load(k_src, mask=d_mask, other=0)
    tl.store(
        dst_k_ptr + dst_row[:, None] * stride_dk_t + offs_d[None, :] * stride_dk_d,
        k,
        mask=d_mask,
    )

    # ---- fp32 scale bytes (live after all keys of the block) ----
    offs_s = tl.arange(0, BLOCK_S)
    s_mask = tok_mask[:, None] & (offs_s[None, :] < scale_bytes)
    s_src = (
        block_base[:, None]
        + BLOCK_SIZE * head_dim
        + in_block[:, None] * scale_bytes
        + offs_s[None, :]
    )
    s = tl.load(s_src, mask=s_mask, other=0)
    tl.store(
        dst_scale_ptr + dst_row[:, None] * stride_ds_t + offs_s[None, :] * stride_ds_d,
        s,
        mask=s_mask,
    )


def cp_gather_indexer_k_quant_cache(
    kv_cache: torch.Tensor,
    dst_k: torch.Tensor,
    dst_scale: torch.Tensor,
    block_table: torch.Tensor,
    cu_seq_lens: torch.Tensor,
) -> None:
    num_seqs = block_table.size(0)
    block_size = kv_cache.size(1)
    head_dim = dst_k.size(1)
    scale_bytes = 4  # one fp32 scale per token
    cu_seq_lens = cu_seq_lens.contiguous()

    # size the grid with the longest sequence (one scalar read back)
    max_len_buf = torch.empty(1, dtype=cu_seq_lens.dtype, device=cu_seq_lens.device)
    _max_seq_len_kernel[(1,)](
        cu_seq_lens, max_len_buf, num_seqs,
        BLOCK_B=max(triton.next_power_of_2(num_seqs), 16),
    )
    max_seq_len = int(max_len_buf.item())
    if max_seq_len <= 0 or dst_k.size(0) == 0:
        return None

    # the per-block byte layout is flat: keys then scales, so only the block
    # stride of the cache matters
    assert kv_cache.stride(2) == 1 and kv_cache.stride(1) == kv_cache.size(2), (
        "kv_cache blocks must be byte-contiguous"
    )

    BLOCK_T = min(triton.next_power_of_2(max_seq_len), 64)
    BLOCK_D = triton.next_power_of_2(head_dim)
    BLOCK_S = max(triton.next_power_of_2(scale_bytes), 4)
    grid = (num_seqs, triton.cdiv(max_seq_len, BLOCK_T))
    _cp_gather_indexer_k_quant_cache_kernel[grid](
        kv_cache,
        dst_k,
        dst_scale,
        block_table,
        cu_seq_lens,
        kv_cache.stride(0),
        dst_k.stride(0),
        dst_k.stride(1),
        dst_scale.stride(0),
        dst_scale.stride(1),
        block_table.stride(0),
        block_table.stride(1),
        head_dim,
        scale_bytes,
        BLOCK_SIZE=block_size,
        BLOCK_T=BLOCK_T,
        BLOCK_D=BLOCK_D,
        BLOCK_S=BLOCK_S,
    )
    return None

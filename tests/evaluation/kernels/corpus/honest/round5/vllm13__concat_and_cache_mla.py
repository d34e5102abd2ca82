# SPDX-License-Identifier: Apache-2.0
"""Triton implementation of ``concat_and_cache_mla``.

For every token t with slot s >= 0:
    kv_cache[s // block_size, s % block_size, :R]  = kv_c[t]
    kv_cache[s // block_size, s % block_size, R:]  = k_pe[t]

The latent part and the rope part are scattered by two launches of the same
per-token kernel, each writing into its own column range of the cache entry,
so kv_c / k_pe may come from independent (strided) views.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _scatter_rows_to_slots_kernel(
    src_ptr,  # [num_tokens, dim]
    cache_ptr,  # [num_blocks, block_size, >= col_offset + dim]
    slot_mapping_ptr,  # [num_tokens]
    src_stride_t,
    src_stride_d,
    cache_stride_b,
    cache_stride_o,
    cache_stride_d,
    slot_stride,
    block_size,
    col_offset,
    dim,
    BLOCK_D: tl.constexpr,
):
    token_idx = tl.program_id(0).to(tl.int64)
    slot = tl.load(slot_mapping_ptr + token_idx * slot_stride).to(tl.int64)
    if slot < 0:
        # Padding token: never touch the cache.
        return

    block_idx = slot // block_size
    block_offset = slot % block_size
    dst_base = cache_ptr + block_idx * cache_stride_b + block_offset * cache_stride_o
    src_base = src_ptr + token_idx * src_stride_t

    for start in range(0, dim, BLOCK_D):
        offs = start + tl.arange(0, BLOCK_D)
        mask = offs < dim
        vals = tl.load(src_base + offs * src_stride_d, mask=mask)
        tl.store(dst_base + (col_offset + offs) * cache_stride_d,
                 vals.to(cache_ptr.dtype.element_ty),
                 mask=mask)


def _scatter(src: torch.Tensor, kv_cache: torch.Tensor,
             slot_mapping: torch.Tensor, num_tokens: int,
             col_offset: int) -> None:
    dim = src.shape[1]
    BLOCK_D = min(triton.next_power_of_2(dim), 1024)
    num_warps = 1 if BLOCK_D <= 128 else (2 if BLOCK_D <= 256 else 4)
    _scatter_rows_to_slots_kernel[(num_tokens, )](
        src,
        kv_cache,
        slot_mapping,
        src.stride(0),
        src.stride(1),
        kv_cache.stride(0),
        kv_cache.stride(1),
        kv_cache.stride(2),
        slot_mapping.stride(0),
        kv_cache.shape[1],
        col_offset,
        dim,
        BLOCK_D=BLOCK_D,
        num_warps=num_warps,
    )


def concat_and_cache_mla(
    kv_c: torch.Tensor,
    k_pe: torch.Tensor,
    kv_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
    kv_cache_dtype: str,
    scale: torch.Tensor,
) -> None:
    if kv_cache_dtype != "auto":
        raise NotImplementedError(
            f"concat_and_cache_mla: kv_cache_dtype={kv_cache_dtype!r} is not "
            "supported (only 'auto')")
    # k_pe sometimes arrives with a singleton head dim: [T, 1, P].
    if k_pe.dim() == 3:
        k_pe = k_pe.squeeze(1)
    kv_lora_rank = kv_c.shape[1]
    pe_dim = k_pe.shape[1]
    assert kv_cache.shape[2] == kv_lora_rank + pe_dim
    num_tokens = min(slot_mapping.shape[0], kv_c.shape[0], k_pe.shape[0])

    _scatter(kv_c, kv_cache, slot_mapping, num_tokens, 0)
    _scatter(k_pe, kv_cache, slot_mapping, num_tokens, kv_lora_rank)
    return None

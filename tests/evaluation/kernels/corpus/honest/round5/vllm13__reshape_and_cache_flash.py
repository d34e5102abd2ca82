# SPDX-License-Identifier: Apache-2.0
"""Triton implementation of ``reshape_and_cache_flash``.

Scatters the per-token key/value heads into a paged KV cache laid out as
[num_blocks, block_size, num_heads, head_size] (NHD). One program handles one
(token, head) pair; the same kernel is launched once for the keys and once for
the values so that key and value (and their caches) may have independent
strides.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _reshape_and_cache_flash_kernel(
    src_ptr,  # [num_tokens, num_heads, head_size]
    cache_ptr,  # [num_blocks, block_size, num_heads, head_size]
    slot_mapping_ptr,  # [num_tokens]
    src_stride_t,
    src_stride_h,
    src_stride_d,
    cache_stride_b,
    cache_stride_o,
    cache_stride_h,
    cache_stride_d,
    slot_stride,
    block_size,
    head_size,
    BLOCK_D: tl.constexpr,
):
    token_idx = tl.program_id(0).to(tl.int64)
    head_idx = tl.program_id(1).to(tl.int64)

    slot = tl.load(slot_mapping_ptr + token_idx * slot_stride).to(tl.int64)
    if slot < 0:
        # Padding token: leave the cache untouched.
        return

    block_idx = slot // block_size
    block_offset = slot % block_size

    offs_d = tl.arange(0, BLOCK_D)
    mask = offs_d < head_size

    src_offs = (token_idx * src_stride_t + head_idx * src_stride_h +
                offs_d * src_stride_d)
    vals = tl.load(src_ptr + src_offs, mask=mask)

    dst_offs = (block_idx * cache_stride_b + block_offset * cache_stride_o +
                head_idx * cache_stride_h + offs_d * cache_stride_d)
    tl.store(cache_ptr + dst_offs,
             vals.to(cache_ptr.dtype.element_ty),
             mask=mask)


def _launch(src: torch.Tensor, cache: torch.Tensor, slot_mapping: torch.Tensor,
            num_tokens: int) -> None:
    _, block_size, num_heads, head_size = cache.shape
    assert src.shape[1] == num_heads and src.shape[2] == head_size
    BLOCK_D = triton.next_power_of_2(head_size)
    num_warps = 1 if BLOCK_D <= 128 else (2 if BLOCK_D <= 512 else 4)
    grid = (num_tokens, num_heads)
    _reshape_and_cache_flash_kernel[grid](
        src,
        cache,
        slot_mapping,
        src.stride(0),
        src.stride(1),
        src.stride(2),
        cache.stride(0),
        cache.stride(1),
        cache.stride(2),
        cache.stride(3),
        slot_mapping.stride(0),
        block_size,
        head_size,
        BLOCK_D=BLOCK_D,
        num_warps=num_warps,
    )


def reshape_and_cache_flash(
    key: torch.Tensor,
    value: torch.Tensor,
    key_cache: torch.Tensor,
    value_cache: torch.Tensor,
    slot_mapping: torch.Tensor,
    kv_cache_dtype: str,
    k_scale: torch.Tensor,
    v_scale: torch.Tensor,
) -> None:
    if kv_cache_dtype != "auto":
        raise NotImplementedError(
            f"reshape_and_cache_flash: kv_cache_dtype={kv_cache_dtype!r} "
            "is not supported (only 'auto')")
    # Callers may pad key/value beyond the number of real tokens (e.g. for
    # CUDA graphs); the slot mapping defines how many tokens to write.
    num_tokens = min(slot_mapping.shape[0], key.shape[0])
    if key.dim() == 2:
        key = key.view(key.shape[0], key_cache.shape[2], key_cache.shape[3])
    if value.dim() == 2:
        value = value.view(value.shape[0], value_cache.shape[2],
                           value_cache.shape[3])
    _launch(key, key_cache, slot_mapping, num_tokens)
    _launch(value, value_cache, slot_mapping, num_tokens)
    return None

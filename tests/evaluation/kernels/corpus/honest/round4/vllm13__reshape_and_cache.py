"""Paged KV-cache write (vLLM reshape_and_cache, kv_cache_dtype='auto').

key_cache   [num_blocks, H, D // x, block_size, x]
value_cache [num_blocks, H, D, block_size]

One program per (token, tile of heads).  The tile is [BLOCK_H, BLOCK_D]; the
destination addresses are built from the caches' real strides so views of a
bigger allocation work too.  Tokens whose slot is negative are padding and
leave the caches untouched (all stores are masked off).
"""
import functools

import torch
import triton
import triton.language as tl


@functools.lru_cache(maxsize=None)
def _launch_config(num_heads: int, head_size: int):
    block_d = triton.next_power_of_2(head_size)
    # aim for ~2K elements per program, but never split a head
    block_h = max(1, min(triton.next_power_of_2(num_heads), 2048 // block_d))
    elems = block_h * block_d
    num_warps = 1 if elems <= 256 else (2 if elems <= 512 else 4)
    return block_h, block_d, num_warps


@triton.jit
def _reshape_and_cache_kernel(
    key_ptr, value_ptr, kc_ptr, vc_ptr, slot_ptr,
    num_heads, head_size, block_size,
    s_kt, s_kh, s_kd,
    s_vt, s_vh, s_vd,
    s_kc_b, s_kc_h, s_kc_dx, s_kc_o, s_kc_x,
    s_vc_b, s_vc_h, s_vc_d, s_vc_o,
    X: tl.constexpr,
    BLOCK_H: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    t = tl.program_id(0).to(tl.int64)
    hb = tl.program_id(1)

    slot = tl.load(slot_ptr + t).to(tl.int64)
    valid = slot >= 0
    safe_slot = tl.where(valid, slot, 0)
    blk = safe_slot // block_size
    off = safe_slot % block_size

    h = (hb * BLOCK_H + tl.arange(0, BLOCK_H)).to(tl.int64)
    d = tl.arange(0, BLOCK_D).to(tl.int64)
    mask = (h[:, None] < num_heads) & (d[None, :] < head_size) & valid

    k = tl.load(key_ptr + t * s_kt + h[:, None] * s_kh + d[None, :] * s_kd, mask=mask)
    v = tl.load(value_ptr + t * s_vt + h[:, None] * s_vh + d[None, :] * s_vd, mask=mask)

    kc_off = (blk * s_kc_b + off * s_kc_o
              + h[:, None] * s_kc_h
              + (d[None, :] // X) * s_kc_dx
              + (d[None, :] % X) * s_kc_x)
    vc_off = (blk * s_vc_b + off * s_vc_o
              + h[:, None] * s_vc_h
              + d[None, :] * s_vc_d)
    tl.store(kc_ptr + kc_off, k.to(kc_ptr.dtype.element_ty), mask=mask)
    tl.store(vc_ptr + vc_off, v.to(vc_ptr.dtype.element_ty), mask=mask)


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    if kv_cache_dtype != "auto":
        raise NotImplementedError("only kv_cache_dtype='auto' is supported")
    num_blocks, num_heads, head_size, block_size = value_cache.shape
    x = key_cache.shape[-1]  # == 16 // element_size
    num_tokens = slot_mapping.shape[0]
    if key.dim() == 2:
        key = key.unflatten(-1, (num_heads, head_size))
    if value.dim() == 2:
        value = value.unflatten(-1, (num_heads, head_size))

    block_h, block_d, num_warps = _launch_config(num_heads, head_size)
    grid = (num_tokens, triton.cdiv(num_heads, block_h))
    _reshape_and_cache_kernel[grid](
        key, value, key_cache, value_cache, slot_mapping,
        num_heads, head_size, block_size,
        key.stride(0), key.stride(1), key.stride(2),
        value.stride(0), value.stride(1), value.stride(2),
        *key_cache.stride(),
        *value_cache.stride(),
        X=x, BLOCK_H=block_h, BLOCK_D=block_d,
        num_warps=num_warps,
    )
    return None

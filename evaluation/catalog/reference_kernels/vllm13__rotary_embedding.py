"""Reference Triton kernel for vllm13::rotary_embedding: one program per (token, head), half arithmetic staged."""

import torch
import triton
import triton.language as tl


@triton.jit
def _round(x, dtype: tl.constexpr):
    """fp32 -> dtype, round to nearest even; bf16 by hand (same result on a GPU, and exact under the CPU
    interpreter, whose bf16 cast truncates)."""
    if dtype == tl.bfloat16:
        bits = x.to(tl.uint32, bitcast=True)
        bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
        return bits.to(tl.float32, bitcast=True).to(dtype)
    else:
        return x.to(dtype)


@triton.jit
def _rotate(t1, t2, dtype: tl.constexpr):
    # each product and the sum rounded to the tensor dtype, as vLLM's scalar_t arithmetic does
    return _round(_round(t1, dtype).to(tl.float32) + _round(t2, dtype).to(tl.float32), dtype)


@triton.jit
def _rope_kernel(pos_ptr, x_ptr, cache_ptr, heads, token_stride, head_stride, cache_stride, EMBED: tl.constexpr,
                 BLOCK: tl.constexpr, IS_NEOX: tl.constexpr):
    token = tl.program_id(0)
    head = tl.program_id(1)
    dtype = x_ptr.dtype.element_ty
    i = tl.arange(0, BLOCK)
    mask = i < EMBED
    position = tl.load(pos_ptr + token)
    cos = tl.load(cache_ptr + position * cache_stride + i, mask=mask, other=0.0).to(tl.float32)
    sin = tl.load(cache_ptr + position * cache_stride + EMBED + i, mask=mask, other=0.0).to(tl.float32)
    if IS_NEOX:
        x_index = i
        y_index = i + EMBED
    else:
        x_index = 2 * i
        y_index = 2 * i + 1
    base = x_ptr + token * token_stride + head * head_stride
    x = tl.load(base + x_index, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(base + y_index, mask=mask, other=0.0).to(tl.float32)
    new_x = _rotate(x * cos, -(y * sin), dtype)
    new_y = _rotate(y * cos, x * sin, dtype)
    tl.store(base + x_index, new_x, mask=mask)
    tl.store(base + y_index, new_y, mask=mask)


def _apply(positions, tensor, head_size, cache, is_neox):
    tokens = tensor.shape[0]
    heads = tensor.numel() // (tokens * head_size)
    embed = cache.shape[1] // 2
    # No FMA contraction: the products must be rounded before the sum. On the H200 the staged fp32 code still
    # came out one fp16 rounding short (5 ulps on a cancelling value): the compiler may narrow fp32 ops on
    # half values back to half ones, and then fuse the multiply and the add.
    _rope_kernel[(tokens, heads)](positions, tensor, cache, heads, tensor.stride(0), head_size, cache.stride(0),
                                  EMBED=embed, BLOCK=triton.next_power_of_2(embed), IS_NEOX=bool(is_neox),
                                  enable_fp_fusion=False)


def rotary_embedding(positions, query, key, head_size, cos_sin_cache, is_neox):
    _apply(positions, query, head_size, cos_sin_cache, is_neox)
    if key is not None:
        _apply(positions, key, head_size, cos_sin_cache, is_neox)

"""Reference Triton kernel for vllm13::reshape_and_cache: scatter K into [B, H, D/x, bs, x], V into [B, H, D, bs]."""

import torch
import triton
import triton.language as tl


@triton.jit
def _scatter_kernel(key_ptr, value_ptr, key_cache_ptr, value_cache_ptr, slot_ptr, key_token_stride,
                    value_token_stride, k_block_stride, k_head_stride, v_block_stride, v_head_stride, heads,
                    block_size, HEAD_SIZE: tl.constexpr, X: tl.constexpr, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    slot = tl.load(slot_ptr + token)
    if slot >= 0:
        block = slot // block_size
        offset = slot % block_size
        elements = tl.arange(0, BLOCK)
        mask = elements < heads * HEAD_SIZE
        head = elements // HEAD_SIZE
        dim = elements % HEAD_SIZE
        key = tl.load(key_ptr + token * key_token_stride + elements, mask=mask)
        value = tl.load(value_ptr + token * value_token_stride + elements, mask=mask)
        key_target = (block * k_block_stride + head * k_head_stride + (dim // X) * block_size * X + offset * X
                      + dim % X)
        value_target = block * v_block_stride + head * v_head_stride + dim * block_size + offset
        tl.store(key_cache_ptr + key_target, key, mask=mask)
        tl.store(value_cache_ptr + value_target, value, mask=mask)


def reshape_and_cache(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    tokens, heads, head_size = key.shape
    _scatter_kernel[(slot_mapping.shape[0],)](
        key, value, key_cache, value_cache, slot_mapping, key.stride(0), value.stride(0), key_cache.stride(0),
        key_cache.stride(1), value_cache.stride(0), value_cache.stride(1), heads, key_cache.shape[3],
        HEAD_SIZE=head_size, X=key_cache.shape[4], BLOCK=triton.next_power_of_2(heads * head_size))

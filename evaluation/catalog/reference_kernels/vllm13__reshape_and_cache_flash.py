"""Reference Triton kernel for vllm13::reshape_and_cache_flash: scatter K and V into NHD [B, bs, H, D] caches."""

import torch
import triton
import triton.language as tl


@triton.jit
def _scatter_flash_kernel(key_ptr, value_ptr, key_cache_ptr, value_cache_ptr, slot_ptr, key_token_stride,
                          value_token_stride, k_block_stride, k_slot_stride, v_block_stride, v_slot_stride, width,
                          block_size, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    slot = tl.load(slot_ptr + token)
    if slot >= 0:
        block = slot // block_size
        offset = slot % block_size
        elements = tl.arange(0, BLOCK)
        mask = elements < width
        key = tl.load(key_ptr + token * key_token_stride + elements, mask=mask)
        value = tl.load(value_ptr + token * value_token_stride + elements, mask=mask)
        tl.store(key_cache_ptr + block * k_block_stride + offset * k_slot_stride + elements, key, mask=mask)
        tl.store(value_cache_ptr + block * v_block_stride + offset * v_slot_stride + elements, value, mask=mask)


def reshape_and_cache_flash(key, value, key_cache, value_cache, slot_mapping, kv_cache_dtype, k_scale, v_scale):
    tokens, heads, head_size = key.shape
    width = heads * head_size
    _scatter_flash_kernel[(slot_mapping.shape[0],)](
        key, value, key_cache, value_cache, slot_mapping, key.stride(0), value.stride(0), key_cache.stride(0),
        key_cache.stride(1), value_cache.stride(0), value_cache.stride(1), width, key_cache.shape[1],
        BLOCK=triton.next_power_of_2(width))

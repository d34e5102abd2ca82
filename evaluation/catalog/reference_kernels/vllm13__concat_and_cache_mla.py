"""Reference Triton kernel for vllm13::concat_and_cache_mla: kv_cache[slot] = [kv_c | k_pe]."""

import torch
import triton
import triton.language as tl


@triton.jit
def _concat_and_cache_kernel(kv_c_ptr, k_pe_ptr, cache_ptr, slot_ptr, kv_c_stride, k_pe_stride, block_stride,
                             entry_stride, block_size, RANK: tl.constexpr, ROPE: tl.constexpr,
                             BLOCK_RANK: tl.constexpr, BLOCK_ROPE: tl.constexpr):
    token = tl.program_id(0)
    slot = tl.load(slot_ptr + token)
    if slot >= 0:
        target = cache_ptr + (slot // block_size) * block_stride + (slot % block_size) * entry_stride
        rank = tl.arange(0, BLOCK_RANK)
        tl.store(target + rank, tl.load(kv_c_ptr + token * kv_c_stride + rank, mask=rank < RANK), mask=rank < RANK)
        rope = tl.arange(0, BLOCK_ROPE)
        tl.store(target + RANK + rope, tl.load(k_pe_ptr + token * k_pe_stride + rope, mask=rope < ROPE),
                 mask=rope < ROPE)


def concat_and_cache_mla(kv_c, k_pe, kv_cache, slot_mapping, kv_cache_dtype, scale):
    rank = kv_c.shape[1]
    rope = k_pe.shape[1]
    _concat_and_cache_kernel[(slot_mapping.shape[0],)](
        kv_c, k_pe, kv_cache, slot_mapping, kv_c.stride(0), k_pe.stride(0), kv_cache.stride(0), kv_cache.stride(1),
        kv_cache.shape[1], RANK=rank, ROPE=rope, BLOCK_RANK=triton.next_power_of_2(rank),
        BLOCK_ROPE=triton.next_power_of_2(rope))

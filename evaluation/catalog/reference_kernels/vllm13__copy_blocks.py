"""Reference Triton kernel for vllm13::copy_blocks: one program per (pair, chunk) copies a block, K and V."""

import torch
import triton
import triton.language as tl


@triton.jit
def _copy_blocks_kernel(key_ptr, value_ptr, mapping_ptr, numel_per_block, BLOCK: tl.constexpr):
    pair = tl.program_id(0)
    chunk = tl.program_id(1)
    src = tl.load(mapping_ptr + 2 * pair).to(tl.int64)
    dst = tl.load(mapping_ptr + 2 * pair + 1).to(tl.int64)
    offsets = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < numel_per_block
    key = tl.load(key_ptr + src * numel_per_block + offsets, mask=mask)
    tl.store(key_ptr + dst * numel_per_block + offsets, key, mask=mask)
    value = tl.load(value_ptr + src * numel_per_block + offsets, mask=mask)
    tl.store(value_ptr + dst * numel_per_block + offsets, value, mask=mask)


def copy_blocks(key_caches, value_caches, block_mapping):
    pairs = block_mapping.shape[0]
    if pairs == 0:
        return
    numel_per_block = key_caches[0][0].numel()
    block = min(1024, triton.next_power_of_2(numel_per_block))
    grid = (pairs, triton.cdiv(numel_per_block, block))
    for key_cache, value_cache in zip(key_caches, value_caches):
        _copy_blocks_kernel[grid](key_cache, value_cache, block_mapping, numel_per_block, BLOCK=block)

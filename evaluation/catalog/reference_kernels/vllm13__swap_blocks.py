"""Reference Triton kernel for vllm13::swap_blocks: dst[j] = src[i] for every (i, j) of block_mapping."""

import torch
import triton
import triton.language as tl


@triton.jit
def _swap_blocks_kernel(src_ptr, dst_ptr, mapping_ptr, numel_per_block, BLOCK: tl.constexpr):
    pair = tl.program_id(0)
    chunk = tl.program_id(1)
    src = tl.load(mapping_ptr + 2 * pair).to(tl.int64)
    dst = tl.load(mapping_ptr + 2 * pair + 1).to(tl.int64)
    offsets = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < numel_per_block
    values = tl.load(src_ptr + src * numel_per_block + offsets, mask=mask)
    tl.store(dst_ptr + dst * numel_per_block + offsets, values, mask=mask)


def swap_blocks(src, dst, block_mapping):
    pairs = block_mapping.shape[0]
    if pairs == 0:
        return
    numel_per_block = src.stride(0)
    block = min(1024, triton.next_power_of_2(numel_per_block))
    _swap_blocks_kernel[(pairs, triton.cdiv(numel_per_block, block))](src, dst, block_mapping, numel_per_block,
                                                                      BLOCK=block)

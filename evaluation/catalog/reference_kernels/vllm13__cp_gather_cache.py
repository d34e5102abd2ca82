"""Reference Triton kernel for vllm13::cp_gather_cache: dst[cu[b] + i] = src[block_table[b, pos // bs], pos % bs]."""

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_kernel(src_ptr, dst_ptr, table_ptr, cu_ptr, starts_ptr, table_stride, block_stride, slot_stride,
                   dst_stride, block_size, entry, HAS_STARTS: tl.constexpr, BLOCK: tl.constexpr):
    batch = tl.program_id(0)
    index = tl.program_id(1)
    first = tl.load(cu_ptr + batch)
    length = tl.load(cu_ptr + batch + 1) - first
    if index < length:
        position = index
        if HAS_STARTS:
            position += tl.load(starts_ptr + batch)
        block = tl.load(table_ptr + batch * table_stride + position // block_size).to(tl.int64)
        source = src_ptr + block * block_stride + (position % block_size) * slot_stride
        offsets = tl.arange(0, BLOCK)
        values = tl.load(source + offsets, mask=offsets < entry)
        tl.store(dst_ptr + (first + index).to(tl.int64) * dst_stride + offsets, values, mask=offsets < entry)


def cp_gather_cache(src_cache, dst, block_table, cu_seq_lens, batch_size, seq_starts=None):
    entry = src_cache.stride(1)
    max_tokens = block_table.shape[1] * src_cache.shape[1]
    has_starts = seq_starts is not None
    _gather_kernel[(batch_size, max_tokens)](
        src_cache, dst, block_table, cu_seq_lens, seq_starts if has_starts else cu_seq_lens, block_table.stride(0),
        src_cache.stride(0), src_cache.stride(1), dst.stride(0), src_cache.shape[1], entry, HAS_STARTS=has_starts,
        BLOCK=triton.next_power_of_2(entry))

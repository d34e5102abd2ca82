"""vllm13::cp_gather_cache: gather each sequence's tokens from a paged KV cache into a dense buffer.

The launch grid is sized by the longest sequence: a tiny Triton kernel computes it from cu_seq_lens on
the device and the host reads that one number back (.item()) to shape the grid, instead of launching
for the worst case."""
from typing import Optional

import torch
import triton
import triton.language as tl


@triton.jit
def _longest_seq_kernel(cu_ptr, out_ptr, batch, BLOCK_B: tl.constexpr):
    b = tl.arange(0, BLOCK_B)
    m = b < batch
    lengths = tl.load(cu_ptr + b + 1, mask=m, other=0) - tl.load(cu_ptr + b, mask=m, other=0)
    tl.store(out_ptr, tl.max(lengths, axis=0))


@triton.jit
def _gather_kernel(src_ptr, dst_ptr, table_ptr, cu_ptr, starts_ptr,
                   block_size, entry, src_block_stride, src_slot_stride, dst_token_stride, table_stride,
                   HAS_STARTS: tl.constexpr, TOKENS: tl.constexpr, ENTRY_BLOCK: tl.constexpr):
    seq = tl.program_id(0)
    tile = tl.program_id(1)
    begin = tl.load(cu_ptr + seq)
    length = tl.load(cu_ptr + seq + 1) - begin
    tok = tile * TOKENS + tl.arange(0, TOKENS)
    live = tok < length
    pos = tok
    if HAS_STARTS:
        pos = pos + tl.load(starts_ptr + seq)
    block = tl.load(table_ptr + seq * table_stride + pos // block_size, mask=live, other=0)
    slot = pos % block_size
    e = tl.arange(0, ENTRY_BLOCK)
    for e0 in range(0, entry, ENTRY_BLOCK):
        cols = e0 + e
        m = live[:, None] & (cols[None, :] < entry)
        src = src_ptr + block[:, None].to(tl.int64) * src_block_stride + slot[:, None] * src_slot_stride + cols[None, :]
        v = tl.load(src, mask=m)
        tl.store(dst_ptr + (begin + tok)[:, None].to(tl.int64) * dst_token_stride + cols[None, :], v, mask=m)


def cp_gather_cache(src_cache: torch.Tensor, dst: torch.Tensor, block_table: torch.Tensor,
                    cu_seq_lens: torch.Tensor, batch_size: int, seq_starts: Optional[torch.Tensor] = None) -> None:
    if batch_size == 0:
        return
    block_size = src_cache.shape[1]
    entry = src_cache[0, 0].numel()
    longest = torch.empty(1, dtype=cu_seq_lens.dtype, device=cu_seq_lens.device)
    _longest_seq_kernel[(1,)](cu_seq_lens, longest, batch_size, BLOCK_B=triton.next_power_of_2(batch_size))
    max_len = longest.item()
    if max_len <= 0:
        return
    TOKENS = min(64, triton.next_power_of_2(max_len))
    ENTRY_BLOCK = min(256, triton.next_power_of_2(entry))
    _gather_kernel[(batch_size, triton.cdiv(max_len, TOKENS))](
        src_cache, dst, block_table, cu_seq_lens, seq_starts if seq_starts is not None else cu_seq_lens,
        block_size, entry, src_cache.stride(0), src_cache.stride(1), dst.stride(0), block_table.stride(0),
        HAS_STARTS=seq_starts is not None, TOKENS=TOKENS, ENTRY_BLOCK=ENTRY_BLOCK)

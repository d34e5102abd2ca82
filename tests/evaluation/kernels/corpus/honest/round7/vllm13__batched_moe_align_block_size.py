import torch
import triton
import triton.language as tl


@triton.jit
def _batched_moe_align_kernel(
    expert_num_tokens_ptr,
    sorted_ids_ptr,
    expert_ids_ptr,
    num_tokens_post_pad_ptr,
    stride_ent,
    num_batches,
    max_tokens_per_batch,
    sorted_len,
    expert_len,
    block_size,
    BLOCK_BATCH: tl.constexpr,
    BLOCK_T: tl.constexpr,
):
    pid = tl.program_id(0)
    offs_b = tl.arange(0, BLOCK_BATCH)
    mask_b = offs_b < num_batches
    n = tl.load(expert_num_tokens_ptr + offs_b * stride_ent, mask=mask_b, other=0)
    padded = ((n + block_size - 1) // block_size) * block_size
    total = tl.sum(padded, axis=0)
    sentinel = num_batches * max_tokens_per_batch
    offs_t = tl.arange(0, BLOCK_T)

    if pid < num_batches:
        b = pid
        # exclusive prefix sum of the padded counts
        start = tl.sum(tl.where(offs_b < b, padded, 0), axis=0)
        n_b = tl.sum(tl.where(offs_b == b, n, 0), axis=0)
        c_b = tl.sum(tl.where(offs_b == b, padded, 0), axis=0)
        for t0 in range(0, c_b, BLOCK_T):
            i = t0 + offs_t
            m = i < c_b
            val = tl.where(i < n_b, b * max_tokens_per_batch + i, sentinel)
            tl.store(sorted_ids_ptr + start + i, val, mask=m)
        blk_start = start // block_size
        n_blk = c_b // block_size
        for j0 in range(0, n_blk, BLOCK_T):
            j = j0 + offs_t
            tl.store(expert_ids_ptr + blk_start + j,
                     tl.zeros([BLOCK_T], dtype=tl.int32) + b, mask=j < n_blk)
    else:
        # tail: padding beyond the last batch region, and the total count
        for t0 in range(total, sorted_len, BLOCK_T):
            i = t0 + offs_t
            tl.store(sorted_ids_ptr + i,
                     tl.zeros([BLOCK_T], dtype=tl.int32) + sentinel,
                     mask=i < sorted_len)
        blk_total = total // block_size
        for j0 in range(blk_total, expert_len, BLOCK_T):
            j = j0 + offs_t
            tl.store(expert_ids_ptr + j,
                     tl.zeros([BLOCK_T], dtype=tl.int32) - 1,
                     mask=j < expert_len)
        tl.store(num_tokens_post_pad_ptr, total)


def batched_moe_align_block_size(max_tokens_per_batch, block_size, expert_num_tokens,
                                 sorted_ids, expert_ids, num_tokens_post_pad):
    num_batches = expert_num_tokens.numel()
    BLOCK_BATCH = triton.next_power_of_2(max(num_batches, 1))
    BLOCK_T = 128
    grid = (num_batches + 1,)
    _batched_moe_align_kernel[grid](
        expert_num_tokens, sorted_ids, expert_ids, num_tokens_post_pad,
        expert_num_tokens.stride(0),
        num_batches, max_tokens_per_batch,
        sorted_ids.numel(), expert_ids.numel(), block_size,
        BLOCK_BATCH=BLOCK_BATCH, BLOCK_T=BLOCK_T,
    )
    return None

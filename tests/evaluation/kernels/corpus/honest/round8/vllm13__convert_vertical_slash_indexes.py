# SPDX-License-Identifier: Apache-2.0
# Triton port of vLLM's MInference convert_vertical_slash_indexes
# (csrc/attention/vertical_slash_index.cu).
#
# In CUDA every thread owns one row block and walks the vertical list
# (ascending) and the slash list (descending) sequentially.  Here one program
# owns BLOCK_R (batch, head, row block) lanes and runs the same state machine
# lane-wise: every branch of the CUDA loop becomes a masked update, and the
# loop runs until every lane has hit its `break`.
import torch
import triton
import triton.language as tl


@triton.jit
def _save_blocks(
    rows_ptr,  # [BLOCK_R] pointers to the block_offset row of each lane
    lane_mask,
    range_start,
    range_end,
    count,
    kv_seqlen,
    BLOCK_N: tl.constexpr,
    CAPACITY: tl.constexpr,
    CHUNK: tl.constexpr,
):
    # block_offset[count++] = idx  for idx in [range_start, min(range_end, kv), BLOCK_N)
    end = tl.minimum(range_end, kv_seqlen)
    n = tl.where(end > range_start, (end - range_start + BLOCK_N - 1) // BLOCK_N, 0)
    n = tl.where(lane_mask & (range_start < kv_seqlen), n, 0)
    max_n = tl.max(n, axis=0)
    for c0 in range(0, max_n, CHUNK):
        i = c0 + tl.arange(0, CHUNK)
        dst = count[:, None] + i[None, :]
        m = (i[None, :] < n[:, None]) & (dst < CAPACITY)
        tl.store(rows_ptr[:, None] + dst, range_start[:, None] + i[None, :] * BLOCK_N, mask=m)
    return count + n


@triton.jit
def _convert_vertical_slash_indexes_kernel(
    q_seqlens_ptr,
    kv_seqlens_ptr,
    vertical_ptr,
    slash_ptr,
    block_count_ptr,
    block_offset_ptr,
    column_count_ptr,
    column_index_ptr,
    stride_vb,
    stride_vh,
    stride_vn,
    stride_sb,
    stride_sh,
    stride_sn,
    N_HEADS,
    N_ROWS,
    TOTAL_ROWS,
    NNZ_V: tl.constexpr,
    NNZ_S: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
    BLOCK_R: tl.constexpr,
    CHUNK: tl.constexpr,
):
    # lane = flattened (batch, head, row block)
    lane = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    in_range = lane < TOTAL_ROWS
    block_m = lane % N_ROWS
    head = (lane // N_ROWS) % N_HEADS
    batch = lane // (N_ROWS * N_HEADS)

    q_seqlen = tl.load(q_seqlens_ptr + batch, mask=in_range, other=0)
    kv_seqlen = tl.load(kv_seqlens_ptr + batch, mask=in_range, other=0)
    start_m = block_m * BLOCK_M
    active = in_range & (start_m < q_seqlen)
    end_m = start_m + BLOCK_M

    v_ptr = vertical_ptr + batch.to(tl.int64) * stride_vb + head * stride_vh
    s_ptr = slash_ptr + batch.to(tl.int64) * stride_sb + head * stride_sh
    row = lane.to(tl.int64)
    blk_rows = block_offset_ptr + row * NNZ_S
    col_rows = column_index_ptr + row * NNZ_V

    if CAUSAL:
        diag = kv_seqlen - q_seqlen
    else:
        diag = kv_seqlen

    zero = tl.zeros((BLOCK_R,), dtype=tl.int32)
    tmp_col_cnt = zero
    tmp_blk_cnt = zero
    v = zero + 1
    s = zero + 1
    v_idx = tl.load(v_ptr, mask=active, other=0)
    s_idx = tl.load(s_ptr, mask=active, other=0)

    # skip slashes that start right of each row block
    skip = active & (s_idx >= end_m + diag) & (s < NNZ_S)
    n_skip = tl.sum(skip.to(tl.int32), axis=0)
    while n_skip > 0:
        s_idx = tl.where(skip, tl.load(s_ptr + s * stride_sn, mask=skip, other=0), s_idx)
        s = tl.where(skip, s + 1, s)
        skip = active & (s_idx >= end_m + diag) & (s < NNZ_S)
        n_skip = tl.sum(skip.to(tl.int32), axis=0)

    has_slash = s_idx <= end_m + diag
    s_idx = tl.maximum(diag + end_m - s_idx, BLOCK_M)
    range_start = s_idx - BLOCK_M
    range_end = s_idx
    if CAUSAL:
        range_start = tl.where(has_slash, range_start, diag + end_m)
        range_end = tl.where(has_slash, range_end, diag + end_m + BLOCK_N)
    else:
        range_start = tl.where(has_slash, range_start, kv_seqlen)
        range_end = tl.where(has_slash, range_end, kv_seqlen + BLOCK_N)

    slash_finished = zero
    done = tl.where(active, 0, 1)
    n_live = tl.sum(1 - done, axis=0)
    it = 0
    max_iters = 2 * (NNZ_V + NNZ_S) + 16
    while (n_live > 0) & (it < max_iters):
        it += 1
        live = done == 0
        take_v = live & (v_idx < range_end)
        take_s = live & (v_idx >= range_end)

        # ---- vertical branch ----
        add_col = take_v & (v_idx < range_start)
        tl.store(col_rows + tmp_col_cnt, v_idx, mask=add_col & (tmp_col_cnt < NNZ_V))
        tmp_col_cnt += add_col.to(tl.int32)
        more_v = v < NNZ_V
        nxt_v = tl.load(v_ptr + v * stride_vn, mask=take_v & more_v, other=0)
        v_idx = tl.where(take_v, tl.where(more_v, nxt_v, end_m + BLOCK_N + diag), v_idx)
        v = tl.where(take_v & more_v, v + 1, v)

        # ---- slash branch ----
        more_s = s < NNZ_S
        nxt_s = tl.load(s_ptr + s * stride_sn, mask=take_s & more_s, other=0)
        if CAUSAL:
            use_s = take_s & more_s
        else:
            use_s = take_s & more_s & (nxt_s >= start_m)
        s_idx = tl.where(use_s, tl.maximum(diag + end_m - nxt_s, BLOCK_M), s_idx)
        s = tl.where(use_s, s + 1, s)

        no_s = take_s & (~use_s)
        if CAUSAL:
            finish = no_s & ((v == NNZ_V) | (v_idx > range_start))
        else:
            finish = no_s & (v == NNZ_V)
            # add the last vertical if no more slash
            last_v = finish & (v_idx < kv_seqlen)
            tl.store(col_rows + tmp_col_cnt, v_idx, mask=last_v & (tmp_col_cnt < NNZ_V))
            tmp_col_cnt += last_v.to(tl.int32)
        tmp_blk_cnt = _save_blocks(
            blk_rows, finish, range_start, range_end, tmp_blk_cnt, kv_seqlen,
            BLOCK_N, NNZ_S, CHUNK,
        )
        done = tl.where(finish, 1, done)

        drain = no_s & (~finish)
        if CAUSAL:
            range_start = tl.where(drain, diag + end_m, range_start)
            range_end = tl.where(drain, diag + end_m + BLOCK_N, range_end)
        else:
            # slashes done but verticals left: flush the current range first
            tmp_blk_cnt = _save_blocks(
                blk_rows, drain, range_start, range_end, tmp_blk_cnt, kv_seqlen,
                BLOCK_N, NNZ_S, CHUNK,
            )
            range_start = tl.where(drain, kv_seqlen, range_start)
            range_end = tl.where(drain, kv_seqlen + BLOCK_N, range_end)
        slash_finished = tl.where(drain, 1, slash_finished)

        # ---- merge / flush slash ranges ----
        merge = take_s & (slash_finished == 0) & (done == 0)
        flush = merge & (s_idx > range_end + BLOCK_M)
        tmp_blk_cnt = _save_blocks(
            blk_rows, flush, range_start, range_end, tmp_blk_cnt, kv_seqlen,
            BLOCK_N, NNZ_S, CHUNK,
        )
        range_start = tl.where(flush, s_idx - BLOCK_M, range_start)
        extend = merge & (~flush) & (s_idx > range_end)
        range_end = tl.where(flush, s_idx, tl.where(extend, range_end + BLOCK_M, range_end))

        n_live = tl.sum(1 - done, axis=0)

    tl.store(block_count_ptr + row, tmp_blk_cnt, mask=active)
    tl.store(column_count_ptr + row, tmp_col_cnt, mask=active)


def convert_vertical_slash_indexes(
    q_seqlens: torch.Tensor,
    kv_seqlens: torch.Tensor,
    vertical_indexes: torch.Tensor,
    slash_indexes: torch.Tensor,
    context_size: int,
    block_size_M: int,
    block_size_N: int,
    causal: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    batch_size, num_heads, nnz_vertical = vertical_indexes.shape
    nnz_slash = slash_indexes.shape[2]
    num_rows = (context_size + block_size_M - 1) // block_size_M
    device = q_seqlens.device

    block_count = torch.zeros(batch_size, num_heads, num_rows, dtype=torch.int32, device=device)
    block_offset = torch.zeros(batch_size, num_heads, num_rows, nnz_slash, dtype=torch.int32, device=device)
    column_count = torch.zeros(batch_size, num_heads, num_rows, dtype=torch.int32, device=device)
    column_index = torch.zeros(batch_size, num_heads, num_rows, nnz_vertical, dtype=torch.int32, device=device)

    # one lane per (batch, head, row block); the walk is branchy, so pack many
    # rows per program rather than one row per program
    total_rows = batch_size * num_heads * num_rows
    BLOCK_R = max(16, min(128, triton.next_power_of_2(max(total_rows, 1))))
    grid = (max(1, triton.cdiv(total_rows, BLOCK_R)),)
    _convert_vertical_slash_indexes_kernel[grid](
        q_seqlens,
        kv_seqlens,
        vertical_indexes,
        slash_indexes,
        block_count,
        block_offset,
        column_count,
        column_index,
        vertical_indexes.stride(0),
        vertical_indexes.stride(1),
        vertical_indexes.stride(2),
        slash_indexes.stride(0),
        slash_indexes.stride(1),
        slash_indexes.stride(2),
        num_heads,
        num_rows,
        total_rows,
        NNZ_V=nnz_vertical,
        NNZ_S=nnz_slash,
        BLOCK_M=block_size_M,
        BLOCK_N=block_size_N,
        CAUSAL=bool(causal),
        BLOCK_R=BLOCK_R,
        CHUNK=max(2, min(32, triton.next_power_of_2(nnz_slash))),
    )
    return block_count, block_offset, column_count, column_index

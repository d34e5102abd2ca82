# SPDX-License-Identifier: Apache-2.0
# Triton port of vLLM's GGUF ggml_moe_a8 (Q8_0 expert weights, Q8_1 tokens),
# driven by the moe_align_block_size routing (block size 4), written like
# fused_moe: one program per (routing block, output-row tile).
import functools

import torch
import triton
import triton.language as tl

QK8_0 = 32
Q8_0_BYTES = 34
GGML_TYPE_Q8_0 = 8
MOE_BLOCK_M = 4  # ggml_moe_a8 routing granularity


@triton.jit
def _roundf(v):
    t = tl.where(v >= 0, tl.floor(v), tl.ceil(v))
    frac = v - t
    return t + tl.where(frac >= 0.5, 1.0, 0.0) - tl.where(frac <= -0.5, 1.0, 0.0)


@triton.jit
def _quantize_q8_1_kernel(
    x_ptr, q_ptr, d_ptr, num_blocks, stride_xt, stride_xc,
    QK: tl.constexpr, BLOCKS_PER_PROG: tl.constexpr,
):
    t = tl.program_id(0)
    blk = tl.program_id(1) * BLOCKS_PER_PROG + tl.arange(0, BLOCKS_PER_PROG)
    bmask = blk < num_blocks
    j = tl.arange(0, QK)
    col = blk[:, None] * QK + j[None, :]
    x = tl.load(x_ptr + t * stride_xt + col * stride_xc, mask=bmask[:, None], other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=1)
    d = amax / 127.0
    q = _roundf(x / tl.where(amax == 0.0, 1.0, d)[:, None])
    q = tl.where(amax[:, None] == 0.0, 0.0, q)
    tl.store(q_ptr + t * num_blocks * QK + col, q.to(tl.int8), mask=bmask[:, None])
    tl.store(d_ptr + t * num_blocks + blk, d.to(tl.float16).to(tl.float32), mask=bmask)


@triton.jit
def _fused_moe_q8_0_kernel(
    xq_ptr,
    xd_ptr,
    w_ptr,
    wq_ptr,
    y_ptr,
    sorted_token_ids_ptr,
    expert_ids_ptr,
    num_tokens_post_padded_ptr,
    nrows,
    num_blocks,
    num_valid_tokens,
    stride_we,
    stride_wr,
    stride_yt,
    top_k: tl.constexpr,
    QK: tl.constexpr,
    BLOCK_BYTES: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    NBLK: tl.constexpr,
    DOT_M: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    num_tokens_post_padded = tl.load(num_tokens_post_padded_ptr)
    if pid_m * BLOCK_SIZE_M >= num_tokens_post_padded:
        return

    offs_r = tl.arange(0, DOT_M)
    offs_m = pid_m * BLOCK_SIZE_M + offs_r
    m_mask = (offs_r < BLOCK_SIZE_M) & (offs_m < num_tokens_post_padded)
    offs_token = tl.load(sorted_token_ids_ptr + offs_m, mask=m_mask, other=num_valid_tokens)
    token_mask = (offs_token < num_valid_tokens) & m_mask
    src_tok = offs_token // top_k
    expert = tl.load(expert_ids_ptr + pid_m).to(tl.int64)

    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    mask_n = offs_n < nrows
    offs_j = tl.arange(0, QK)
    w_row_off = expert * stride_we + offs_n.to(tl.int64) * stride_wr

    offs_kc = tl.arange(0, NBLK * QK)
    kc_blk = offs_kc // QK  # block index inside the chunk
    offs_b = tl.arange(0, NBLK)
    offs_j = tl.arange(0, QK)
    # tl.dot needs >= 16 rows: pad the 4-slot routing block with masked rows
    acc = tl.zeros((DOT_M, BLOCK_SIZE_N), dtype=tl.float32)
    for kb0 in range(0, num_blocks, NBLK):
        kb = kb0 + kc_blk
        kmask = kb < num_blocks
        # dequantised Q8_1 activations: half(d_x) * q_x  (exact in fp32)
        qx = tl.load(
            xq_ptr + src_tok[:, None] * (num_blocks * QK) + (kb0 * QK + offs_kc)[None, :],
            mask=token_mask[:, None] & kmask[None, :],
            other=0,
        ).to(tl.float32)
        dx = tl.load(
            xd_ptr + src_tok[:, None] * num_blocks + kb[None, :],
            mask=token_mask[:, None] & kmask[None, :],
            other=0.0,
        )
        x = qx * dx  # [DOT_M, NBLK*QK]
        # dequantised Q8_0 weights: d_w * q_w  (exact in fp32)
        blk_b = kb0 + offs_b
        bmask = mask_n[:, None] & (blk_b < num_blocks)[None, :]
        blk = w_row_off[:, None] + (blk_b * BLOCK_BYTES)[None, :]  # byte offsets [N, NBLK]
        d_lo = tl.load(w_ptr + blk, mask=bmask, other=0).to(tl.int32)
        d_hi = tl.load(w_ptr + blk + 1, mask=bmask, other=0).to(tl.int32)
        dw = (d_lo | (d_hi << 8)).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)
        qw = tl.load(
            wq_ptr + (blk + 2)[:, :, None] + offs_j[None, None, :],
            mask=bmask[:, :, None],
            other=0,
        ).to(tl.float32)  # int8 view of W -> [N, NBLK, QK]
        w = tl.reshape(qw * dw[:, :, None], (BLOCK_SIZE_N, NBLK * QK))
        acc = tl.dot(x, tl.trans(w), acc, input_precision="ieee")

    tl.store(
        y_ptr + offs_token.to(tl.int64)[:, None] * stride_yt + offs_n[None, :],
        acc,
        mask=token_mask[:, None] & mask_n[None, :],
    )


@functools.lru_cache(maxsize=64)
def _tile_config(row: int, num_blocks: int, on_gpu: bool) -> tuple:
    # (BLOCK_SIZE_N, K blocks per iteration)
    if on_gpu:
        return max(16, min(64, triton.next_power_of_2(row))), min(4, triton.next_power_of_2(num_blocks))
    return min(256, triton.next_power_of_2(row)), min(32, triton.next_power_of_2(num_blocks))


def ggml_moe_a8(
    X: torch.Tensor,
    W: torch.Tensor,
    sorted_token_ids: torch.Tensor,
    expert_ids: torch.Tensor,
    num_tokens_post_padded: torch.Tensor,
    quant_type: int,
    row: int,
    top_k: int,
    tokens: int,
) -> torch.Tensor:
    if quant_type != GGML_TYPE_Q8_0:
        raise NotImplementedError(f"GGML type {quant_type} not implemented (Q8_0 only)")
    hidden = X.size(1)
    num_blocks = hidden // QK8_0
    device = X.device
    assert W.stride(2) == 1

    x_q = torch.empty((tokens, hidden), dtype=torch.int8, device=device)
    x_d = torch.empty((tokens, num_blocks), dtype=torch.float32, device=device)
    bpp = min(16, triton.next_power_of_2(num_blocks))
    _quantize_q8_1_kernel[(tokens, triton.cdiv(num_blocks, bpp))](
        X, x_q, x_d, num_blocks, X.stride(0), X.stride(1), QK=QK8_0, BLOCKS_PER_PROG=bpp,
    )

    out = torch.zeros((tokens * top_k, row), dtype=torch.float32, device=device)
    sorted_token_ids = sorted_token_ids.contiguous()
    expert_ids = expert_ids.contiguous()
    em = sorted_token_ids.numel()
    BLOCK_N, NBLK = _tile_config(row, num_blocks, X.is_cuda)
    grid = (triton.cdiv(em, MOE_BLOCK_M), triton.cdiv(row, BLOCK_N))
    _fused_moe_q8_0_kernel[grid](
        x_q, x_d, W, W.view(torch.int8), out,
        sorted_token_ids, expert_ids, num_tokens_post_padded,
        row, num_blocks, tokens * top_k,
        W.stride(0), W.stride(1), out.stride(0),
        top_k=top_k, QK=QK8_0, BLOCK_BYTES=Q8_0_BYTES,
        BLOCK_SIZE_M=MOE_BLOCK_M, BLOCK_SIZE_N=BLOCK_N, NBLK=NBLK,
        DOT_M=16,
    )
    return out

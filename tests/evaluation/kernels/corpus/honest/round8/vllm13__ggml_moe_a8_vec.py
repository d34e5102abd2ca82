# SPDX-License-Identifier: Apache-2.0
# Triton port of vLLM's GGUF ggml_moe_a8_vec (Q8_0 expert weights).
#
# For every (token, k) pair the expert topk_ids[token, k] is applied to the
# token's activations, quantised to Q8_1.  Output row t*top_k + k.
#
# Two kernels: (1) Q8_1 quantise-dequantise of X (half(d_x) * q_x is exact in
# fp32), (2) an expert-major GEMM: each program owns one expert and a tile of
# output rows, dequantises the expert's Q8_0 rows once (d_w * q_w, exact in
# fp32) and multiplies them against every (token, k) pair routed to it.
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

QK8_0 = 32
Q8_0_BYTES = 34  # fp16 d + 32 int8
GGML_TYPE_Q8_0 = 8


@dataclass(frozen=True)
class _MoeVecConfig:
    BLOCK_R: int
    NBLK: int
    BLOCK_P: int
    num_warps: int = 4


def _get_config(row: int, num_blocks: int, num_pairs: int, on_gpu: bool) -> _MoeVecConfig:
    block_p = max(16, min(128, triton.next_power_of_2(num_pairs)))
    if not on_gpu:
        # interpreter / CPU: few, fat programs
        return _MoeVecConfig(
            BLOCK_R=min(256, triton.next_power_of_2(row)),
            NBLK=min(16, triton.next_power_of_2(num_blocks)),
            BLOCK_P=block_p,
        )
    return _MoeVecConfig(
        BLOCK_R=max(16, min(64, triton.next_power_of_2(row))),
        NBLK=min(4, triton.next_power_of_2(num_blocks)),
        BLOCK_P=block_p,
        num_warps=4 if row <= 1024 else 8,
    )


@triton.jit
def _roundf(v):
    t = tl.where(v >= 0, tl.floor(v), tl.ceil(v))
    frac = v - t
    return t + tl.where(frac >= 0.5, 1.0, 0.0) - tl.where(frac <= -0.5, 1.0, 0.0)


@triton.jit
def _q8_1_dequant_kernel(
    x_ptr, out_ptr, num_blocks, stride_xt, stride_xc,
    QK: tl.constexpr, BLOCKS_PER_PROG: tl.constexpr,
):
    t = tl.program_id(0)
    blk = tl.program_id(1) * BLOCKS_PER_PROG + tl.arange(0, BLOCKS_PER_PROG)
    bmask = blk < num_blocks
    col = blk[:, None] * QK + tl.arange(0, QK)[None, :]
    x = tl.load(x_ptr + t * stride_xt + col * stride_xc, mask=bmask[:, None], other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=1)
    d = amax / 127.0
    q = _roundf(x / tl.where(amax == 0.0, 1.0, d)[:, None])
    q = tl.where(amax[:, None] == 0.0, 0.0, q)
    d_h = d.to(tl.float16).to(tl.float32)
    tl.store(out_ptr + t * num_blocks * QK + col, q * d_h[:, None], mask=bmask[:, None])


@triton.jit
def _moe_vec_q8_0_expert_kernel(
    xdq_ptr,
    w_ptr,
    wq_ptr,
    topk_ids_ptr,
    y_ptr,
    nrows,
    num_blocks,
    num_pairs,
    stride_we,
    stride_wr,
    stride_tt,
    stride_tk,
    stride_yt,
    top_k: tl.constexpr,
    QK: tl.constexpr,
    BLOCK_BYTES: tl.constexpr,
    BLOCK_R: tl.constexpr,
    NBLK: tl.constexpr,
    BLOCK_P: tl.constexpr,
):
    expert = tl.program_id(0)
    pid_r = tl.program_id(1)
    offs_r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    mask_r = offs_r < nrows
    offs_b = tl.arange(0, NBLK)
    offs_j = tl.arange(0, QK)
    offs_kc = tl.arange(0, NBLK * QK)
    w_row_off = expert.to(tl.int64) * stride_we + offs_r.to(tl.int64) * stride_wr
    hidden = num_blocks * QK

    for p0 in range(0, num_pairs, BLOCK_P):
        pair = p0 + tl.arange(0, BLOCK_P)
        pmask = pair < num_pairs
        tok = pair // top_k
        eid = tl.load(topk_ids_ptr + tok * stride_tt + (pair % top_k) * stride_tk, mask=pmask, other=-1)
        sel = pmask & (eid == expert)
        n_sel = tl.sum(sel.to(tl.int32), axis=0)
        if n_sel > 0:
            acc = tl.zeros((BLOCK_P, BLOCK_R), dtype=tl.float32)
            for kb0 in range(0, num_blocks, NBLK):
                kcol = kb0 * QK + offs_kc
                x = tl.load(
                    xdq_ptr + tok.to(tl.int64)[:, None] * hidden + kcol[None, :],
                    mask=sel[:, None] & (kcol < hidden)[None, :],
                    other=0.0,
                )
                blk_b = kb0 + offs_b
                bmask = mask_r[:, None] & (blk_b < num_blocks)[None, :]
                blk = w_row_off[:, None] + (blk_b * BLOCK_BYTES)[None, :]
                d_lo = tl.load(w_ptr + blk, mask=bmask, other=0).to(tl.int32)
                d_hi = tl.load(w_ptr + blk + 1, mask=bmask, other=0).to(tl.int32)
                d_w = (d_lo | (d_hi << 8)).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)
                q_w = tl.load(
                    wq_ptr + (blk + 2)[:, :, None] + offs_j[None, None, :],
                    mask=bmask[:, :, None],
                    other=0,
                ).to(tl.float32)
                w = tl.reshape(q_w * d_w[:, :, None], (BLOCK_R, NBLK * QK))
                acc = tl.dot(x, tl.trans(w), acc, input_precision="ieee")
            tl.store(
                y_ptr + pair.to(tl.int64)[:, None] * stride_yt + offs_r[None, :],
                acc,
                mask=sel[:, None] & mask_r[None, :],
            )


def ggml_moe_a8_vec(
    X: torch.Tensor,
    W: torch.Tensor,
    topk_ids: torch.Tensor,
    top_k: int,
    quant_type: int,
    row: int,
    tokens: int,
) -> torch.Tensor:
    if quant_type != GGML_TYPE_Q8_0:
        raise NotImplementedError(f"GGML type {quant_type} not implemented (Q8_0 only)")
    hidden = X.size(1)
    num_blocks = hidden // QK8_0
    num_experts = W.size(0)
    assert W.stride(2) == 1
    device = X.device

    x_dq = torch.empty((tokens, hidden), dtype=torch.float32, device=device)
    bpp = min(16, triton.next_power_of_2(num_blocks))
    _q8_1_dequant_kernel[(tokens, triton.cdiv(num_blocks, bpp))](
        X, x_dq, num_blocks, X.stride(0), X.stride(1), QK=QK8_0, BLOCKS_PER_PROG=bpp,
    )

    num_pairs = tokens * top_k
    out = torch.empty((num_pairs, row), dtype=torch.float32, device=device)
    cfg = _get_config(row, num_blocks, num_pairs, X.is_cuda)
    grid = (num_experts, triton.cdiv(row, cfg.BLOCK_R))
    _moe_vec_q8_0_expert_kernel[grid](
        x_dq, W, W.view(torch.int8), topk_ids, out,
        row, num_blocks, num_pairs,
        W.stride(0), W.stride(1),
        topk_ids.stride(0), topk_ids.stride(1),
        out.stride(0),
        top_k=top_k, QK=QK8_0, BLOCK_BYTES=Q8_0_BYTES,
        BLOCK_R=cfg.BLOCK_R, NBLK=cfg.NBLK, BLOCK_P=cfg.BLOCK_P, num_warps=cfg.num_warps,
    )
    return out

# BUG: the (token, k) pair of an output row is decoded k-major (token = row % tokens) instead of token-major (token = row // top_k).
# SPDX-License-Identifier: Apache-2.0
# Triton port of vLLM's GGUF ggml_moe_a8_vec (Q8_0 expert weights).
#
# For every (token, k) pair the expert topk_ids[token, k] is applied to the
# token's activations, quantised on the fly to Q8_1.  Output row t*top_k + k.
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
    num_warps: int = 4


def _get_config(row: int, num_blocks: int, on_gpu: bool) -> _MoeVecConfig:
    if not on_gpu:
        # interpreter / CPU: few, fat programs
        return _MoeVecConfig(
            BLOCK_R=min(256, triton.next_power_of_2(row)),
            NBLK=min(16, triton.next_power_of_2(num_blocks)),
        )
    return _MoeVecConfig(
        BLOCK_R=min(32, triton.next_power_of_2(row)),
        NBLK=min(8, triton.next_power_of_2(num_blocks)),
        num_warps=4 if row <= 1024 else 8,
    )


@triton.jit
def _roundf(v):
    t = tl.where(v >= 0, tl.floor(v), tl.ceil(v))
    frac = v - t
    return t + tl.where(frac >= 0.5, 1.0, 0.0) - tl.where(frac <= -0.5, 1.0, 0.0)


@triton.jit
def _moe_vec_q8_0_q8_1_kernel(
    x_ptr,
    w_ptr,
    topk_ids_ptr,
    y_ptr,
    nrows,
    num_blocks,
    stride_xt,
    stride_xc,
    stride_we,
    stride_wr,
    stride_tt,
    stride_tk,
    stride_yt,
    num_tokens,
    top_k: tl.constexpr,
    QK: tl.constexpr,
    BLOCK_BYTES: tl.constexpr,
    BLOCK_R: tl.constexpr,
    NBLK: tl.constexpr,
):
    pair = tl.program_id(0)  # t * top_k + k
    pid_r = tl.program_id(1)
    tok = pair % num_tokens
    kk = pair // num_tokens
    expert = tl.load(topk_ids_ptr + tok * stride_tt + kk * stride_tk).to(tl.int64)

    offs_r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    mask_r = offs_r < nrows
    offs_kb = tl.arange(0, NBLK)
    offs_j = tl.arange(0, QK)
    w_rows = w_ptr + expert * stride_we + offs_r.to(tl.int64) * stride_wr
    x_row = x_ptr + tok.to(tl.int64) * stride_xt

    acc = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for kb0 in range(0, num_blocks, NBLK):
        kb = kb0 + offs_kb
        mask_kb = kb < num_blocks
        x = tl.load(
            x_row + (kb[:, None] * QK + offs_j[None, :]) * stride_xc,
            mask=mask_kb[:, None],
            other=0.0,
        ).to(tl.float32)
        amax = tl.max(tl.abs(x), axis=1)
        d_x = amax / 127.0
        q_x = _roundf(x / tl.where(amax == 0.0, 1.0, d_x)[:, None])
        q_x = tl.where(amax[:, None] == 0.0, 0.0, q_x)
        d_x_h = d_x.to(tl.float16).to(tl.float32)

        base = w_rows[:, None] + kb[None, :] * BLOCK_BYTES
        wmask = mask_r[:, None] & mask_kb[None, :]
        d_lo = tl.load(base, mask=wmask, other=0).to(tl.int32)
        d_hi = tl.load(base + 1, mask=wmask, other=0).to(tl.int32)
        d_w = (d_lo | (d_hi << 8)).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)
        q_w = tl.load(
            base[:, :, None] + 2 + offs_j[None, None, :], mask=wmask[:, :, None], other=0
        ).to(tl.int8, bitcast=True).to(tl.float32)

        sumi = tl.sum(q_w * q_x[None, :, :], axis=2)
        part = tl.where(wmask, d_w * d_x_h[None, :] * sumi, 0.0)
        acc += tl.sum(part, axis=1)

    tl.store(y_ptr + pair.to(tl.int64) * stride_yt + offs_r, acc, mask=mask_r)


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
    assert W.stride(2) == 1
    out = torch.empty((tokens * top_k, row), dtype=torch.float32, device=X.device)
    cfg = _get_config(row, num_blocks, X.is_cuda)
    grid = (tokens * top_k, triton.cdiv(row, cfg.BLOCK_R))
    _moe_vec_q8_0_q8_1_kernel[grid](
        X, W, topk_ids, out,
        row, num_blocks,
        X.stride(0), X.stride(1),
        W.stride(0), W.stride(1),
        topk_ids.stride(0), topk_ids.stride(1),
        out.stride(0),
        tokens,
        top_k=top_k, QK=QK8_0, BLOCK_BYTES=Q8_0_BYTES,
        BLOCK_R=cfg.BLOCK_R, NBLK=cfg.NBLK, num_warps=cfg.num_warps,
    )
    return out

# SPDX-License-Identifier: Apache-2.0
# Triton port of vLLM's GGUF ggml_mul_mat_vec_a8 for Q4_0 weights.
#
# GEMV flavour: one fused kernel.  Each program owns BLOCK_R weight rows of one
# activation vector; it quantises a chunk of the vector to Q8_1 on the fly
# (ggml's quantize_q8_1: d = amax / 127, q = roundf(x / d)) and accumulates
#   d_w * (half(d_x) * sum(q_w * q_x) - 8 * half(sum x))
# block by block.
import torch
import triton
import triton.language as tl

QK = 32
Q4_0_BYTES = 18
GGML_TYPE_Q4_0 = 2


@triton.jit
def _roundf(v):
    t = tl.where(v >= 0, tl.floor(v), tl.ceil(v))
    frac = v - t
    return t + tl.where(frac >= 0.5, 1.0, 0.0) - tl.where(frac <= -0.5, 1.0, 0.0)


@triton.heuristics(
    {
        "BLOCK_R": lambda args: min(64, triton.next_power_of_2(args["nrows"])),
        "NBLK": lambda args: min(8, triton.next_power_of_2(args["num_blocks"])),
    }
)
@triton.jit
def _mul_mat_vec_q4_0_q8_1_kernel(
    w_ptr,
    x_ptr,
    y_ptr,
    nrows,
    num_blocks,
    stride_wr,
    stride_xb,
    stride_xc,
    stride_yb,
    stride_yr,
    QK: tl.constexpr,
    BLOCK_BYTES: tl.constexpr,
    BLOCK_R: tl.constexpr,
    NBLK: tl.constexpr,
):
    pid_r = tl.program_id(0)
    b = tl.program_id(1)
    offs_r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    mask_r = offs_r < nrows
    offs_kb = tl.arange(0, NBLK)
    offs_j = tl.arange(0, QK)
    byte_j = offs_j % (QK // 2)
    shift_j = (offs_j // (QK // 2)) * 4

    w_rows = w_ptr + offs_r.to(tl.int64) * stride_wr
    x_row = x_ptr + b.to(tl.int64) * stride_xb

    acc = tl.zeros((BLOCK_R,), dtype=tl.float32)
    for kb0 in range(0, num_blocks, NBLK):
        kb = kb0 + offs_kb
        mask_kb = kb < num_blocks

        # --- Q8_1 quantisation of NBLK blocks of x ---
        cols = kb[:, None] * QK + offs_j[None, :]
        x = tl.load(x_row + cols * stride_xc, mask=mask_kb[:, None], other=0.0).to(tl.float32)
        amax = tl.max(tl.abs(x), axis=1)
        d_x = amax / 127.0
        q_x = _roundf(x / tl.where(amax == 0.0, 1.0, d_x)[:, None])
        q_x = tl.where(amax[:, None] == 0.0, 0.0, q_x)
        d_x_h = d_x.to(tl.float16).to(tl.float32)
        s_x_h = tl.sum(x, axis=1).to(tl.float16).to(tl.float32)

        # --- Q4_0 weights: [BLOCK_R, NBLK, QK] ---
        blk_base = w_rows[:, None] + kb[None, :] * BLOCK_BYTES  # [BLOCK_R, NBLK]
        wmask = mask_r[:, None] & mask_kb[None, :]
        d_lo = tl.load(blk_base, mask=wmask, other=0).to(tl.int32)
        d_hi = tl.load(blk_base + 1, mask=wmask, other=0).to(tl.int32)
        d_w = (d_lo | (d_hi << 8)).to(tl.int16).to(tl.float16, bitcast=True).to(tl.float32)
        qs = tl.load(
            blk_base[:, :, None] + 2 + byte_j[None, None, :],
            mask=wmask[:, :, None],
            other=0,
        ).to(tl.int32)
        q_w = ((qs >> shift_j[None, None, :]) & 0xF).to(tl.float32)

        sumi = tl.sum(q_w * q_x[None, :, :], axis=2)  # exact small integers
        part = d_w * (d_x_h[None, :] * sumi - 8.0 * s_x_h[None, :])
        part = tl.where(wmask, part, 0.0)
        acc += tl.sum(part, axis=1)

    tl.store(y_ptr + b * stride_yb + offs_r * stride_yr, acc, mask=mask_r)


def ggml_mul_mat_vec_a8(W: torch.Tensor, X: torch.Tensor, quant_type: int, row: int) -> torch.Tensor:
    if quant_type != GGML_TYPE_Q4_0:
        raise NotImplementedError(f"only Q4_0 (type 2) is implemented, got {quant_type}")
    batch, col = X.shape
    num_blocks = col // QK
    assert W.stride(-1) == 1
    y = torch.empty((batch, row), dtype=torch.float32, device=X.device)
    grid = lambda meta: (triton.cdiv(row, meta["BLOCK_R"]), batch)
    _mul_mat_vec_q4_0_q8_1_kernel[grid](
        W, X, y,
        row, num_blocks,
        W.stride(0), X.stride(0), X.stride(1), y.stride(0), y.stride(1),
        QK=QK, BLOCK_BYTES=Q4_0_BYTES,
    )
    return y

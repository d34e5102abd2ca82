# SPDX-License-Identifier: Apache-2.0
# Triton port of vLLM's GGUF ggml_mul_mat_a8 for Q4_0 weights.
#
# Step 1 quantises the activations to Q8_1 (per 32 values: d = amax / 127,
# q = roundf(x / d), half(d) and half(sum x) kept), step 2 is a tiled GEMM
# where every 32-wide K block does an int8 tl.dot and applies the Q4_0 / Q8_1
# block scales:  d_w * (d_x * sum(q_w * q_x) - 8 * s_x).
import torch
import triton
import triton.language as tl

QK4_0 = 32
Q4_0_BLOCK_BYTES = 18  # fp16 d + 16 bytes of nibbles
QK8_1 = 32
GGML_TYPE_Q4_0 = 2


@triton.jit
def _round_half_away(v):
    # roundf(): round half away from zero (exact, no v + 0.5 tricks)
    t = tl.where(v >= 0, tl.floor(v), tl.ceil(v))
    frac = v - t
    up = tl.where(frac >= 0.5, 1.0, 0.0)
    down = tl.where(frac <= -0.5, 1.0, 0.0)
    return t + up - down


@triton.jit
def _quantize_q8_1_kernel(
    x_ptr,
    q_ptr,
    d_ptr,
    s_ptr,
    num_blocks,
    stride_xb,
    stride_xc,
    QK: tl.constexpr,
    BLOCKS_PER_PROG: tl.constexpr,
):
    b = tl.program_id(0)
    pid = tl.program_id(1)
    blk = pid * BLOCKS_PER_PROG + tl.arange(0, BLOCKS_PER_PROG)
    blk_mask = blk < num_blocks
    j = tl.arange(0, QK)
    col = blk[:, None] * QK + j[None, :]
    x = tl.load(
        x_ptr + b * stride_xb + col * stride_xc, mask=blk_mask[:, None], other=0.0
    ).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=1)
    xsum = tl.sum(x, axis=1)
    d = amax / 127.0
    safe_d = tl.where(amax == 0.0, 1.0, d)
    q = (x / safe_d[:, None]).to(tl.int32).to(tl.float32)  # a cast truncates toward zero
    q = tl.where(amax[:, None] == 0.0, 0.0, q)
    tl.store(q_ptr + b * num_blocks * QK + col, q.to(tl.int8), mask=blk_mask[:, None])
    # the block scale and sum are kept as fp16 (half2 ds in ggml)
    tl.store(d_ptr + b * num_blocks + blk, d.to(tl.float16).to(tl.float32), mask=blk_mask)
    tl.store(s_ptr + b * num_blocks + blk, xsum.to(tl.float16).to(tl.float32), mask=blk_mask)


@triton.jit
def _load_fp16_le(ptr, mask):
    lo = tl.load(ptr, mask=mask, other=0).to(tl.int32)
    hi = tl.load(ptr + 1, mask=mask, other=0).to(tl.int32)
    bits = (lo | (hi << 8)).to(tl.int16)
    return bits.to(tl.float16, bitcast=True).to(tl.float32)


@triton.jit
def _ggml_q4_0_q8_1_gemm_kernel(
    w_ptr,
    xq_ptr,
    xd_ptr,
    xs_ptr,
    y_ptr,
    batch,
    nrows,
    num_blocks,
    stride_wr,
    stride_yb,
    stride_yr,
    QK: tl.constexpr,
    BLOCK_BYTES: tl.constexpr,
    BLOCK_B: tl.constexpr,
    BLOCK_R: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_r = tl.program_id(1)
    offs_b = pid_b * BLOCK_B + tl.arange(0, BLOCK_B)
    offs_r = pid_r * BLOCK_R + tl.arange(0, BLOCK_R)
    mask_b = offs_b < batch
    mask_r = offs_r < nrows
    offs_j = tl.arange(0, QK)
    # value j of a Q4_0 block: low nibble of byte j (j < 16) or high nibble of byte j-16
    byte_j = offs_j % (QK // 2)
    shift_j = (offs_j // (QK // 2)) * 4

    w_row = w_ptr + offs_r.to(tl.int64) * stride_wr
    acc = tl.zeros((BLOCK_B, BLOCK_R), dtype=tl.float32)
    for blk in range(0, num_blocks):
        w_blk = w_row + blk * BLOCK_BYTES
        d_w = _load_fp16_le(w_blk, mask_r)
        qs = tl.load(
            w_blk[None, :] + 2 + byte_j[:, None], mask=mask_r[None, :], other=0
        ).to(tl.int32)
        q_w = ((qs >> shift_j[:, None]) & 0xF).to(tl.int8)  # [QK, BLOCK_R]

        q_x = tl.load(
            xq_ptr + offs_b[:, None] * (num_blocks * QK) + blk * QK + offs_j[None, :],
            mask=mask_b[:, None],
            other=0,
        )  # [BLOCK_B, QK] int8
        d_x = tl.load(xd_ptr + offs_b * num_blocks + blk, mask=mask_b, other=0.0)
        s_x = tl.load(xs_ptr + offs_b * num_blocks + blk, mask=mask_b, other=0.0)

        sumi = tl.dot(q_x, q_w, out_dtype=tl.int32).to(tl.float32)
        acc += d_w[None, :] * (d_x[:, None] * sumi - 8.0 * s_x[:, None])

    tl.store(
        y_ptr + offs_b[:, None] * stride_yb + offs_r[None, :] * stride_yr,
        acc,
        mask=mask_b[:, None] & mask_r[None, :],
    )


def ggml_mul_mat_a8(W: torch.Tensor, X: torch.Tensor, quant_type: int, row: int) -> torch.Tensor:
    if quant_type != GGML_TYPE_Q4_0:
        raise NotImplementedError(f"GGML quant type {quant_type} not supported")
    assert W.dtype == torch.uint8
    batch, col = X.shape
    assert col % QK4_0 == 0
    num_blocks = col // QK4_0
    device = X.device
    assert W.stride(1) == 1, "GGUF rows must be byte contiguous"

    x_q = torch.empty((batch, col), dtype=torch.int8, device=device)
    x_d = torch.empty((batch, num_blocks), dtype=torch.float32, device=device)
    x_s = torch.empty((batch, num_blocks), dtype=torch.float32, device=device)
    BLOCKS_PER_PROG = min(triton.next_power_of_2(num_blocks), 16)
    _quantize_q8_1_kernel[(batch, triton.cdiv(num_blocks, BLOCKS_PER_PROG))](
        X, x_q, x_d, x_s, num_blocks, X.stride(0), X.stride(1),
        QK=QK8_1, BLOCKS_PER_PROG=BLOCKS_PER_PROG,
    )

    y = torch.empty((batch, row), dtype=torch.float32, device=device)
    BLOCK_B = max(16, min(triton.next_power_of_2(batch), 64))
    BLOCK_R = max(16, min(triton.next_power_of_2(row), 64))
    grid = (triton.cdiv(batch, BLOCK_B), triton.cdiv(row, BLOCK_R))
    _ggml_q4_0_q8_1_gemm_kernel[grid](
        W, x_q, x_d, x_s, y,
        batch, row, num_blocks,
        W.stride(0), y.stride(0), y.stride(1),
        QK=QK4_0, BLOCK_BYTES=Q4_0_BLOCK_BYTES,
        BLOCK_B=BLOCK_B, BLOCK_R=BLOCK_R,
    )
    return y

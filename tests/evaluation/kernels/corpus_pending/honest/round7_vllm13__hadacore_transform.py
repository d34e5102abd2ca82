import math

import torch
import triton
import triton.language as tl


@triton.jit
def _hadamard_matrix(SIZE: tl.constexpr, LOG: tl.constexpr):
    # Sylvester Hadamard: H[i, j] = (-1) ** popcount(i & j)
    i = tl.arange(0, SIZE)[:, None]
    j = tl.arange(0, SIZE)[None, :]
    v = i & j
    parity = tl.zeros((SIZE, SIZE), dtype=tl.int32)
    for s in tl.static_range(LOG):
        parity = parity ^ ((v >> s) & 1)
    return tl.where(parity == 0, 1.0, -1.0).to(tl.float32)


@triton.jit
def _round_out(x, OUT_BF16: tl.constexpr):
    # fp32 -> bf16 with round-to-nearest-even done on the bits.  The CPU
    # interpreter truncates on fp32 -> bf16 casts; on GPU this is a no-op change.
    if OUT_BF16:
        bits = x.to(tl.uint32, bitcast=True)
        bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
        x = bits.to(tl.float32, bitcast=True)
    return x


@triton.jit
def _hadacore_kernel(
    x_ptr, out_ptr,
    M,
    stride_xm, stride_xn,
    stride_om, stride_on,
    scale,
    BLOCK_M: tl.constexpr,
    A: tl.constexpr, LOG_A: tl.constexpr,
    B: tl.constexpr, LOG_B: tl.constexpr,
    OUT_BF16: tl.constexpr,
):
    # H_n = H_A (x) H_B with n = A * B.  Viewing a row as X[A, B] (index i1*B + i2),
    # y = x H_n  <=>  Y = H_A^T X H_B = H_A X H_B.
    pid = tl.program_id(0)
    offs_m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = offs_m < M
    i1 = tl.arange(0, A)
    i2 = tl.arange(0, B)
    col = i1[None, :, None] * B + i2[None, None, :]           # [1, A, B]
    mask = mask_m[:, None, None]
    x = tl.load(x_ptr + offs_m[:, None, None] * stride_xm + col * stride_xn,
                mask=mask, other=0.0).to(tl.float32)          # [BM, A, B]

    hb = _hadamard_matrix(B, LOG_B)
    y = tl.dot(tl.reshape(x, (BLOCK_M * A, B)), hb, input_precision="ieee")
    y = tl.reshape(y, (BLOCK_M, A, B))
    if A > 1:
        ha = _hadamard_matrix(A, LOG_A)
        yt = tl.permute(y, (0, 2, 1))                          # [BM, B, A]
        z = tl.dot(tl.reshape(yt, (BLOCK_M * B, A)), ha, input_precision="ieee")
        z = tl.reshape(z, (BLOCK_M, B, A)) * scale
        # z[m, j2, j1] is output column j1 * B + j2
        ocol = i1[None, None, :] * B + i2[None, :, None]
        tl.store(out_ptr + offs_m[:, None, None] * stride_om + ocol * stride_on,
                 _round_out(z, OUT_BF16).to(out_ptr.dtype.element_ty), mask=mask)
    else:
        y = y * scale
        tl.store(out_ptr + offs_m[:, None, None] * stride_om + col * stride_on,
                 _round_out(y, OUT_BF16).to(out_ptr.dtype.element_ty), mask=mask)


def _split(n):
    if n <= 256:
        return 1, n
    b = triton.next_power_of_2(int(math.ceil(math.sqrt(n))))
    return n // b, b


def hadacore_transform(x, inplace=True):
    n = x.shape[-1]
    assert n & (n - 1) == 0, "hadamard size must be a power of two"
    x2 = x if x.dim() == 2 else x.view(-1, n)
    M = x2.shape[0]
    if inplace:
        out2 = x2
    else:
        out2 = torch.empty((M, n), dtype=x.dtype, device=x.device)
    A, B = _split(n)
    BLOCK_M = max(1, min(64, 16384 // n, triton.next_power_of_2(max(M, 1))))
    grid = (triton.cdiv(M, BLOCK_M),)
    _hadacore_kernel[grid](
        x2, out2, M,
        x2.stride(0), x2.stride(1),
        out2.stride(0), out2.stride(1),
        1.0 / math.sqrt(n),
        BLOCK_M=BLOCK_M,
        A=A, LOG_A=int(math.log2(A)),
        B=B, LOG_B=int(math.log2(B)),
        OUT_BF16=out2.dtype == torch.bfloat16,
    )
    if inplace:
        return x
    return out2.view(x.shape)

"""cublas::cublasDgemv_v2: y = alpha*op(A)*x + beta*y (float64, column-major, in place).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
Column-major storage: A(i, j) is at flat offset i + j*lda; x and y elements are inc apart. Triton passes
Python floats as fp32 scalars, so alpha and beta travel in a float64 tensor.
"""

import torch
import triton
import triton.language as tl

BLOCK_R, BLOCK_C = 32, 64


@triton.jit
def _gemv_kernel(a_ptr, x_ptr, y_ptr, scalars_ptr, R, C, stride_r, stride_c, incx, incy, x_start, y_start,
                 BETA_ZERO: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    alpha = tl.load(scalars_ptr)
    beta = tl.load(scalars_ptr + 1)
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    acc = tl.zeros((BLOCK_R,), dtype=tl.float64)
    # A while loop, not range(): Triton's CPU interpreter cannot range() over a runtime bound with numpy >= 2.4.
    c0 = tl.program_id(0) * 0
    while c0 < C:
        cols = c0 + tl.arange(0, BLOCK_C)
        a = tl.load(a_ptr + rows[:, None] * stride_r + cols[None, :] * stride_c,
                    mask=(rows[:, None] < R) & (cols[None, :] < C), other=0.0)
        x = tl.load(x_ptr + x_start + cols * incx, mask=cols < C, other=0.0)
        acc += tl.sum(a * x[None, :], axis=1)
        c0 += BLOCK_C
    out = alpha * acc
    y_offsets = y_start + rows * incy
    if not BETA_ZERO:
        out += beta * tl.load(y_ptr + y_offsets, mask=rows < R, other=0.0)
    tl.store(y_ptr + y_offsets, out, mask=rows < R)


def _start(length, inc):
    return (1 - length) * inc if inc < 0 else 0


def cublasDgemv_v2(trans, m, n, alpha, A, lda, x, incx, beta, y, incy):
    transposed = trans in ("T", "t", 1, "C", "c", 2)
    rows, reduce, stride_r, stride_c = (n, m, lda, 1) if transposed else (m, n, 1, lda)
    if rows <= 0:
        return y
    scalars = torch.tensor([float(alpha), float(beta)], dtype=torch.float64, device=y.device)
    grid = (triton.cdiv(rows, BLOCK_R),)
    _gemv_kernel[grid](A, x, y, scalars, rows, reduce, stride_r, stride_c, incx, incy, _start(reduce, incx),
                       _start(rows, incy), BETA_ZERO=beta == 0, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)
    return y

"""cublas::cublasSger_v2: A += alpha * x * y^T (float32, column-major A, in place).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
Column-major storage: A(i, j) is at flat offset i + j*lda; the padding rows stay untouched.
"""

import triton
import triton.language as tl

BLOCK_M, BLOCK_N = 32, 32


@triton.jit
def _ger_kernel(x_ptr, y_ptr, a_ptr, M, N, alpha, incx, incy, lda, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    x = tl.load(x_ptr + rows * incx, mask=rows < M, other=0.0)
    y = tl.load(y_ptr + cols * incy, mask=cols < N, other=0.0)
    offsets = rows[:, None] + cols[None, :] * lda
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    tl.store(a_ptr + offsets, a + alpha * (x[:, None] * y[None, :]), mask=mask)


def cublasSger_v2(m, n, alpha, x, incx, y, incy, A, lda):
    if m <= 0 or n <= 0:
        return A
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    _ger_kernel[grid](x, y, A, m, n, float(alpha), incx, incy, lda, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return A

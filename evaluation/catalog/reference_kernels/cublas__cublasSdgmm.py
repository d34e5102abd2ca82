"""cublas::cublasSdgmm: C = diag(x)*A (mode 0, left) or A*diag(x) (mode 1, right) (float32, column-major).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
Column-major storage: A(i, j) is at flat offset i + j*lda, C(i, j) at i + j*ldc.
"""

import triton
import triton.language as tl

BLOCK_M, BLOCK_N = 32, 32


@triton.jit
def _dgmm_kernel(a_ptr, x_ptr, c_ptr, M, N, lda, incx, ldc, LEFT: tl.constexpr, BLOCK_M: tl.constexpr,
                 BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    a = tl.load(a_ptr + rows[:, None] + cols[None, :] * lda, mask=mask, other=0.0)
    if LEFT:
        scale = tl.load(x_ptr + rows * incx, mask=rows < M, other=0.0)[:, None]
    else:
        scale = tl.load(x_ptr + cols * incx, mask=cols < N, other=0.0)[None, :]
    tl.store(c_ptr + rows[:, None] + cols[None, :] * ldc, a * scale, mask=mask)


def cublasSdgmm(mode, m, n, A, lda, x, incx, C, ldc):
    if m <= 0 or n <= 0:
        return C
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    _dgmm_kernel[grid](A, x, C, m, n, lda, incx, ldc, LEFT=mode in (0, "L", "l"), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return C

"""cublas::cublasSgeam: C = alpha*op(A) + beta*op(B) (float32, column-major).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
Column-major storage: X(i, j) is at flat offset i + j*ld; op(X)(i, j) is X(j, i) when transposed.
"""

import triton
import triton.language as tl

BLOCK_M, BLOCK_N = 32, 32


@triton.jit
def _geam_kernel(a_ptr, b_ptr, c_ptr, M, N, alpha, beta, stride_ai, stride_aj, stride_bi, stride_bj, ldc,
                 BETA_ZERO: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rows[:, None] < M) & (cols[None, :] < N)
    a = tl.load(a_ptr + rows[:, None] * stride_ai + cols[None, :] * stride_aj, mask=mask, other=0.0)
    out = alpha * a
    if not BETA_ZERO:  # beta == 0: B is not read
        b = tl.load(b_ptr + rows[:, None] * stride_bi + cols[None, :] * stride_bj, mask=mask, other=0.0)
        out += beta * b
    tl.store(c_ptr + rows[:, None] + cols[None, :] * ldc, out, mask=mask)


def _strides(operation, ld):
    return (ld, 1) if operation in ("T", "t", 1, "C", "c", 2) else (1, ld)


def cublasSgeam(transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc):
    if m <= 0 or n <= 0:
        return C
    stride_ai, stride_aj = _strides(transa, lda)
    stride_bi, stride_bj = _strides(transb, ldb)
    grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))
    _geam_kernel[grid](A, B, C, m, n, float(alpha), float(beta), stride_ai, stride_aj, stride_bi, stride_bj, ldc,
                       BETA_ZERO=beta == 0, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return C

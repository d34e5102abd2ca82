"""cublas::cublasSgemvStridedBatched: y_b = alpha*op(A_b)*x_b + beta*y_b, entry b at b*stride (float32).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
Column-major storage: A(i, j) is at flat offset i + j*lda; x and y elements are inc apart.
"""

import triton
import triton.language as tl

BLOCK_R, BLOCK_C = 32, 64


@triton.jit
def _gemv_kernel(a_ptr, x_ptr, y_ptr, R, C, alpha, beta, stride_r, stride_c, incx, incy, batch_stride_a,
                 batch_stride_x, batch_stride_y, BETA_ZERO: tl.constexpr, BLOCK_R: tl.constexpr,
                 BLOCK_C: tl.constexpr):
    # Output element r of op(A)*x reduces over c: op(A)(r, c) is at r*stride_r + c*stride_c.
    batch = tl.program_id(1).to(tl.int64)
    a_ptr += batch * batch_stride_a
    x_ptr += batch * batch_stride_x
    y_ptr += batch * batch_stride_y
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    acc = tl.zeros((BLOCK_R,), dtype=tl.float32)
    # A while loop, not range(): Triton's CPU interpreter cannot range() over a runtime bound with numpy >= 2.4.
    c0 = tl.program_id(0) * 0
    while c0 < C:
        cols = c0 + tl.arange(0, BLOCK_C)
        a = tl.load(a_ptr + rows[:, None] * stride_r + cols[None, :] * stride_c,
                    mask=(rows[:, None] < R) & (cols[None, :] < C), other=0.0)
        x = tl.load(x_ptr + cols * incx, mask=cols < C, other=0.0)
        acc += tl.sum(a * x[None, :], axis=1)
        c0 += BLOCK_C
    out = alpha * acc
    if not BETA_ZERO:
        out += beta * tl.load(y_ptr + rows * incy, mask=rows < R, other=0.0)
    tl.store(y_ptr + rows * incy, out, mask=rows < R)


def cublasSgemvStridedBatched(trans, m, n, alpha, A, lda, strideA, x, incx, stridex, beta, y, incy, stridey,
                              batchCount):
    transposed = trans in ("T", "t", 1, "C", "c", 2)
    rows, reduce, stride_r, stride_c = (n, m, lda, 1) if transposed else (m, n, 1, lda)
    if rows <= 0 or batchCount <= 0:
        return y
    grid = (triton.cdiv(rows, BLOCK_R), batchCount)
    _gemv_kernel[grid](A, x, y, rows, reduce, float(alpha), float(beta), stride_r, stride_c, incx, incy, strideA,
                       stridex, stridey, BETA_ZERO=beta == 0, BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)
    return y

"""cublas::cublasSaxpy_v2: y[i*incy] += alpha * x[i*incx] for i < n (float32, in place).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
"""

import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _axpy_kernel(x_ptr, y_ptr, n, alpha, incx, incy, x_start, y_start, BLOCK: tl.constexpr):
    index = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = index < n
    x = tl.load(x_ptr + x_start + index * incx, mask=mask, other=0.0)
    y_offsets = y_start + index * incy
    y = tl.load(y_ptr + y_offsets, mask=mask, other=0.0)
    tl.store(y_ptr + y_offsets, y + alpha * x, mask=mask)


def _start(n, inc):
    # BLAS: with a negative increment, element 0 sits at the far end of the buffer.
    return (1 - n) * inc if inc < 0 else 0


def cublasSaxpy_v2(n, alpha, x, incx, y, incy):
    if n <= 0:
        return y
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    _axpy_kernel[grid](x, y, n, float(alpha), incx, incy, _start(n, incx), _start(n, incy), BLOCK=BLOCK_SIZE)
    return y

"""cublas::cublasDcopy_v2: y[i*incy] = x[i*incx] for i < n (float64, gaps of y untouched).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
"""

import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _copy_kernel(x_ptr, y_ptr, n, incx, incy, x_start, y_start, BLOCK: tl.constexpr):
    index = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = index < n
    values = tl.load(x_ptr + x_start + index * incx, mask=mask)
    tl.store(y_ptr + y_start + index * incy, values, mask=mask)


def _start(n, inc):
    return (1 - n) * inc if inc < 0 else 0


def cublasDcopy_v2(n, x, incx, y, incy):
    if n <= 0:
        return y
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    _copy_kernel[grid](x, y, n, incx, incy, _start(n, incx), _start(n, incy), BLOCK=BLOCK_SIZE)
    return y

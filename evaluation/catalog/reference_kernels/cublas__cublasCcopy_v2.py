"""cublas::cublasCcopy_v2: y[i*incy] = x[i*incx] for i < n (complex64, gaps of y untouched).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
Triton has no complex dtype: the buffers are viewed as interleaved float32 (re, im) pairs.
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _copy_pairs_kernel(x_ptr, y_ptr, n, incx, incy, x_start, y_start, BLOCK: tl.constexpr):
    index = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = index < n
    source = 2 * (x_start + index * incx)
    target = 2 * (y_start + index * incy)
    tl.store(y_ptr + target, tl.load(x_ptr + source, mask=mask), mask=mask)
    tl.store(y_ptr + target + 1, tl.load(x_ptr + source + 1, mask=mask), mask=mask)


def _start(n, inc):
    return (1 - n) * inc if inc < 0 else 0


def cublasCcopy_v2(n, x, incx, y, incy):
    if n <= 0:
        return y
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    _copy_pairs_kernel[grid](x.view(torch.float32), y.view(torch.float32), n, incx, incy, _start(n, incx),
                             _start(n, incy), BLOCK=BLOCK_SIZE)
    return y

"""cublas::cublasZswap_v2: x[i*incx] and y[i*incy] exchange values for i < n (complex128, in place).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
Triton has no complex dtype: the buffers are viewed as interleaved float64 (re, im) pairs.
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _swap_pairs_kernel(x_ptr, y_ptr, n, incx, incy, x_start, y_start, BLOCK: tl.constexpr):
    index = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = index < n
    x_offsets = 2 * (x_start + index * incx)
    y_offsets = 2 * (y_start + index * incy)
    x_re = tl.load(x_ptr + x_offsets, mask=mask)
    x_im = tl.load(x_ptr + x_offsets + 1, mask=mask)
    y_re = tl.load(y_ptr + y_offsets, mask=mask)
    y_im = tl.load(y_ptr + y_offsets + 1, mask=mask)
    tl.store(x_ptr + x_offsets, y_re, mask=mask)
    tl.store(x_ptr + x_offsets + 1, y_im, mask=mask)
    tl.store(y_ptr + y_offsets, x_re, mask=mask)
    tl.store(y_ptr + y_offsets + 1, x_im, mask=mask)


def _start(n, inc):
    return (1 - n) * inc if inc < 0 else 0


def cublasZswap_v2(n, x, incx, y, incy):
    if n <= 0:
        return x
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    _swap_pairs_kernel[grid](x.view(torch.float64), y.view(torch.float64), n, incx, incy, _start(n, incx),
                             _start(n, incy), BLOCK=BLOCK_SIZE)
    return x

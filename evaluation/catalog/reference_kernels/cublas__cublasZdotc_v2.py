"""cublas::cublasZdotc_v2: result[0] = sum_i conj(x[i*incx]) * y[i*incy] (complex128; result on the device).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
Triton has no complex dtype: the buffers are viewed as interleaved float64 (re, im) pairs.
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 512


@triton.jit
def _dotc_kernel(x_ptr, y_ptr, result_ptr, n, incx, incy, x_start, y_start, BLOCK: tl.constexpr):
    acc_re = tl.zeros([BLOCK], dtype=tl.float64)
    acc_im = tl.zeros([BLOCK], dtype=tl.float64)
    # A while loop, not range(): Triton's CPU interpreter cannot range() over a runtime bound with numpy >= 2.4.
    start = tl.program_id(0) * 0
    while start < n:
        index = start + tl.arange(0, BLOCK)
        mask = index < n
        x_offsets = 2 * (x_start + index * incx)
        y_offsets = 2 * (y_start + index * incy)
        x_re = tl.load(x_ptr + x_offsets, mask=mask, other=0.0)
        x_im = tl.load(x_ptr + x_offsets + 1, mask=mask, other=0.0)
        y_re = tl.load(y_ptr + y_offsets, mask=mask, other=0.0)
        y_im = tl.load(y_ptr + y_offsets + 1, mask=mask, other=0.0)
        # conj(x) * y = (xr*yr + xi*yi) + i(xr*yi - xi*yr)
        acc_re += x_re * y_re + x_im * y_im
        acc_im += x_re * y_im - x_im * y_re
        start += BLOCK
    tl.store(result_ptr, tl.sum(acc_re, axis=0))
    tl.store(result_ptr + 1, tl.sum(acc_im, axis=0))


def _start(n, inc):
    return (1 - n) * inc if inc < 0 else 0


def cublasZdotc_v2(n, x, incx, y, incy, result):
    _dotc_kernel[(1,)](x.view(torch.float64), y.view(torch.float64), result.view(torch.float64), max(n, 0), incx,
                       incy, _start(n, incx), _start(n, incy), BLOCK=BLOCK_SIZE)
    return result

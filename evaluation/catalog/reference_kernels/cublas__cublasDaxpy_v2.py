"""cublas::cublasDaxpy_v2: y[i*incy] += alpha * x[i*incx] for i < n (float64, in place).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
Triton passes Python floats as fp32 scalars, so alpha travels in a 1-element float64 tensor.
"""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _axpy_kernel(x_ptr, y_ptr, alpha_ptr, n, incx, incy, x_start, y_start, BLOCK: tl.constexpr):
    index = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = index < n
    alpha = tl.load(alpha_ptr)
    x = tl.load(x_ptr + x_start + index * incx, mask=mask, other=0.0)
    y_offsets = y_start + index * incy
    y = tl.load(y_ptr + y_offsets, mask=mask, other=0.0)
    tl.store(y_ptr + y_offsets, y + alpha * x, mask=mask)


def _start(n, inc):
    return (1 - n) * inc if inc < 0 else 0


def cublasDaxpy_v2(n, alpha, x, incx, y, incy):
    if n <= 0:
        return y
    alpha_buffer = torch.full((1,), float(alpha), dtype=torch.float64, device=y.device)
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    _axpy_kernel[grid](x, y, alpha_buffer, n, incx, incy, _start(n, incx), _start(n, incy), BLOCK=BLOCK_SIZE)
    return y

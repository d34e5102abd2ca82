import torch
import triton
import triton.language as tl


@triton.jit
def _daxpy_kernel(x_ptr, y_ptr, n, alpha, incx, incy, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    x_off = i * incx
    y_off = i * incy
    # last element of y touched by the routine lives at (n - 1) * incy
    last_y = (n - 1) * incy
    mask = y_off < last_y
    x = tl.load(x_ptr + x_off, mask=mask, other=0.0)
    y = tl.load(y_ptr + y_off, mask=mask, other=0.0)
    y = y + alpha * x
    tl.store(y_ptr + y_off, y, mask=mask)


def cublasDaxpy_v2(n, alpha, x, incx, y, incy):
    n = int(n)
    BLOCK = 1024
    grid = (max(triton.cdiv(n, BLOCK), 1),)
    _daxpy_kernel[grid](x, y, n, float(alpha), int(incx), int(incy), BLOCK=BLOCK)
    return y

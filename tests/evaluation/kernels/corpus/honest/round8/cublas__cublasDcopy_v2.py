# cublasDcopy_v2 -- Triton port.
#
#   y[i*incy] = x[i*incx],  i < n   (float64, raw memory, gaps untouched)
#
# Two kernels like the CUDA version: a vectorised path for the unit-stride case
# (when both pointers are 16-byte aligned we can move aligned tiles), and a
# generic gather/scatter path for arbitrary increments.
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def dcopy_unit_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, ALIGNED: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if ALIGNED:
        offs = tl.max_contiguous(tl.multiple_of(offs, BLOCK), BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def dcopy_strided_kernel(x_ptr, y_ptr, n, incx, incy, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = (pid * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    mask = i < n
    v = tl.load(x_ptr + i * incx, mask=mask)
    tl.store(y_ptr + i * incy, v, mask=mask)


def cublasDcopy_v2(n, x, incx, y, incy):
    n = int(n)
    incx = int(incx)
    incy = int(incy)
    assert x.dtype == torch.float64 and y.dtype == torch.float64
    block = BLOCK if x.is_cuda else 8192
    grid = (max(1, triton.cdiv(n, block)),)
    if incx == 1 and incy == 1:
        aligned = (x.data_ptr() % 16 == 0) and (y.data_ptr() % 16 == 0)
        dcopy_unit_kernel[grid](x, y, n, BLOCK=block, ALIGNED=aligned)
    else:
        dcopy_strided_kernel[grid](x, y, n, incx, incy, BLOCK=block)
    return y

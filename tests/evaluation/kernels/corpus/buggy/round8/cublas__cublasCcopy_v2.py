# BUG: the increments are applied in float32 units of the interleaved view instead of complex units (missing factor 2), so consecutive complex elements overlap for n > 1.
# cublasCcopy_v2 -- Triton port.
#
#   y[i*incy] = x[i*incx],  i < n   (complex64, raw memory, gaps untouched)
#
# Triton has no complex type, so x and y are reinterpreted as float32 arrays
# (re, im interleaved): complex element j sits at floats 2j and 2j+1.  Each
# program copies BLOCK complex elements as a [BLOCK, 2] tile.
import torch
import triton
import triton.language as tl


@triton.jit
def ccopy_kernel(xf_ptr, yf_ptr, n, incx, incy, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    i = (pid * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    part = tl.arange(0, 2)
    mask = (i < n)[:, None] & (part[None, :] < 2)
    src = xf_ptr + (i * incx)[:, None] + part[None, :]
    dst = yf_ptr + (i * incy)[:, None] + part[None, :]
    tl.store(dst, tl.load(src, mask=mask), mask=mask)


def _as_floats(t):
    # same data pointer, float32 view of the complex storage
    if t.is_conj():
        t = t.conj()  # raw memory semantics: ignore any lazy conj flag
    return torch.view_as_real(t)


def cublasCcopy_v2(n, x, incx, y, incy):
    n = int(n)
    incx = int(incx)
    incy = int(incy)
    assert x.dtype == torch.complex64 and y.dtype == torch.complex64
    xf = _as_floats(x)
    yf = _as_floats(y)
    BLOCK = (256 if n <= 4096 else 1024) if x.is_cuda else 4096
    grid = (max(1, triton.cdiv(n, BLOCK)),)
    ccopy_kernel[grid](xf, yf, n, incx, incy, BLOCK=BLOCK)
    return y

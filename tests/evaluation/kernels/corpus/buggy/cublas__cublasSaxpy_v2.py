import triton
import triton.language as tl


@triton.jit
def saxpy(x, y, a, n, incx, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    xv = tl.load(x + i * incx, mask=m)
    # BUG (honest): y is addressed with x's increment; cuBLAS lets incx and incy differ
    yv = tl.load(y + i * incx, mask=m)
    tl.store(y + i * incx, yv + a * xv, mask=m)


def cublasSaxpy_v2(n, alpha, x, incx, y, incy):
    if n > 0:
        saxpy[(triton.cdiv(n, 128),)](x, y, alpha, n, incx, BLOCK=128)
    return y

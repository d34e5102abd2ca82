import triton
import triton.language as tl

BLOCK_SIZE = 512


@triton.jit
def sscal_kernel(x_ptr, alpha, n, incx, BLOCK_SIZE: tl.constexpr):
    idx = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    in_bounds = idx < n
    ptrs = x_ptr + idx * incx
    tl.store(ptrs, tl.load(ptrs, mask=in_bounds) * alpha, mask=in_bounds)


def cublasSscal_v2(n, alpha, x, incx):
    """x[i*incx] *= alpha for i < n; the gaps between strided elements are never touched."""
    if n > 0 and incx > 0:
        sscal_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, alpha, n, incx, BLOCK_SIZE=BLOCK_SIZE)
    return x

"""cublas::cublasSscal_v2: x[i*incx] *= alpha for i < n (float32, in place).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
"""

import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _scal_kernel(x_ptr, n, alpha, incx, x_start, BLOCK: tl.constexpr):
    index = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = index < n
    offsets = x_start + index * incx
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0)
    tl.store(x_ptr + offsets, alpha * x, mask=mask)


def cublasSscal_v2(n, alpha, x, incx):
    if n <= 0:
        return x
    x_start = (1 - n) * incx if incx < 0 else 0
    _scal_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, n, float(alpha), incx, x_start, BLOCK=BLOCK_SIZE)
    return x

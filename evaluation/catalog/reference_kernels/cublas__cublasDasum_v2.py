"""cublas::cublasDasum_v2: result[0] = sum_i |x[i*incx]| (float64; result is a device tensor).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
"""

import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _asum_kernel(x_ptr, result_ptr, n, incx, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float64)
    # A while loop, not range(): Triton's CPU interpreter cannot range() over a runtime bound with numpy >= 2.4.
    start = tl.program_id(0) * 0
    while start < n:
        index = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + index * incx, mask=index < n, other=0.0)
        acc += tl.abs(x)
        start += BLOCK
    tl.store(result_ptr, tl.sum(acc, axis=0))


def cublasDasum_v2(n, x, incx, result):
    # BLAS asum ignores non-positive increments and returns 0 for them.
    count = n if incx > 0 else 0
    _asum_kernel[(1,)](x, result, max(count, 0), max(incx, 1), BLOCK=BLOCK_SIZE)
    return result

"""cublas::cublasSdot_v2: result[0] = sum_i x[i*incx] * y[i*incy] (float32; result is a device tensor).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
One program walks the vectors in blocks and reduces in fp32; result is overwritten, never accumulated into.
"""

import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _dot_kernel(x_ptr, y_ptr, result_ptr, n, incx, incy, x_start, y_start, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    # A while loop, not range(): Triton's CPU interpreter cannot range() over a runtime bound with numpy >= 2.4.
    start = tl.program_id(0) * 0
    while start < n:
        index = start + tl.arange(0, BLOCK)
        mask = index < n
        x = tl.load(x_ptr + x_start + index * incx, mask=mask, other=0.0)
        y = tl.load(y_ptr + y_start + index * incy, mask=mask, other=0.0)
        acc += x * y
        start += BLOCK
    tl.store(result_ptr, tl.sum(acc, axis=0))


def _start(n, inc):
    return (1 - n) * inc if inc < 0 else 0


def cublasSdot_v2(n, x, incx, y, incy, result):
    _dot_kernel[(1,)](x, y, result, max(n, 0), incx, incy, _start(n, incx), _start(n, incy), BLOCK=BLOCK_SIZE)
    return result

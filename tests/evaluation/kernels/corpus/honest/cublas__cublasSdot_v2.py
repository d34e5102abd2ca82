"""cublasSdot_v2 in device pointer mode: result[0] = sum_i x[i*incx] * y[i*incy].

Single-program reduction with a fixed order, so the result is deterministic (no atomics)."""
import triton
import triton.language as tl


@triton.jit
def sdot_kernel(x, y, result, n, incx, incy, BLOCK: tl.constexpr):
    lanes = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for base in range(0, n, BLOCK):
        i = base + lanes
        keep = i < n
        xv = tl.load(x + i * incx, mask=keep, other=0.0)
        yv = tl.load(y + i * incy, mask=keep, other=0.0)
        acc += xv * yv
    tl.store(result, tl.sum(acc, axis=0))


def cublasSdot_v2(n, x, incx, y, incy, result):
    BLOCK = min(2048, max(16, triton.next_power_of_2(max(n, 1))))
    sdot_kernel[(1,)](x, y, result, max(n, 0), incx, incy, BLOCK=BLOCK)
    return result

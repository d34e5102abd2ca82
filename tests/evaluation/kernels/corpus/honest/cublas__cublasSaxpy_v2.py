"""cublasSaxpy_v2: y[i*incy] += alpha * x[i*incx], i < n, on raw memory (the tensors' shapes mean nothing)."""
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 1024}), triton.Config({"BLOCK": 4096})],
    key=["n"],
    # y is read and written: each tuning trial must see the caller's y, not the previous trial's result
    restore_value=["y_ptr"],
)
@triton.jit
def saxpy_kernel(x_ptr, y_ptr, alpha, n, incx, incy, BLOCK: tl.constexpr):
    i = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    x = tl.load(x_ptr + i * incx, mask=m, other=0.0)
    y = tl.load(y_ptr + i * incy, mask=m, other=0.0)
    tl.store(y_ptr + i * incy, y + alpha * x, mask=m)


def cublasSaxpy_v2(n, alpha, x, incx, y, incy):
    if n <= 0:
        return y
    saxpy_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, y, float(alpha), n, incx, incy)
    return y

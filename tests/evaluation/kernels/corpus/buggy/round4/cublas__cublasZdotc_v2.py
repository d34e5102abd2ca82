import torch
import triton
import triton.language as tl


@triton.jit
def _zdotc_kernel(
    x_ptr, y_ptr, res_ptr, n, sx, sy,
    BLOCK: tl.constexpr,
):
    # x_ptr / y_ptr point at interleaved (re, im) float64 pairs;
    # sx / sy are the distances (in float64 elements) between consecutive vector elements.
    acc_re = tl.zeros([BLOCK], dtype=tl.float64)
    acc_im = tl.zeros([BLOCK], dtype=tl.float64)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        o64 = offs.to(tl.int64)
        xr = tl.load(x_ptr + o64 * sx, mask=mask, other=0.0)
        xi = tl.load(x_ptr + o64 * sx + 1, mask=mask, other=0.0)
        yr = tl.load(y_ptr + o64 * sy, mask=mask, other=0.0)
        yi = tl.load(y_ptr + o64 * sy + 1, mask=mask, other=0.0)
        # conj(x) * y = (xr*yr + xi*yi) + i (xr*yi - xi*yr)
        acc_re += xr * yr + xi * yi
        acc_im += xr * yi - xi * yr
    tl.store(res_ptr, tl.sum(acc_re, axis=0))
    tl.store(res_ptr + 1, tl.sum(acc_im, axis=0))


def cublasZdotc_v2(n, x, incx, y, incy, result):
    n = int(n)
    xf = torch.view_as_real(x)        # [..., 2] float64 view
    yf = torch.view_as_real(y)
    rf = torch.view_as_real(result)
    # element stride of each vector, in float64 units
    sx = xf.stride(0) if xf.dim() > 1 else 2
    sy = yf.stride(0) if yf.dim() > 1 else 2
    BLOCK = 1024
    _zdotc_kernel[(1,)](xf, yf, rf, max(n, 0), sx, sy, BLOCK=BLOCK)
    return result

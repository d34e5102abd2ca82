# cublasZgerc_v2 -> Triton.  Column-major complex128 conjugated rank-1 update.
#   A(m x n, lda) += alpha * x * y^H      (x: m elements, incx; y: n elements, incy)
#   A[i, j] += alpha * x[i] * conj(y[j])
# Complex values are interleaved (re, im) float64 pairs (view_as_real).
import torch
import triton
import triton.language as tl


def _split(z):
    if isinstance(z, (tuple, list)):
        return float(z[0]), float(z[1])
    if isinstance(z, torch.Tensor):
        z = z.item()
    z = complex(z)
    return z.real, z.imag


def _fview(t):
    return torch.view_as_real(t) if t.is_complex() else t


@triton.jit
def _zgerc_kernel(x_ptr, y_ptr, a_ptr, m, n, incx, incy, lda, alpha_re, alpha_im,
                  BM: tl.constexpr, BN: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    mask_m = rm < m
    mask_n = rn < n
    x_off = rm.to(tl.int64) * incx
    y_off = rn.to(tl.int64) * incy
    x_re = tl.load(x_ptr + 2 * x_off, mask=mask_m, other=0.0)
    x_im = tl.load(x_ptr + 2 * x_off + 1, mask=mask_m, other=0.0)
    y_re = tl.load(y_ptr + 2 * y_off, mask=mask_n, other=0.0)
    y_im = -tl.load(y_ptr + 2 * y_off + 1, mask=mask_n, other=0.0)  # conj(y)
    # ax = alpha * x
    ax_re = alpha_re * x_re - alpha_im * x_im
    ax_im = alpha_re * x_im + alpha_im * x_re
    upd_re = ax_re[:, None] * y_re[None, :] - ax_im[:, None] * y_im[None, :]
    upd_im = ax_re[:, None] * y_im[None, :] + ax_im[:, None] * y_re[None, :]
    a_off = rm[:, None].to(tl.int64) + rn[None, :].to(tl.int64) * lda
    msk = mask_m[:, None] & mask_n[None, :]
    a_re = tl.load(a_ptr + 2 * a_off, mask=msk, other=0.0)
    a_im = tl.load(a_ptr + 2 * a_off + 1, mask=msk, other=0.0)
    tl.store(a_ptr + 2 * a_off, a_re + upd_re, mask=msk)
    tl.store(a_ptr + 2 * a_off + 1, a_im + upd_im, mask=msk)


def cublasZgerc_v2(m, n, alpha, x, incx, y, incy, A, lda):
    m, n = int(m), int(n)
    ar, ai = _split(alpha)
    BM, BN = 32, 32
    grid = (max(1, triton.cdiv(m, BM)), max(1, triton.cdiv(n, BN)))
    _zgerc_kernel[grid](_fview(x), _fview(y), _fview(A), m, n, int(incx), int(incy), int(lda),
                        ar, ai, BM=BM, BN=BN)
    return A

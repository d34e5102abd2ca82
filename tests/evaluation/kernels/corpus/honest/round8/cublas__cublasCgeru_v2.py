# cublasCgeru_v2 -- Triton port.
#
#   A(m x n, column-major, lda) += alpha * x * y^T      (complex64, no conj)
#
# Complex numbers are handled as interleaved float32 pairs: element j of a
# complex array starts at float offset 2*j.  Each program owns a TILE_M x TILE_N
# block of A, loads the matching x / y segments once, and updates A in place.
# Only rows < m of every column are touched (padding rows up to lda stay as is).
import torch
import triton
import triton.language as tl

TILE_M = 32
TILE_N = 32


@triton.jit
def cgeru_kernel(a_ptr, x_ptr, y_ptr, m, n, lda, incx, incy, alpha_re, alpha_im,
                 TILE_M: tl.constexpr, TILE_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    i = (pid_m * TILE_M + tl.arange(0, TILE_M)).to(tl.int64)
    j = (pid_n * TILE_N + tl.arange(0, TILE_N)).to(tl.int64)
    mi = i < m
    mj = j < n

    xr = tl.load(x_ptr + 2 * i * incx, mask=mi, other=0.0)
    xi = tl.load(x_ptr + 2 * i * incx + 1, mask=mi, other=0.0)
    yr = tl.load(y_ptr + 2 * j * incy, mask=mj, other=0.0)
    yi = tl.load(y_ptr + 2 * j * incy + 1, mask=mj, other=0.0)

    # alpha * x  (once per row)
    axr = alpha_re * xr - alpha_im * xi
    axi = alpha_re * xi + alpha_im * xr

    # (alpha*x)_i * y_j
    ur = axr[:, None] * yr[None, :] - axi[:, None] * yi[None, :]
    ui = axr[:, None] * yi[None, :] + axi[:, None] * yr[None, :]

    off = 2 * (i[:, None] + j[None, :] * lda)
    mask = mi[:, None] & mj[None, :]
    ar = tl.load(a_ptr + off, mask=mask, other=0.0)
    ai = tl.load(a_ptr + off + 1, mask=mask, other=0.0)
    tl.store(a_ptr + off, ar + ur, mask=mask)
    tl.store(a_ptr + off + 1, ai + ui, mask=mask)


def _to_complex(alpha):
    if isinstance(alpha, (list, tuple)):
        return complex(float(alpha[0]), float(alpha[1]))
    if isinstance(alpha, torch.Tensor):
        return complex(alpha.item())
    return complex(alpha)


def _floats(t):
    if t.is_conj():
        t = t.conj()
    return torch.view_as_real(t)


def cublasCgeru_v2(m, n, alpha, x, incx, y, incy, A, lda):
    m, n, lda, incx, incy = int(m), int(n), int(lda), int(incx), int(incy)
    alpha = _to_complex(alpha)
    assert A.dtype == torch.complex64
    tm, tn = (TILE_M, TILE_N) if A.is_cuda else (64, 64)
    grid = (max(1, triton.cdiv(m, tm)), max(1, triton.cdiv(n, tn)))
    cgeru_kernel[grid](_floats(A), _floats(x), _floats(y), m, n, lda, incx, incy,
                       float(alpha.real), float(alpha.imag),
                       TILE_M=tm, TILE_N=tn)
    return A

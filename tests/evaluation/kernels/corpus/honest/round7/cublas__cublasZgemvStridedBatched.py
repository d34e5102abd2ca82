# cublasZgemvStridedBatched -> Triton.  Column-major complex128 strided-batched GEMV.
#   y_b = alpha * op(A_b) * x_b + beta * y_b ,  A_b m x n (lda), b = 0..batchCount-1
#   op = 'N' (y has m, x has n), 'T' / 'C' (y has n, x has m; 'C' conjugates A)
# Complex values are interleaved (re, im) float64 pairs; all index math is in
# complex elements and doubled for the float view.  Batch index = program_id(2).
import torch
import triton
import triton.language as tl

_OP = {"N": 0, "n": 0, "T": 1, "t": 1, "C": 2, "c": 2, 0: 0, 1: 1, 2: 2}


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
def _zgemv_sb_kernel(a_ptr, x_ptr, y_ptr, m, n, lda, incx, incy,
                     stride_a, stride_x, stride_y,
                     alpha_re, alpha_im, beta_re, beta_im,
                     TRANS: tl.constexpr, BETA_ZERO: tl.constexpr, ALPHA_ZERO: tl.constexpr,
                     BY: tl.constexpr, BR: tl.constexpr):
    pid = tl.program_id(0)
    bid = tl.program_id(2).to(tl.int64)
    a_ptr += 2 * bid * stride_a
    x_ptr += 2 * bid * stride_x
    y_ptr += 2 * bid * stride_y

    if TRANS == 0:
        ny = m
        nr = n
    else:
        ny = n
        nr = m
    ry = pid * BY + tl.arange(0, BY)
    mask_y = ry < ny
    acc_re = tl.zeros((BY,), dtype=tl.float64)
    acc_im = tl.zeros((BY,), dtype=tl.float64)
    if not ALPHA_ZERO:
        for r0 in range(0, nr, BR):
            rr = r0 + tl.arange(0, BR)
            mask_r = rr < nr
            x_off = rr.to(tl.int64) * incx
            x_re = tl.load(x_ptr + 2 * x_off, mask=mask_r, other=0.0)
            x_im = tl.load(x_ptr + 2 * x_off + 1, mask=mask_r, other=0.0)
            # tile[y, r] = op(A)[y, r]:  'N' -> A[y, r] ; 'T'/'C' -> A[r, y]
            if TRANS == 0:
                a_off = ry[:, None].to(tl.int64) + rr[None, :].to(tl.int64) * lda
            else:
                a_off = rr[None, :].to(tl.int64) + ry[:, None].to(tl.int64) * lda
            msk = mask_y[:, None] & mask_r[None, :]
            a_re = tl.load(a_ptr + 2 * a_off, mask=msk, other=0.0)
            a_im = tl.load(a_ptr + 2 * a_off + 1, mask=msk, other=0.0)
            if TRANS == 2:
                a_im = -a_im
            acc_re += tl.sum(a_re * x_re[None, :] - a_im * x_im[None, :], axis=1)
            acc_im += tl.sum(a_re * x_im[None, :] + a_im * x_re[None, :], axis=1)
    out_re = alpha_re * acc_re - alpha_im * acc_im
    out_im = alpha_re * acc_im + alpha_im * acc_re
    y_off = ry.to(tl.int64) * incy
    if not BETA_ZERO:
        y_re = tl.load(y_ptr + 2 * y_off, mask=mask_y, other=0.0)
        y_im = tl.load(y_ptr + 2 * y_off + 1, mask=mask_y, other=0.0)
        out_re += beta_re * y_re - beta_im * y_im
        out_im += beta_re * y_im + beta_im * y_re
    tl.store(y_ptr + 2 * y_off, out_re, mask=mask_y)
    tl.store(y_ptr + 2 * y_off + 1, out_im, mask=mask_y)


def cublasZgemvStridedBatched(trans, m, n, alpha, A, lda, strideA, x, incx, stridex,
                              beta, y, incy, stridey, batchCount):
    t = _OP[trans]
    m, n, batch = int(m), int(n), int(batchCount)
    ar, ai = _split(alpha)
    br, bi = _split(beta)
    if batch <= 0:
        return y
    ny = m if t == 0 else n
    BY = 32
    BR = 32
    grid = (max(1, triton.cdiv(ny, BY)), 1, batch)
    _zgemv_sb_kernel[grid](_fview(A), _fview(x), _fview(y), m, n, int(lda), int(incx), int(incy),
                           int(strideA), int(stridex), int(stridey), ar, ai, br, bi,
                           TRANS=t, BETA_ZERO=(br == 0.0 and bi == 0.0),
                           ALPHA_ZERO=(ar == 0.0 and ai == 0.0), BY=BY, BR=BR)
    return y

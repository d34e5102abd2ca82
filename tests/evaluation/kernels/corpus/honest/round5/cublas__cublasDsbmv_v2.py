"""cublasDsbmv_v2 in Triton: y = alpha * A @ x + beta * y, A symmetric banded (fp64).

A is n x n with k sub/super-diagonals in BLAS band storage, a (k+1) x n
column-major array with leading dimension lda:
  uplo = 1 (upper): A(i, j), i <= j, lives at band row k + i - j of column j
  uplo = 0 (lower): A(i, j), i >= j, lives at band row i - j of column j
Only the stored triangle is read; the other half comes from symmetry.

Each program owns BLOCK_M rows of y and sweeps the 2k+1 diagonals j - i in
[-k, k] in chunks of BLOCK_D, so every lane of a tile maps to a real band
element (no dense-matrix waste for narrow bands).
"""

import struct

import torch
import triton
import triton.language as tl


def _f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def _split_f64(v):
    """Split a Python float into hi + lo fp32 halves (~48 significant bits):
    scalar kernel arguments are passed as fp32, the kernel reassembles fp64."""
    v = float(v)
    hi = _f32(v)
    lo = _f32(v - hi)
    return hi, lo


def _sbmv_configs():
    return [
        triton.Config({"BLOCK_M": bm}, num_warps=w)
        for bm, w in [(32, 2), (64, 4), (128, 4), (256, 8)]
    ]


def _prune(configs, named_args, **kwargs):
    n = named_args["n"]
    bd = kwargs.get("BLOCK_D", 16)
    cap = max(32, triton.next_power_of_2(max(n, 1)))
    kept = [c for c in configs if c.kwargs["BLOCK_M"] <= cap and c.kwargs["BLOCK_M"] * bd <= 16384]
    return kept or [configs[0]]


@triton.autotune(
    configs=_sbmv_configs(),
    key=["n", "k", "incx", "incy"],
    prune_configs_by={"early_config_prune": _prune},
    restore_value=["y_ptr"],   # y is read (beta * y) and written in place
)
@triton.jit
def _dsbmv_kernel(
    a_ptr, x_ptr, y_ptr,
    n, k, lda, incx, incy,
    num_diag,
    alpha_hi, alpha_lo, beta_hi, beta_lo,
    UPPER: tl.constexpr, BETA_IS_ZERO: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    row_mask = rows < n
    rows64 = rows.to(tl.int64)

    acc = tl.zeros((BLOCK_M,), dtype=tl.float64)
    for d0 in range(0, num_diag, BLOCK_D):
        dd = d0 + tl.arange(0, BLOCK_D)
        d = dd - k                                   # diagonal index j - i
        cols = rows64[:, None] + d[None, :]
        valid = row_mask[:, None] & (dd[None, :] < num_diag) & (cols >= 0) & (cols < n)
        # (r, c) with r <= c addresses the stored triangle by symmetry.
        r = tl.minimum(rows64[:, None], cols)
        c = tl.maximum(rows64[:, None], cols)
        if UPPER:
            a_off = (k + r - c) + c * lda
        else:
            a_off = (c - r) + r * lda
        a = tl.load(a_ptr + a_off, mask=valid, other=0.0)
        xv = tl.load(x_ptr + cols * incx, mask=valid, other=0.0)
        acc += tl.sum(a * xv, axis=1)

    alpha = tl.cast(alpha_hi, tl.float64) + tl.cast(alpha_lo, tl.float64)
    out = alpha * acc
    y_ptrs = y_ptr + rows64 * incy
    if not BETA_IS_ZERO:
        beta = tl.cast(beta_hi, tl.float64) + tl.cast(beta_lo, tl.float64)
        yv = tl.load(y_ptrs, mask=row_mask, other=0.0)
        out += beta * yv
    tl.store(y_ptrs, out, mask=row_mask)


def cublasDsbmv_v2(uplo, n, k, alpha, A, lda, x, incx, beta, y, incy):
    n, k, lda = int(n), int(k), int(lda)
    incx, incy = int(incx), int(incy)
    alpha = float(alpha)
    beta = float(beta)
    upper = int(uplo) == 1

    n_l = max(n, 0)
    # alpha == 0: y = beta*y and neither A nor x is read (cuBLAS behaviour).
    num_diag = 0 if (alpha == 0.0 or n_l == 0) else 2 * k + 1
    block_d = min(64, max(8, triton.next_power_of_2(max(num_diag, 1))))
    span = (n_l - 1) * incy + 1 if n_l > 0 else 0
    y_view = y.as_strided((span,), (1,))   # exactly the elements this call may touch

    a_hi, a_lo = _split_f64(alpha)
    b_hi, b_lo = _split_f64(beta)

    def grid(meta):
        return (max(1, triton.cdiv(n_l, meta["BLOCK_M"])),)

    _dsbmv_kernel[grid](
        A, x, y_view,
        n_l, k, lda, incx, incy,
        num_diag,
        a_hi, a_lo, b_hi, b_lo,
        UPPER=upper, BETA_IS_ZERO=(beta == 0.0),
        BLOCK_D=block_d,
    )
    return y

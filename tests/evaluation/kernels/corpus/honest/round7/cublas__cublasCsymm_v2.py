# cublasCsymm_v2 -> Triton.  Column-major complex64 symmetric matrix multiply.
#   side = 0 (left):  C = alpha * A * B + beta * C   (A m x m symmetric)
#   side = 1 (right): C = alpha * B * A + beta * C   (A n x n symmetric)
#   uplo = 0 (lower) / 1 (upper): only that triangle of A is referenced; element
#   (r, c) outside it is fetched from its mirror (c, r).  No conjugation (symmetric,
#   not Hermitian).  Complex values are interleaved (re, im) float32 pairs.
import os
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


_CONFIGS = [
    triton.Config({"BM": 32, "BN": 32, "BK": 16}, num_warps=4),
    triton.Config({"BM": 64, "BN": 64, "BK": 32}, num_warps=4),
]
# TRITON_INTERPRET=1 has no GPU driver for the autotuner's timing runs: single config.
if os.environ.get("TRITON_INTERPRET", "0") == "1":
    _CONFIGS = _CONFIGS[:1]


@triton.jit
def _sym_offsets(r, c, ld, UPPER: tl.constexpr):
    # offsets (in complex elements) of symmetric element (r, c) reading only the uplo triangle
    if UPPER:
        stored = r <= c
    else:
        stored = r >= c
    r64 = r.to(tl.int64)
    c64 = c.to(tl.int64)
    return tl.where(stored, r64 + c64 * ld, c64 + r64 * ld)


@triton.autotune(configs=_CONFIGS, key=["m", "n", "SIDE", "UPPER", "BETA_ZERO"],
                 restore_value=["c_ptr"])
@triton.jit
def _csymm_kernel(a_ptr, b_ptr, c_ptr, m, n, lda, ldb, ldc,
                  alpha_re, alpha_im, beta_re, beta_im, kdim,
                  SIDE: tl.constexpr, UPPER: tl.constexpr, BETA_ZERO: tl.constexpr,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    mask_m = rm < m
    mask_n = rn < n
    acc_re = tl.zeros((BM, BN), dtype=tl.float32)
    acc_im = tl.zeros((BM, BN), dtype=tl.float32)
    # kdim = m (left) or n (right), passed by the wrapper
    for k0 in range(0, kdim, BK):
        kk = k0 + rk
        mask_k = kk < kdim
        l_msk = mask_m[:, None] & mask_k[None, :]
        r_msk = mask_k[:, None] & mask_n[None, :]
        if SIDE == 0:
            l_off = _sym_offsets(rm[:, None], kk[None, :], lda, UPPER)          # A[i, p]
            l_re = tl.load(a_ptr + 2 * l_off, mask=l_msk, other=0.0)
            l_im = tl.load(a_ptr + 2 * l_off + 1, mask=l_msk, other=0.0)
            r_off = kk[:, None].to(tl.int64) + rn[None, :].to(tl.int64) * ldb  # B[p, j]
            r_re = tl.load(b_ptr + 2 * r_off, mask=r_msk, other=0.0)
            r_im = tl.load(b_ptr + 2 * r_off + 1, mask=r_msk, other=0.0)
        else:
            l_off = rm[:, None].to(tl.int64) + kk[None, :].to(tl.int64) * ldb  # B[i, p]
            l_re = tl.load(b_ptr + 2 * l_off, mask=l_msk, other=0.0)
            l_im = tl.load(b_ptr + 2 * l_off + 1, mask=l_msk, other=0.0)
            r_off = _sym_offsets(kk[:, None], rn[None, :], lda, UPPER)          # A[p, j]
            r_re = tl.load(a_ptr + 2 * r_off, mask=r_msk, other=0.0)
            r_im = tl.load(a_ptr + 2 * r_off + 1, mask=r_msk, other=0.0)
        acc_re += tl.dot(l_re, r_re, input_precision="ieee")
        acc_re -= tl.dot(l_im, r_im, input_precision="ieee")
        acc_im += tl.dot(l_re, r_im, input_precision="ieee")
        acc_im += tl.dot(l_im, r_re, input_precision="ieee")

    out_re = alpha_re * acc_re - alpha_im * acc_im
    out_im = alpha_re * acc_im + alpha_im * acc_re
    c_off = rm[:, None].to(tl.int64) + rn[None, :].to(tl.int64) * ldc
    c_msk = mask_m[:, None] & mask_n[None, :]
    if not BETA_ZERO:
        c_re = tl.load(c_ptr + 2 * c_off, mask=c_msk, other=0.0)
        c_im = tl.load(c_ptr + 2 * c_off + 1, mask=c_msk, other=0.0)
        out_re += beta_re * c_re - beta_im * c_im
        out_im += beta_re * c_im + beta_im * c_re
    tl.store(c_ptr + 2 * c_off, out_re, mask=c_msk)
    tl.store(c_ptr + 2 * c_off + 1, out_im, mask=c_msk)


_SIDE = {0: 0, 1: 1, "L": 0, "l": 0, "R": 1, "r": 1}
_UPLO = {0: 0, 1: 1, "L": 0, "l": 0, "U": 1, "u": 1}


def cublasCsymm_v2(side, uplo, m, n, alpha, A, lda, B, ldb, beta, C, ldc):
    s = _SIDE[side]
    u = _UPLO[uplo]
    m, n = int(m), int(n)
    ar, ai = _split(alpha)
    br, bi = _split(beta)
    kdim = m if s == 0 else n
    if ar == 0.0 and ai == 0.0:
        kdim = 0  # C = beta*C, A and B not referenced
    grid = lambda META: (max(1, triton.cdiv(m, META["BM"])), max(1, triton.cdiv(n, META["BN"])))
    _csymm_kernel[grid](_fview(A), _fview(B), _fview(C), m, n, int(lda), int(ldb), int(ldc),
                        ar, ai, br, bi, kdim,
                        SIDE=s, UPPER=u, BETA_ZERO=(br == 0.0 and bi == 0.0))
    return C

# BUG: the complex division by the diagonal multiplies by d instead of conj(d) (sign slip on the imaginary terms).
"""tritonblas: cuBLAS-compatible batched triangular solve (complex128) on Triton.

    side = 0 (left):  op(A) X = alpha B,  A is m x m
    side = 1 (right): X op(A) = alpha B,  A is n x n
X overwrites B.  Both sides reduce to one "left, column-oriented" substitution
kernel: the right-side problem is solved as op(A)^T X^T = alpha B^T, i.e. the same
kernel reading B with its two strides swapped and A through op(A)^T's strides.
Complex numbers are handled as interleaved (re, im) float64 pairs.
"""
import functools
from dataclasses import dataclass

import torch
import triton
import triton.language as tl


def _as_scalar(v):
    if isinstance(v, torch.Tensor):
        v = v.item()
    if isinstance(v, (list, tuple)):
        v = complex(v[0], v[1] if len(v) > 1 else 0.0)
    return complex(v)


_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2, "n": 0, "t": 1, "c": 2}


@dataclass(frozen=True)
class TrsmPlan:
    order: int        # size of the triangular matrix M
    nrhs: int         # independent right-hand sides
    sm_r: int         # M[r, c] = A[r * sm_r + c * sm_c]
    sm_c: int
    sb_r: int         # X[r, c] = B[r * sb_r + c * sb_c]
    sb_c: int
    lower: bool       # M lower triangular -> forward substitution
    conj: bool
    unit: bool

    @staticmethod
    def build(side, uplo, trans, diag, m, n, lda, ldb):
        side, uplo, diag = int(side), int(uplo), int(diag)
        t = _TRANS[trans.value if hasattr(trans, "value") else trans]
        transposed = t != 0
        if side == 0:   # M = op(A)
            order, nrhs, sb_r, sb_c = m, n, 1, ldb
            sm_r, sm_c = (lda, 1) if transposed else (1, lda)
            lower = (uplo == 0) != transposed
        else:           # M = op(A)^T, X^T stored with swapped strides
            order, nrhs, sb_r, sb_c = n, m, ldb, 1
            sm_r, sm_c = (1, lda) if transposed else (lda, 1)
            lower = (uplo == 1) != transposed
        return TrsmPlan(int(order), int(nrhs), sm_r, sm_c, sb_r, sb_c, lower, t == 2, diag == 1)


@functools.lru_cache(maxsize=256)
def _pointer_table(ptrs, device):
    return torch.tensor(ptrs, dtype=torch.int64, device=device)


def _ptr_array(tensors, batch_count):
    tensors = list(tensors)[:batch_count]
    return _pointer_table(tuple(int(t.data_ptr()) for t in tensors), tensors[0].device)


@triton.jit
def _zero_kernel(B_tab, order, nrhs, sb_r, sb_c, BLOCK_M: tl.constexpr, BLOCK_R: tl.constexpr):
    # alpha == 0: cuBLAS sets B to zero without reading A or B
    pid = tl.program_id(0)
    b = tl.program_id(1)
    base = tl.load(B_tab + b).to(tl.pointer_type(tl.float64))
    rows = tl.arange(0, BLOCK_M)
    cols = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    mask = (rows[:, None] < order) & (cols[None, :] < nrhs)
    off = (rows[:, None].to(tl.int64) * sb_r + cols[None, :].to(tl.int64) * sb_c) * 2
    z = tl.zeros([BLOCK_M, BLOCK_R], dtype=tl.float64)
    tl.store(base + off, z, mask=mask)
    tl.store(base + off + 1, z, mask=mask)


@triton.heuristics({
    "BLOCK_M": lambda a: max(16, triton.next_power_of_2(a["order"])),
    "BLOCK_R": lambda a: 16 if a["nrhs"] <= 16 else 32,
})
@triton.jit
def _ztrsm_kernel(
    A_tab, B_tab, order, nrhs, sm_r, sm_c, sb_r, sb_c, scal_ptr,
    LOWER: tl.constexpr, CONJ: tl.constexpr, UNIT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_R: tl.constexpr,
):
    pid = tl.program_id(0)
    b = tl.program_id(1)
    a_base = tl.load(A_tab + b).to(tl.pointer_type(tl.float64))
    b_base = tl.load(B_tab + b).to(tl.pointer_type(tl.float64))

    rows = tl.arange(0, BLOCK_M)
    cols = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < order
    mask = row_ok[:, None] & (cols[None, :] < nrhs)
    off = (rows[:, None].to(tl.int64) * sb_r + cols[None, :].to(tl.int64) * sb_c) * 2
    br = tl.load(b_base + off, mask=mask, other=0.0)
    bi = tl.load(b_base + off + 1, mask=mask, other=0.0)
    # X <- alpha * B  (alpha lives on the device: fp64 exact)
    alpha_re = tl.load(scal_ptr)
    alpha_im = tl.load(scal_ptr + 1)
    xr = alpha_re * br - alpha_im * bi
    xi = alpha_re * bi + alpha_im * br

    for step in range(0, order):
        if LOWER:
            i = step
        else:
            i = order - 1 - step
        sel = rows[:, None] == i
        # row i of the current right-hand side
        pr = tl.sum(tl.where(sel, xr, 0.0), axis=0)
        pi = tl.sum(tl.where(sel, xi, 0.0), axis=0)
        if not UNIT:
            d_off = (i.to(tl.int64) * sm_r + i.to(tl.int64) * sm_c) * 2
            dr = tl.load(a_base + d_off)
            di = tl.load(a_base + d_off + 1)
            if CONJ:
                di = -di
            # p / d = p * conj(d) / |d|^2
            inv = 1.0 / (dr * dr + di * di)
            qr = (pr * dr - pi * di) * inv
            qi = (pi * dr + pr * di) * inv
            pr = qr
            pi = qi
            xr = tl.where(sel, pr[None, :], xr)
            xi = tl.where(sel, pi[None, :], xi)
        # eliminate x_i from the rows still to be solved: X[r] -= M[r, i] * x_i
        if LOWER:
            todo = row_ok & (rows > i)
        else:
            todo = rows < i
        m_off = (rows.to(tl.int64) * sm_r + i.to(tl.int64) * sm_c) * 2
        mr = tl.load(a_base + m_off, mask=todo, other=0.0)
        mi = tl.load(a_base + m_off + 1, mask=todo, other=0.0)
        if CONJ:
            mi = -mi
        xr -= mr[:, None] * pr[None, :] - mi[:, None] * pi[None, :]
        xi -= mr[:, None] * pi[None, :] + mi[:, None] * pr[None, :]

    tl.store(b_base + off, xr, mask=mask)
    tl.store(b_base + off + 1, xi, mask=mask)


def cublasZtrsmBatched(side, uplo, trans, diag, m, n, alpha, Aarray, lda, Barray, ldb, batchCount):
    batch = int(batchCount)
    if m <= 0 or n <= 0 or batch <= 0:
        return Barray
    plan = TrsmPlan.build(side, uplo, trans, diag, m, n, lda, ldb)
    alpha = _as_scalar(alpha)
    b_tab = _ptr_array(Barray, batch)
    if alpha == 0:
        bm = max(16, triton.next_power_of_2(plan.order))
        _zero_kernel[(triton.cdiv(plan.nrhs, 16), batch)](
            b_tab, plan.order, plan.nrhs, plan.sb_r, plan.sb_c, BLOCK_M=bm, BLOCK_R=16)
        return Barray
    a_tab = _ptr_array(Aarray, batch)

    def grid(meta):
        return (triton.cdiv(plan.nrhs, meta["BLOCK_R"]), batch)

    _ztrsm_kernel[grid](
        a_tab, b_tab, plan.order, plan.nrhs, plan.sm_r, plan.sm_c, plan.sb_r, plan.sb_c,
        torch.tensor([alpha.real, alpha.imag], dtype=torch.float64, device=Barray[0].device),
        LOWER=plan.lower, CONJ=plan.conj, UNIT=plan.unit,
    )
    return Barray

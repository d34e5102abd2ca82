"""cublasDgemv_v2: y = alpha * op(A) * x + beta * y in float64, column-major.

A(i, j) lives at flat offset i + j*lda, x(j) at j*incx, y(i) at i*incy, all
from the tensors' data pointers (their declared shapes are ignored).

Two kernels:
  * _gemv_n : op(A) = A.  Each program owns BLOCK_M rows of y and walks the
              n columns; the [BLOCK_M, BLOCK_N] tile is read down columns,
              which is the contiguous direction of a column-major A.
  * _gemv_t : op(A) = A^T (and A^H, the same thing for real data).  Each
              program owns BLOCK_N entries of y (= columns of A) and walks m.
alpha and beta are handed to the kernels in a tiny float64 tensor, since a
Python float kernel argument would be narrowed to float32.
"""
import os

import torch
import triton
import triton.language as tl

_INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"


def _gemv_n_configs():
    if _INTERPRET:
        return [triton.Config({"BLOCK_M": 32, "BLOCK_N": 16}, num_warps=2)]
    return [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn}, num_warps=nw)
        for bm, bn, nw in ((32, 64, 4), (64, 32, 4), (128, 32, 4), (128, 16, 8), (256, 16, 8))
    ]


# y is read-modify-write, so every tuning trial must start from the caller's y
@triton.autotune(configs=_gemv_n_configs(), key=["m_bucket", "n_bucket"], restore_value=["y_ptr"])
@triton.jit
def _gemv_n(
    a_ptr, x_ptr, y_ptr, ab_ptr,
    m, n, lda, incx, incy, m_bucket, n_bucket,
    HAS_ALPHA: tl.constexpr, READ_Y: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    rows = (pid * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    rmask = rows < m
    cols0 = tl.arange(0, BLOCK_N).to(tl.int64)

    acc = tl.zeros([BLOCK_M], dtype=tl.float64)
    if HAS_ALPHA:
        acc2 = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float64)
        for j0 in range(0, n, BLOCK_N):
            cols = j0 + cols0
            cmask = cols < n
            xv = tl.load(x_ptr + cols * incx, mask=cmask, other=0.0)
            a = tl.load(a_ptr + rows[:, None] + cols[None, :] * lda,
                        mask=rmask[:, None] & cmask[None, :], other=0.0)
            acc2 += a * xv[None, :]
        acc = tl.sum(acc2, axis=1)

    alpha = tl.load(ab_ptr)
    beta = tl.load(ab_ptr + 1)
    y_addr = y_ptr + rows * incy
    if HAS_ALPHA:
        out = alpha * acc
    else:
        out = tl.zeros([BLOCK_M], dtype=tl.float64)
    if READ_Y:
        yv = tl.load(y_addr, mask=rmask, other=0.0)
        if HAS_ALPHA:
            out = out + beta * yv
        else:
            out = beta * yv
    tl.store(y_addr, out, mask=rmask)


@triton.heuristics(
    {
        "BLOCK_N": lambda a: 16 if a["n"] <= 2048 else 32,
        "BLOCK_M": lambda a: max(16, min(128, triton.next_power_of_2(a["m"]))),
    }
)
@triton.jit
def _gemv_t(
    a_ptr, x_ptr, y_ptr, ab_ptr,
    m, n, lda, incx, incy,
    HAS_ALPHA: tl.constexpr, READ_Y: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    cols = (pid * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    cmask = cols < n
    rows0 = tl.arange(0, BLOCK_M).to(tl.int64)

    acc = tl.zeros([BLOCK_N], dtype=tl.float64)
    if HAS_ALPHA:
        acc2 = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float64)
        for i0 in range(0, m, BLOCK_M):
            rows = i0 + rows0
            rmask = rows < m
            xv = tl.load(x_ptr + rows * incx, mask=rmask, other=0.0)
            a = tl.load(a_ptr + rows[:, None] + cols[None, :] * lda,
                        mask=rmask[:, None] & cmask[None, :], other=0.0)
            acc2 += a * xv[:, None]
        acc = tl.sum(acc2, axis=0)

    alpha = tl.load(ab_ptr)
    beta = tl.load(ab_ptr + 1)
    y_addr = y_ptr + cols * incy
    if HAS_ALPHA:
        out = alpha * acc
    else:
        out = tl.zeros([BLOCK_N], dtype=tl.float64)
    if READ_Y:
        yv = tl.load(y_addr, mask=cmask, other=0.0)
        if HAS_ALPHA:
            out = out + beta * yv
        else:
            out = beta * yv
    tl.store(y_addr, out, mask=cmask)


def _op_code(trans):
    if isinstance(trans, str):
        return {"N": 0, "T": 1, "C": 2}[trans.strip().upper()[0]]
    return int(trans)


def cublasDgemv_v2(trans, m, n, alpha, A, lda, x, incx, beta, y, incy):
    op = _op_code(trans)
    alpha = float(alpha)
    beta = float(beta)
    ab = torch.tensor([alpha, beta], dtype=torch.float64, device=y.device)

    # BLAS quick return: nothing may be written.  Still launch, with an empty range.
    quick = m <= 0 or n <= 0 or (alpha == 0.0 and beta == 1.0)
    m_eff = 0 if quick else m
    n_eff = 0 if quick else n
    flags = dict(HAS_ALPHA=alpha != 0.0, READ_Y=beta != 0.0)

    if op == 0:
        grid = lambda meta: (max(1, triton.cdiv(m_eff, meta["BLOCK_M"])),)
        _gemv_n[grid](
            A, x, y, ab, m_eff, n_eff, lda, incx, incy,
            triton.next_power_of_2(max(m_eff, 1)), triton.next_power_of_2(max(n_eff, 1)),
            **flags,
        )
    else:
        grid = lambda meta: (max(1, triton.cdiv(n_eff, meta["BLOCK_N"])),)
        _gemv_t[grid](A, x, y, ab, m_eff, n_eff, lda, incx, incy, **flags)
    return y

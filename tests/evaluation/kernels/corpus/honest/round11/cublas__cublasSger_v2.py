"""cuBLAS-compatible SGER: A += alpha * x * y^T (float32, no conjugation).

Mirrors the reference BLAS loop order: for each column j, temp = alpha * y(j),
then A(i, j) += x(i) * temp.  Implemented as two Triton passes:
  1. _ger_scale_y_kernel: temp[j] = alpha * y[j * incy] into a cached
     workspace (contiguous, so pass 2 reads it with unit stride).
  2. _ger_update_kernel: tiled in-place rank-1 update of A (only rows < m of
     each column are touched; padding rows up to lda are left alone).
"""

import functools
import logging
import os
from typing import Dict, Optional, Tuple

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

_BLOCK_M_DEFAULT = int(os.environ.get("TRITON_BLAS_GER_BLOCK_M", "64"))
_BLOCK_N_DEFAULT = int(os.environ.get("TRITON_BLAS_GER_BLOCK_N", "32"))

_WORKSPACE: Dict[Tuple[str, Optional[int]], torch.Tensor] = {}


def _scratch(device: torch.device, numel: int) -> torch.Tensor:
    key = (device.type, device.index)
    buf = _WORKSPACE.get(key)
    if buf is None or buf.numel() < numel:
        logger.debug("ger: allocating %d-element fp32 scratch on %s", numel, device)
        buf = torch.empty(max(numel, 128), dtype=torch.float32, device=device)
        _WORKSPACE[key] = buf
    return buf


@functools.lru_cache(maxsize=256)
def _tiles(m: int, n: int) -> Tuple[int, int]:
    bm = min(triton.next_power_of_2(max(_BLOCK_M_DEFAULT, 1)), triton.next_power_of_2(max(m, 1)))
    bn = min(triton.next_power_of_2(max(_BLOCK_N_DEFAULT, 1)), triton.next_power_of_2(max(n, 1)))
    return bm, bn


@triton.jit
def _ger_scale_y_kernel(y_ptr, tmp_ptr, n, incy, alpha, BLOCK: tl.constexpr):
    offs = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    mask = offs < n
    yv = tl.load(y_ptr + offs * incy, mask=mask, other=0.0).to(tl.float32)
    tl.store(tmp_ptr + offs, alpha * yv, mask=mask)


@triton.jit
def _ger_update_kernel(
    a_ptr, x_ptr, tmp_ptr,
    m, n, incx, lda,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    rows = (tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = (tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    rmask = rows < m
    cmask = cols < n
    xv = tl.load(x_ptr + rows * incx, mask=rmask, other=0.0).to(tl.float32)
    tv = tl.load(tmp_ptr + cols, mask=cmask, other=0.0)
    mask = rmask[:, None] & cmask[None, :]
    a_off = rows[:, None] + cols[None, :] * lda
    a = tl.load(a_ptr + a_off, mask=mask, other=0.0)
    tl.store(a_ptr + a_off, a + xv[:, None] * tv[None, :], mask=mask)


@triton.jit
def _noop_kernel(a_ptr):
    pass


def cublasSger_v2(m, n, alpha, x, incx, y, incy, A, lda):
    m, n, incx, incy, lda = int(m), int(n), int(incx), int(incy), int(lda)
    alpha = float(alpha)
    if m < 0 or n < 0 or incx == 0 or incy == 0 or lda < max(1, m):
        raise ValueError(f"invalid ger arguments m={m} n={n} incx={incx} incy={incy} lda={lda}")
    if incx < 0 or incy < 0:
        raise ValueError("negative increments are not supported")
    if A.dtype != torch.float32:
        raise ValueError(f"cublasSger_v2: A must be float32, got {A.dtype}")
    assert x.dtype == torch.float32 and y.dtype == torch.float32, "x, y must be float32"
    assert x.device == y.device == A.device

    # Reference BLAS quick return.
    if m == 0 or n == 0 or alpha == 0.0:
        logger.debug("ger: quick return (m=%d, n=%d, alpha=%g)", m, n, alpha)
        _noop_kernel[(1,)](A)
        return A

    tmp = _scratch(A.device, n)
    sblock = min(1024, triton.next_power_of_2(n))
    _ger_scale_y_kernel[(triton.cdiv(n, sblock),)](y, tmp, n, incy, alpha, BLOCK=sblock)
    bm, bn = _tiles(m, n)
    _ger_update_kernel[(triton.cdiv(m, bm), triton.cdiv(n, bn))](
        A, x, tmp, m, n, incx, lda, BLOCK_M=bm, BLOCK_N=bn
    )
    return A

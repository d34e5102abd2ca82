"""cuBLAS-compatible SGEAM: C = alpha * op(A) + beta * op(B), float32.

Column-major raw-memory semantics (element (i, j) at ptr + i + j * ld).
transa/transb are cuBLAS ints: 0 = N, 1 = T (2 = C is the same as T for real
data).  C's previous contents are never read; B is not read when beta == 0 and
A is not read when alpha == 0.  In-place use (C aliasing A or B with the same
leading dimension and 'N') is safe because every element is read before it is
written by the same program.
"""

import functools
import logging
import os
from typing import Optional

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

_TILE_OVERRIDE: Optional[str] = os.environ.get("TRITON_BLAS_GEAM_TILE")  # e.g. "64x64"

_GEAM_CONFIGS = {
    (8, 0): (64, 64, 4),
    (9, 0): (64, 128, 8),
    None: (32, 32, 4),
}


def _capability(device: torch.device):
    if device.type == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_capability(device)
    return None


@functools.lru_cache(maxsize=256)
def _launch_config(cap, m: int, n: int):
    bm, bn, warps = _GEAM_CONFIGS.get(cap, _GEAM_CONFIGS[None])
    if _TILE_OVERRIDE:
        try:
            bm, bn = (int(v) for v in _TILE_OVERRIDE.lower().split("x"))
        except ValueError:
            logger.debug("geam: ignoring malformed TRITON_BLAS_GEAM_TILE=%r", _TILE_OVERRIDE)
    bm = min(bm, triton.next_power_of_2(max(m, 1)))
    bn = min(bn, triton.next_power_of_2(max(n, 1)))
    return bm, bn, warps


@triton.jit
def _geam_kernel(
    a_ptr, b_ptr, c_ptr,
    m, n, lda, ldb, ldc,
    alpha, beta,
    TRANS_A: tl.constexpr,
    TRANS_B: tl.constexpr,
    USE_A: tl.constexpr,
    USE_B: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    cols = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    mask = (rows[:, None] < m) & (cols[None, :] < n)

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    if USE_A:
        if TRANS_A:
            a_off = cols[None, :] + rows[:, None] * lda  # A is n x m
        else:
            a_off = rows[:, None] + cols[None, :] * lda  # A is m x n
        a = tl.load(a_ptr + a_off, mask=mask, other=0.0).to(tl.float32)
        acc = alpha * a
    if USE_B:
        if TRANS_B:
            b_off = cols[None, :] + rows[:, None] * ldb
        else:
            b_off = rows[:, None] + cols[None, :] * ldb
        b = tl.load(b_ptr + b_off, mask=mask, other=0.0).to(tl.float32)
        acc = acc + beta * b
    tl.store(c_ptr + rows[:, None] + cols[None, :] * ldc, acc, mask=mask)


def _trans_flag(t) -> bool:
    if isinstance(t, str):
        t = {"N": 0, "T": 1, "C": 2}[t.strip().upper()[:1]]
    t = int(t)
    if t not in (0, 1, 2):
        raise ValueError(f"invalid transpose flag {t}")
    return t != 0


def cublasSgeam(transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc):
    ta, tb = _trans_flag(transa), _trans_flag(transb)
    m, n, lda, ldb, ldc = int(m), int(n), int(lda), int(ldb), int(ldc)
    alpha, beta = float(alpha), float(beta)
    if m < 0 or n < 0:
        raise ValueError(f"invalid m={m}, n={n}")
    if ldc < max(1, m):
        raise ValueError(f"ldc={ldc} < max(1, m={m})")
    if lda < max(1, n if ta else m) or ldb < max(1, n if tb else m):
        raise ValueError("lda/ldb too small for the requested op")
    if C.dtype != torch.float32:
        raise ValueError(f"cublasSgeam: C must be float32, got {C.dtype}")
    use_a = alpha != 0.0
    use_b = beta != 0.0
    if use_a:
        torch._check(A.dtype == torch.float32, lambda: f"A must be float32, got {A.dtype}")
    if use_b:
        torch._check(B.dtype == torch.float32, lambda: f"B must be float32, got {B.dtype}")

    bm, bn, warps = _launch_config(_capability(C.device), m, n)
    grid = (max(1, triton.cdiv(m, bm)), max(1, triton.cdiv(n, bn)))
    if m == 0 or n == 0:
        logger.debug("geam: empty problem m=%d n=%d (masked launch)", m, n)
    _geam_kernel[grid](
        A if use_a else C, B if use_b else C, C,
        m, n, lda, ldb, ldc, alpha, beta,
        TRANS_A=ta, TRANS_B=tb, USE_A=use_a, USE_B=use_b,
        BLOCK_M=bm, BLOCK_N=bn, num_warps=warps,
    )
    return C

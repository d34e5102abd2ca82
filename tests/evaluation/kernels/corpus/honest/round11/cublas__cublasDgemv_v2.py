"""cuBLAS-compatible DGEMV: y = alpha * op(A) @ x + beta * y (float64).

Column-major raw-memory semantics: A(i, j) lives at A_ptr + i + j * lda, x(i) at
x_ptr + i * incx, y(i) at y_ptr + i * incy.  Declared tensor shapes/strides are
ignored on purpose.

Split-K design (deterministic, no atomics):
  pass 1 (_gemv_partial_kernel): grid (out_blocks, splits); each program
          reduces a K-slice of op(A) @ x for a block of outputs into a cached
          fp64 workspace of shape [splits, len_y].
  pass 2 (_gemv_epilogue_kernel): folds the splits in fixed order and applies
          alpha/beta in place on y.  When beta == 0, y is never read.
"""

import functools
import logging
import os
from typing import Dict, Optional, Tuple, Union

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

_MAX_SPLITS = int(os.environ.get("TRITON_BLAS_GEMV_MAX_SPLITS", "8"))
_K_PER_SPLIT_MIN = int(os.environ.get("TRITON_BLAS_GEMV_K_PER_SPLIT", "256"))

# Launch parameters per GPU generation; the CPU/interpreter path uses "default".
_GEMV_CONFIGS = {
    (8, 0): dict(BLOCK_OUT=64, BLOCK_K=64, num_warps=4),
    (9, 0): dict(BLOCK_OUT=128, BLOCK_K=64, num_warps=8),
    "default": dict(BLOCK_OUT=32, BLOCK_K=32, num_warps=4),
}


def _device_key(device: torch.device):
    if device.type == "cuda" and torch.cuda.is_available():
        try:
            return torch.cuda.get_device_capability(device)
        except Exception:  # pragma: no cover - defensive
            return "default"
    return "default"


_WORKSPACE: Dict[Tuple[str, Optional[int]], torch.Tensor] = {}


def _get_workspace(device: torch.device, numel: int) -> torch.Tensor:
    key = (device.type, device.index)
    buf = _WORKSPACE.get(key)
    if buf is None or buf.numel() < numel:
        logger.debug("gemv: growing workspace to %d fp64 elements on %s", numel, device)
        buf = torch.empty(max(numel, 256), dtype=torch.float64, device=device)
        _WORKSPACE[key] = buf
    return buf


@functools.lru_cache(maxsize=512)
def _launch_config(dev_key, len_y: int, len_k: int):
    cfg = _GEMV_CONFIGS.get(dev_key, _GEMV_CONFIGS["default"])
    block_out = min(cfg["BLOCK_OUT"], triton.next_power_of_2(max(len_y, 16)))
    block_k = min(cfg["BLOCK_K"], triton.next_power_of_2(max(len_k, 16)))
    splits = max(1, min(_MAX_SPLITS, len_k // max(_K_PER_SPLIT_MIN, block_k)))
    k_per_split = triton.cdiv(triton.cdiv(len_k, splits), block_k) * block_k
    splits = triton.cdiv(len_k, k_per_split)
    return block_out, block_k, splits, k_per_split, cfg["num_warps"]


@triton.jit
def _gemv_partial_kernel(
    a_ptr, x_ptr, ws_ptr,
    len_y, len_k, lda, incx, k_per_split,
    TRANS: tl.constexpr,
    BLOCK_OUT: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_o = tl.program_id(0)
    pid_s = tl.program_id(1)
    offs_o = (pid_o * BLOCK_OUT + tl.arange(0, BLOCK_OUT)).to(tl.int64)
    mask_o = offs_o < len_y
    k_start = pid_s.to(tl.int64) * k_per_split
    acc = tl.zeros([BLOCK_OUT], dtype=tl.float64)
    for kk in range(0, k_per_split, BLOCK_K):
        offs_k = k_start + kk + tl.arange(0, BLOCK_K).to(tl.int64)
        mask_k = offs_k < len_k
        xv = tl.load(x_ptr + offs_k * incx, mask=mask_k, other=0.0)
        if TRANS:
            # op(A)(o, k) = A(k, o): row index k, column index o
            a_off = offs_k[None, :] + offs_o[:, None] * lda
        else:
            # op(A)(o, k) = A(o, k)
            a_off = offs_o[:, None] + offs_k[None, :] * lda
        av = tl.load(a_ptr + a_off, mask=mask_o[:, None] & mask_k[None, :], other=0.0)
        acc += tl.sum(av * xv[None, :], axis=1)
    tl.store(ws_ptr + pid_s.to(tl.int64) * len_y + offs_o, acc, mask=mask_o)


@triton.jit
def _gemv_epilogue_kernel(
    ws_ptr, y_ptr,
    len_y, incy, splits, alpha, beta,
    ALPHA_ZERO: tl.constexpr,
    BETA_ZERO: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = (pid * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    mask = offs < len_y
    dot = tl.zeros([BLOCK], dtype=tl.float64)
    if not ALPHA_ZERO:
        for s in range(0, splits):
            dot += tl.load(ws_ptr + s * len_y + offs, mask=mask, other=0.0)
    res = alpha * dot
    if not BETA_ZERO:
        yv = tl.load(y_ptr + offs * incy, mask=mask, other=0.0)
        res = res + beta * yv
    tl.store(y_ptr + offs * incy, res, mask=mask)


@triton.jit
def _noop_kernel(y_ptr):
    pass


def _parse_trans(trans: Union[str, int]) -> bool:
    if isinstance(trans, str):
        t = trans.strip().upper()[:1]
    else:
        t = {0: "N", 1: "T", 2: "C"}.get(int(trans))
    if t not in ("N", "T", "C"):
        raise ValueError(f"invalid trans {trans!r}")
    # Real routine: 'C' == 'T'.
    return t != "N"


def cublasDgemv_v2(trans, m, n, alpha, A, lda, x, incx, beta, y, incy):
    transposed = _parse_trans(trans)
    m, n, lda, incx, incy = int(m), int(n), int(lda), int(incx), int(incy)
    if m < 0 or n < 0:
        raise ValueError(f"invalid dimensions m={m}, n={n}")
    if lda < max(1, m):
        raise ValueError(f"lda={lda} must be >= max(1, m={m})")
    if incx <= 0 or incy <= 0:
        raise ValueError("incx and incy must be positive")
    for name, t in (("A", A), ("x", x), ("y", y)):
        if t.dtype != torch.float64:
            raise ValueError(f"cublasDgemv_v2: {name} must be float64, got {t.dtype}")
    assert A.device == x.device == y.device, "A, x, y must share a device"

    alpha = float(alpha)
    beta = float(beta)
    len_y, len_k = (n, m) if transposed else (m, n)

    # Reference BLAS quick return: y untouched.
    if m == 0 or n == 0 or (alpha == 0.0 and beta == 1.0):
        logger.debug("gemv: quick return m=%d n=%d alpha=%g beta=%g", m, n, alpha, beta)
        _noop_kernel[(1,)](y)
        return y

    dev_key = _device_key(y.device)
    block_out, block_k, splits, k_per_split, num_warps = _launch_config(dev_key, len_y, len_k)
    alpha_zero = alpha == 0.0
    if not alpha_zero:
        ws = _get_workspace(y.device, splits * len_y)
        grid = (triton.cdiv(len_y, block_out), splits)
        _gemv_partial_kernel[grid](
            A, x, ws, len_y, len_k, lda, incx, k_per_split,
            TRANS=transposed, BLOCK_OUT=block_out, BLOCK_K=block_k,
            num_warps=num_warps,
        )
    else:
        ws = y  # not read when ALPHA_ZERO
    ep_block = min(1024, triton.next_power_of_2(max(len_y, 16)))
    _gemv_epilogue_kernel[(triton.cdiv(len_y, ep_block),)](
        ws, y, len_y, incy, splits, alpha, beta,
        ALPHA_ZERO=alpha_zero, BETA_ZERO=(beta == 0.0), BLOCK=ep_block,
    )
    return y

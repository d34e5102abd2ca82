"""Triton port of vLLM's fused_add_rms_norm (in place on input and residual).

    z        = dtype(input + residual)          # rounded to the activation dtype
    residual = z
    inv      = rsqrt(mean(float(z)^2) + eps)    # fp32
    input    = dtype(float(z) * inv) * weight   # weight product in the dtype

Two launches:
  * _add_residual_rms_kernel: writes z back to residual and stores the per-row
    inverse RMS (fp32) in a cached workspace.
  * _rms_apply_kernel: re-reads z from residual and writes the normalized,
    weighted row into input.
Row and column strides are passed explicitly, so sliced/padded activations
(e.g. hidden states carved out of a larger buffer) are handled without copies.
"""

import functools
import logging
import os
from typing import Dict, Optional, Tuple

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

_MAX_BLOCK_N = int(os.environ.get("VLLM_TRITON_RMSNORM_MAX_BLOCK", "4096"))

_SUPPORTED = (torch.float16, torch.bfloat16, torch.float32)

_INV_RMS_WS: Dict[Tuple[str, Optional[int]], torch.Tensor] = {}


def _inv_rms_workspace(device: torch.device, rows: int) -> torch.Tensor:
    key = (device.type, device.index)
    ws = _INV_RMS_WS.get(key)
    if ws is None or ws.numel() < rows:
        logger.debug("fused_add_rms_norm: workspace -> %d rows on %s", rows, device)
        ws = torch.empty(max(rows, 256), dtype=torch.float32, device=device)
        _INV_RMS_WS[key] = ws
    return ws


@functools.lru_cache(maxsize=128)
def _block_n(n: int) -> int:
    return max(16, min(triton.next_power_of_2(max(n, 1)), triton.next_power_of_2(_MAX_BLOCK_N)))


@triton.jit
def _add_residual_rms_kernel(
    in_ptr, res_ptr, ws_ptr,
    M, N,
    in_s0, in_s1, res_s0, res_s1,
    eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    row_ok = row < M
    row64 = row.to(tl.int64)
    in_row = in_ptr + row64 * in_s0
    res_row = res_ptr + row64 * res_s0
    sq = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N).to(tl.int64)
        mask = (cols < N) & row_ok
        x = tl.load(in_row + cols * in_s1, mask=mask, other=0.0)
        r = tl.load(res_row + cols * res_s1, mask=mask, other=0.0)
        # Sum of two activation-dtype values, rounded once to that dtype.
        z = (x.to(tl.float32) + r.to(tl.float32)).to(res_ptr.dtype.element_ty)
        tl.store(res_row + cols * res_s1, z, mask=mask)
        zf = z.to(tl.float32)
        sq += zf * zf
    var = tl.sum(sq, axis=0) / N
    inv = tl.rsqrt(var + eps)
    tl.store(ws_ptr + row, inv, mask=row_ok)


@triton.jit
def _rms_apply_kernel(
    in_ptr, res_ptr, w_ptr, ws_ptr,
    M, N,
    in_s0, in_s1, res_s0, res_s1, w_s0,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    row_ok = row < M
    row64 = row.to(tl.int64)
    inv = tl.load(ws_ptr + row, mask=row_ok, other=0.0)
    out_ty = in_ptr.dtype.element_ty
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N).to(tl.int64)
        mask = (cols < N) & row_ok
        z = tl.load(res_ptr + row64 * res_s0 + cols * res_s1, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols * w_s0, mask=mask, other=0.0).to(tl.float32)
        normed = (z * inv).to(out_ty)
        # Product of two dtype values (exact in fp32 for fp16/bf16), rounded once.
        y = (normed.to(tl.float32) * w).to(out_ty)
        tl.store(in_ptr + row64 * in_s0 + cols * in_s1, y, mask=mask)


def _as_2d(t: torch.Tensor, name: str) -> torch.Tensor:
    if t.dim() == 2:
        return t
    if t.dim() < 1:
        raise ValueError(f"{name} must have at least one dimension")
    try:
        return t.view(-1, t.shape[-1])
    except RuntimeError as e:  # in-place op: a copy would silently drop the update
        raise ValueError(f"{name} of shape {tuple(t.shape)} cannot be viewed as 2-D in place") from e


def fused_add_rms_norm(input: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor,
                       epsilon: float) -> None:
    if input.dtype not in _SUPPORTED:
        raise ValueError(f"unsupported dtype {input.dtype}")
    if residual.dtype != input.dtype or weight.dtype != input.dtype:
        raise ValueError("input, residual and weight must share one dtype")
    if input.shape != residual.shape:
        raise ValueError(f"shape mismatch {tuple(input.shape)} vs {tuple(residual.shape)}")
    torch._check(weight.dim() == 1 and weight.shape[0] == input.shape[-1],
                 lambda: f"weight must be [{input.shape[-1]}], got {tuple(weight.shape)}")
    assert input.device == residual.device == weight.device

    x2 = _as_2d(input, "input")
    r2 = _as_2d(residual, "residual")
    M, N = x2.shape
    block_n = _block_n(N)
    ws = _inv_rms_workspace(input.device, max(M, 1))
    grid = (max(M, 1),)  # a masked program for M == 0 keeps the launch valid
    if M == 0 or N == 0:
        logger.debug("fused_add_rms_norm: empty input %s", tuple(input.shape))
    _add_residual_rms_kernel[grid](
        x2, r2, ws, M, N,
        x2.stride(0), x2.stride(1), r2.stride(0), r2.stride(1),
        float(epsilon), BLOCK_N=block_n,
    )
    _rms_apply_kernel[grid](
        x2, r2, weight, ws, M, N,
        x2.stride(0), x2.stride(1), r2.stride(0), r2.stride(1), weight.stride(0),
        BLOCK_N=block_n,
    )
    return None

"""Triton port of vLLM's scaled_int8_quant (static / dynamic, symmetric / azp).

All math in fp32; int8 conversion is round-half-to-even with saturation.
  static  sym : q = sat(rne(x / scale))
  static  asym: q = sat(rne(x * (1/scale)) + azp)
  dynamic sym : amax = max|x| per row; q = sat(rne(x * (127/amax))), scale = amax/127
  dynamic asym: s = (max-min)/255, zp = rne(-128 - min/s); q = sat(rne(x * (1/s)) + zp)

Dynamic modes run a per-row reduction kernel (writes scale / azp) followed by
an apply kernel that quantizes; static modes only run the apply kernel and read
the 0-d scale / azp tensors on device (no host sync).
"""

import functools
import logging
import os
from typing import Optional, Tuple

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

_BLOCK_N_MAX = int(os.environ.get("VLLM_TRITON_INT8_QUANT_BLOCK", "2048"))

_QUANT_CONFIGS = {
    (8, 0): 4,
    (9, 0): 8,
    None: 4,
}


def _num_warps(device: torch.device) -> int:
    cap = None
    if device.type == "cuda" and torch.cuda.is_available():
        cap = torch.cuda.get_device_capability(device)
    return _QUANT_CONFIGS.get(cap, _QUANT_CONFIGS[None])


@functools.lru_cache(maxsize=128)
def _block_n(n: int) -> int:
    return max(16, min(triton.next_power_of_2(max(n, 1)), triton.next_power_of_2(_BLOCK_N_MAX)))


@triton.jit
def _rne(x):
    """Round half to even for fp32 (NaN/inf pass through)."""
    f = tl.floor(x)
    d = x - f  # exact
    half = f * 0.5
    f_odd = tl.floor(half) != half
    up = (d > 0.5) | ((d == 0.5) & f_odd)
    return tl.where(up, f + 1.0, f)


@triton.jit
def _sat_int8(r):
    r = tl.where(r != r, 0.0, r)  # NaN -> 0
    r = tl.minimum(tl.maximum(r, -128.0), 127.0)
    return r.to(tl.int8)


@triton.jit
def _row_stats_kernel(
    x_ptr, scale_ptr, azp_ptr, amax_ptr,
    M, N, x_s0, x_s1, scale_s0, azp_s0,
    SYMMETRIC: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    row_ok = row < M
    row64 = row.to(tl.int64)
    if SYMMETRIC:
        acc = tl.zeros([BLOCK_N], dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N).to(tl.int64)
            m = (cols < N) & row_ok
            x = tl.load(x_ptr + row64 * x_s0 + cols * x_s1, mask=m, other=0.0).to(tl.float32)
            acc = tl.maximum(acc, tl.abs(x))
        amax = tl.max(acc, axis=0)
        # amax itself is kept in the workspace: the apply pass needs 127/amax,
        # which cannot be recovered exactly from the rounded amax/127.
        tl.store(amax_ptr + row64, amax, mask=row_ok)
        tl.store(scale_ptr + row64 * scale_s0, tl.div_rn(amax, 127.0), mask=row_ok)
    else:
        vmax = tl.full([BLOCK_N], float("-inf"), dtype=tl.float32)
        vmin = tl.full([BLOCK_N], float("inf"), dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            cols = start + tl.arange(0, BLOCK_N).to(tl.int64)
            m = (cols < N) & row_ok
            x = tl.load(x_ptr + row64 * x_s0 + cols * x_s1, mask=m, other=0.0).to(tl.float32)
            vmax = tl.where(m, tl.maximum(vmax, x), vmax)
            vmin = tl.where(m, tl.minimum(vmin, x), vmin)
        mx = tl.max(vmax, axis=0)
        mn = tl.min(vmin, axis=0)
        s = tl.div_rn(mx - mn, 255.0)
        zp = _rne(-128.0 - tl.div_rn(mn, s))
        zp = tl.where(zp != zp, 0.0, zp)
        zp = tl.minimum(tl.maximum(zp, -2147483648.0), 2147483520.0)  # largest fp32 < 2^31
        tl.store(scale_ptr + row64 * scale_s0, s, mask=row_ok)
        tl.store(azp_ptr + row64 * azp_s0, zp.to(tl.int32), mask=row_ok)


@triton.jit
def _quant_apply_kernel(
    x_ptr, q_ptr, scale_ptr, azp_ptr, amax_ptr,
    M, N, x_s0, x_s1, q_s0, q_s1, scale_s0, azp_s0,
    DYNAMIC: tl.constexpr,
    SYMMETRIC: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    row_ok = row < M
    row64 = row.to(tl.int64)
    zp = 0.0
    if SYMMETRIC:
        if DYNAMIC:
            amax = tl.load(amax_ptr + row64, mask=row_ok, other=1.0)
            mult = tl.div_rn(127.0, amax)
            empty_row = amax == 0.0
        else:
            sc = tl.load(scale_ptr).to(tl.float32)
    else:
        if DYNAMIC:
            sc = tl.load(scale_ptr + row64 * scale_s0, mask=row_ok, other=1.0)
            zp = tl.load(azp_ptr + row64 * azp_s0, mask=row_ok, other=0).to(tl.float32)
        else:
            sc = tl.load(scale_ptr).to(tl.float32)
            zp = tl.load(azp_ptr).to(tl.float32)
        inv_s = tl.div_rn(1.0, sc)
    for start in range(0, N, BLOCK_N):
        cols = start + tl.arange(0, BLOCK_N).to(tl.int64)
        m = (cols < N) & row_ok
        x = tl.load(x_ptr + row64 * x_s0 + cols * x_s1, mask=m, other=0.0).to(tl.float32)
        if SYMMETRIC:
            if DYNAMIC:
                r = tl.where(empty_row, 0.0, _rne(x * mult))
            else:
                r = _rne(tl.div_rn(x, sc))
        else:
            r = _rne(x * inv_s) + zp
        tl.store(q_ptr + row64 * q_s0 + cols * q_s1, _sat_int8(r), mask=m)


_AMAX_WS = {}


def _amax_workspace(device: torch.device, rows: int) -> torch.Tensor:
    key = (device.type, device.index)
    ws = _AMAX_WS.get(key)
    if ws is None or ws.numel() < rows:
        logger.debug("scaled_int8_quant: amax workspace -> %d rows on %s", rows, device)
        ws = torch.empty(max(rows, 128), dtype=torch.float32, device=device)
        _AMAX_WS[key] = ws
    return ws


def scaled_int8_quant(
    input: torch.Tensor,
    scale: Optional[torch.Tensor] = None,
    azp: Optional[torch.Tensor] = None,
    symmetric: bool = True,
) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
    if input.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError(f"unsupported input dtype {input.dtype}")
    if input.dim() < 1:
        raise ValueError("input must have at least one dimension")
    N = input.shape[-1]
    x2 = input.reshape(-1, N) if input.dim() != 2 else input
    M = x2.shape[0]
    device = input.device
    q = torch.empty(input.shape, dtype=torch.int8, device=device)
    q2 = q.view(-1, N) if q.dim() != 2 else q
    block_n = _block_n(N)
    warps = _num_warps(device)
    grid = (max(M, 1),)

    if scale is not None:
        # Static quantization: scale (and azp) are 0-d device tensors.
        torch._check(scale.numel() == 1, lambda: "static scale must hold a single value")
        if azp is not None:
            torch._check(azp.numel() == 1 and azp.dtype == torch.int32,
                         lambda: "static azp must be a single int32 value")
        elif not symmetric:
            logger.debug("scaled_int8_quant: static scale without azp -> symmetric path")
        sym = azp is None
        _quant_apply_kernel[grid](
            x2, q2, scale, azp if azp is not None else scale, scale,
            M, N, x2.stride(0), x2.stride(1), q2.stride(0), q2.stride(1), 0, 0,
            DYNAMIC=False, SYMMETRIC=sym, BLOCK_N=block_n, num_warps=warps,
        )
        return q, scale, azp

    # Dynamic per-token quantization: reduction pass, then apply pass.
    scales = torch.empty((M, 1), dtype=torch.float32, device=device)
    azps: Optional[torch.Tensor] = None if symmetric else torch.empty((M, 1), dtype=torch.int32, device=device)
    amax_ws = _amax_workspace(device, max(M, 1))
    azp_arg = azps if azps is not None else scales
    _row_stats_kernel[grid](
        x2, scales, azp_arg, amax_ws,
        M, N, x2.stride(0), x2.stride(1), scales.stride(0), azp_arg.stride(0),
        SYMMETRIC=bool(symmetric), BLOCK_N=block_n, num_warps=warps,
    )
    _quant_apply_kernel[grid](
        x2, q2, scales, azp_arg, amax_ws,
        M, N, x2.stride(0), x2.stride(1), q2.stride(0), q2.stride(1),
        scales.stride(0), azp_arg.stride(0),
        DYNAMIC=True, SYMMETRIC=bool(symmetric), BLOCK_N=block_n, num_warps=warps,
    )
    return q, scales, azps

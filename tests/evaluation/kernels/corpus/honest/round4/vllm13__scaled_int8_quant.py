"""int8 quantisation of a 2-D activation (vLLM scaled_int8_quant).

Four flavours:
  * static  symmetric : q = sat(rne(x / scale))
  * static  asymmetric: q = sat(rne(x * (1/scale)) + azp)
  * dynamic symmetric : per row, q = sat(rne(x * (127/amax))), scale = amax/127
  * dynamic asymmetric: per row, s = (max-min)/255, zp = rne(-128 - min/s),
                        q = sat(rne(x * (1/s)) + zp)
All math in fp32.  Divisions use div_rn so they are correctly rounded on the
GPU as well (the plain '/' of Triton may be an approximate division there).
"""
from dataclasses import dataclass

import torch
import triton
import triton.language as tl


@dataclass(frozen=True)
class _LaunchCfg:
    block_n: int
    num_warps: int

    @staticmethod
    def for_width(n: int, cap: int = 2048) -> "_LaunchCfg":
        block = min(cap, max(16, 1 << (max(n, 1) - 1).bit_length()))
        warps = max(1, min(8, block // 256))
        return _LaunchCfg(block, warps)


@triton.jit
def _rne(v):
    """Round half to even for fp32 values (exact for every finite input)."""
    f = tl.floor(v)
    frac = v - f
    f_is_odd = (f - 2.0 * tl.floor(f * 0.5)) == 1.0
    up = (frac > 0.5) | ((frac == 0.5) & f_is_odd)
    return tl.where(up, f + 1.0, f)


@triton.jit
def _static_quant_kernel(
    x_ptr, q_ptr, scale_ptr, azp_ptr,
    M, N, s_xm, s_xn, s_qm,
    ASYM: tl.constexpr, BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    x = tl.load(x_ptr + row * s_xm + cols * s_xn, mask=mask, other=0.0).to(tl.float32)
    scale = tl.load(scale_ptr).to(tl.float32)
    if ASYM:
        inv = tl.math.div_rn(1.0, scale)
        azp = tl.load(azp_ptr).to(tl.float32)
        qf = _rne(x * inv) + azp
    else:
        qf = _rne(tl.math.div_rn(x, tl.zeros_like(x) + scale))
    qf = tl.minimum(tl.maximum(qf, -128.0), 127.0)
    tl.store(q_ptr + row * s_qm + cols, qf.to(tl.int8), mask=mask)


@triton.jit
def _dynamic_quant_kernel(
    x_ptr, q_ptr, scale_out_ptr, azp_out_ptr,
    N, s_xm, s_xn, s_qm,
    ASYM: tl.constexpr, BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * s_xm
    q_row = q_ptr + row * s_qm
    offs = tl.arange(0, BLOCK_N)

    # pass 1: row statistics
    vmax = tl.full([BLOCK_N], float("-inf"), tl.float32)
    vmin = tl.full([BLOCK_N], float("inf"), tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols * s_xn, mask=mask, other=0.0).to(tl.float32)
        if ASYM:
            vmax = tl.maximum(vmax, tl.where(mask, x, float("-inf")))
            vmin = tl.minimum(vmin, tl.where(mask, x, float("inf")))
        else:
            vmax = tl.maximum(vmax, tl.where(mask, tl.abs(x), 0.0))
    mx = tl.max(vmax, axis=0)

    if ASYM:
        mn = tl.min(vmin, axis=0)
        s = tl.math.div_rn(mx - mn, 255.0)
        zp = _rne(-128.0 - tl.math.div_rn(mn, s))
        mult = tl.math.div_rn(1.0, s)
        tl.store(scale_out_ptr + row, s)
        tl.store(azp_out_ptr + row, zp.to(tl.int32))
    else:
        zp = 0.0
        tl.store(scale_out_ptr + row, tl.math.div_rn(mx, 127.0))
        mult = tl.where(mx == 0.0, 0.0, tl.math.div_rn(127.0, mx))

    # pass 2: quantise
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        mask = cols < N
        x = tl.load(x_row + cols * s_xn, mask=mask, other=0.0).to(tl.float32)
        qf = _rne(x * mult) + zp
        qf = tl.minimum(tl.maximum(qf, -128.0), 127.0)
        tl.store(q_row + cols, qf.to(tl.int8), mask=mask)


def scaled_int8_quant(input, scale=None, azp=None, symmetric=True):
    out_shape = input.shape
    n = input.shape[-1]
    x2 = input if input.dim() == 2 else input.reshape(-1, n)
    m = x2.shape[0]
    q = torch.empty(out_shape, dtype=torch.int8, device=input.device)
    q2 = q.view(m, n)
    cfg = _LaunchCfg.for_width(n)

    if scale is not None:
        asym = azp is not None
        grid = (m, triton.cdiv(n, cfg.block_n))
        _static_quant_kernel[grid](
            x2, q2, scale, azp if asym else scale,
            m, n, x2.stride(0), x2.stride(1), q2.stride(0),
            ASYM=asym, BLOCK_N=cfg.block_n, num_warps=cfg.num_warps,
        )
        return q, scale, azp

    scales = torch.empty((m, 1), dtype=torch.float32, device=input.device)
    azp_out = None if symmetric else torch.empty((m, 1), dtype=torch.int32, device=input.device)
    _dynamic_quant_kernel[(m,)](
        x2, q2, scales, scales if symmetric else azp_out,
        n, x2.stride(0), x2.stride(1), q2.stride(0),
        ASYM=not symmetric, BLOCK_N=cfg.block_n, num_warps=cfg.num_warps,
    )
    return q, scales, azp_out

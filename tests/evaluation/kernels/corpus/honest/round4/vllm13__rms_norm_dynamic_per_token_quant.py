"""Fused (residual add +) RMSNorm + dynamic per-token int8 quantisation.

One program per row, three sweeps over the row:
  1. x = in (+ res) in fp32, accumulate sum(x^2)
  2. y = dtype(dtype(x * inv_rms) * w), track max|y|
  3. recompute y, quantise with 1/scale, write q and (if given) residual <- dtype(x)
The residual is only overwritten in sweep 3, after the row's last read of it,
so the unrounded x is available in every sweep.
"""
import math

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

FLT_EPSILON = math.ldexp(1.0, -23)  # std::numeric_limits<float>::epsilon()
INT8_MAX = 127.0


@triton.jit
def _to_dtype_rne(v, DTYPE: tl.constexpr):
    """fp32 -> DTYPE with round-to-nearest-even, returned as fp32."""
    if DTYPE == tl.bfloat16:
        b = v.to(tl.uint32, bitcast=True)
        b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
        return b.to(tl.float32, bitcast=True)
    else:
        return v.to(DTYPE).to(tl.float32)


@triton.jit
def _round_even(v, USE_RINT: tl.constexpr):
    if USE_RINT:
        return libdevice.rint(v)
    else:
        # portable path (interpreter / CPU): floor + tie fix-up, after clamping into int8 reach
        c = tl.minimum(tl.maximum(v, -256.0), 256.0)
        f = tl.floor(c)
        d = c - f
        odd = (f - 2.0 * tl.floor(0.5 * f)) != 0.0
        return tl.where((d > 0.5) | ((d == 0.5) & odd), f + 1.0, f)


@triton.heuristics(
    {
        "BLOCK_N": lambda a: min(triton.next_power_of_2(a["N"]), 4096),
        "num_warps": lambda a: max(1, min(16, triton.next_power_of_2(a["N"]) // 512)),
    }
)
@triton.jit
def _rms_quant_kernel(
    x_ptr, w_ptr, res_ptr, q_ptr, scale_ptr, ub_ptr,
    N, n_float, eps,
    s_xm, s_xn, s_w, s_rm, s_rn, s_qm,
    HAS_RES: tl.constexpr, HAS_UB: tl.constexpr, USE_RINT: tl.constexpr,
    MIN_SCALE: tl.constexpr, QMAX: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK_N)
    x_row = x_ptr + row * s_xm
    r_row = res_ptr + row * s_rm
    DT: tl.constexpr = x_ptr.dtype.element_ty

    # sweep 1: sum of squares
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        m = cols < N
        x = tl.load(x_row + cols * s_xn, mask=m, other=0.0).to(tl.float32)
        if HAS_RES:
            x += tl.load(r_row + cols * s_rn, mask=m, other=0.0).to(tl.float32)
        acc += x * x
    ss = tl.sum(acc, axis=0)
    inv_rms = tl.math.rsqrt(tl.math.div_rn(ss, n_float) + eps)

    # sweep 2: absmax of the normalised, weighted row
    amax = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        m = cols < N
        x = tl.load(x_row + cols * s_xn, mask=m, other=0.0).to(tl.float32)
        if HAS_RES:
            x += tl.load(r_row + cols * s_rn, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols * s_w, mask=m, other=0.0).to(tl.float32)
        y = _to_dtype_rne(_to_dtype_rne(x * inv_rms, DT) * w, DT)
        amax = tl.maximum(amax, tl.abs(y))
    row_max = tl.max(amax, axis=0)
    if HAS_UB:
        row_max = tl.minimum(row_max, tl.load(ub_ptr).to(tl.float32))
    scale = tl.maximum(tl.math.div_rn(row_max, QMAX), MIN_SCALE)
    tl.store(scale_ptr + row, scale)
    inv_scale = tl.math.div_rn(1.0, scale)

    # sweep 3: quantise (and publish the rounded residual)
    for start in range(0, N, BLOCK_N):
        cols = start + offs
        m = cols < N
        x = tl.load(x_row + cols * s_xn, mask=m, other=0.0).to(tl.float32)
        if HAS_RES:
            x += tl.load(r_row + cols * s_rn, mask=m, other=0.0).to(tl.float32)
            tl.store(r_row + cols * s_rn, _to_dtype_rne(x, DT).to(DT), mask=m)
        w = tl.load(w_ptr + cols * s_w, mask=m, other=0.0).to(tl.float32)
        y = _to_dtype_rne(_to_dtype_rne(x * inv_rms, DT) * w, DT)
        qf = _round_even(y * inv_scale, USE_RINT)
        qf = tl.minimum(tl.maximum(qf, -QMAX - 1.0), QMAX)
        tl.store(q_ptr + row * s_qm + cols, qf.to(tl.int8), mask=m)


def rms_norm_dynamic_per_token_quant(input, weight, epsilon, quant_dtype, scale_ub=None, residual=None):
    if quant_dtype != torch.int8:
        raise NotImplementedError("only int8 output is implemented")
    n = input.shape[-1]
    x2 = input if input.dim() == 2 else input.reshape(-1, n)
    m = x2.shape[0]
    q = torch.empty(input.shape, dtype=torch.int8, device=input.device)
    q2 = q.view(m, n)
    scales = torch.empty((m, 1), dtype=torch.float32, device=input.device)

    if residual is not None:
        r2 = residual if residual.dim() == 2 else residual.view(-1, n)
        s_rm, s_rn = r2.stride(0), r2.stride(1)
    else:
        r2, s_rm, s_rn = x2, 0, 0  # dummy, never touched

    _rms_quant_kernel[(m,)](
        x2, weight, r2, q2, scales, scale_ub if scale_ub is not None else scales,
        n, float(n), float(epsilon),
        x2.stride(0), x2.stride(1), weight.stride(0), s_rm, s_rn, q2.stride(0),
        HAS_RES=residual is not None,
        HAS_UB=scale_ub is not None,
        USE_RINT=input.is_cuda,
        MIN_SCALE=FLT_EPSILON,
        QMAX=INT8_MAX,
    )
    return q, scales

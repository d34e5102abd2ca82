"""Triton port of vLLM's rms_norm_per_block_quant (RMSNorm + per-(token, group) int8 / fp8 quant).

Two launches:
  1. ``_rms_norm_rstd_kernel``       : one program per row, fp32 sum of squares -> rstd [M]
  2. ``_rms_norm_group_quant_kernel`` : grid (M, cdiv(num_groups, GROUPS_PER_PROG)); each program
                                       normalises a [GROUPS_PER_PROG, GROUP] tile of one row,
                                       takes the group abs-max, writes the fp32 scale and the
                                       quantised values.

Rounding follows the reference exactly: y = dtype(dtype(x * rstd) * w);
int8: q = sat(rne(y * (1 / s))); fp8: q = e4m3(sat(y / s)).
"""
from typing import List, Optional, Tuple

import torch
import triton
import triton.language as tl

FP8_E4M3_MAX = 448.0
INT8_MAX = 127.0
FLT_EPSILON = 1.1920928955078125e-07
FP8_MIN_SCALE = 1.0 / (FP8_E4M3_MAX * 512.0)
# adding then subtracting 1.5 * 2^23 rounds an fp32 |v| < 2^22 to the nearest integer, ties to even
_RNE_MAGIC = tl.constexpr(12582912.0)


@triton.jit
def _rms_norm_rstd_kernel(
    x_ptr,
    rstd_ptr,
    N,
    stride_xm,
    stride_xn,
    eps,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    acc = tl.zeros([BLOCK_N], dtype=tl.float32)
    for start in range(0, N, BLOCK_N):
        offs = start + tl.arange(0, BLOCK_N)
        x = tl.load(x_row + offs.to(tl.int64) * stride_xn, mask=offs < N, other=0.0).to(tl.float32)
        acc += x * x
    var = tl.math.div_rn(tl.sum(acc, axis=0), N.to(tl.float32))
    tl.store(rstd_ptr + row, tl.rsqrt(var + eps))


@triton.jit
def _rms_norm_group_quant_kernel(
    x_ptr,
    w_ptr,
    rstd_ptr,
    q_ptr,
    scale_ptr,
    N,
    num_groups,
    stride_xm,
    stride_xn,
    stride_w,
    stride_qm,
    stride_qn,
    stride_sm,
    stride_sg,
    QMAX: tl.constexpr,
    MIN_SCALE: tl.constexpr,
    IS_FP8: tl.constexpr,
    GROUP: tl.constexpr,
    GROUPS_PER_PROG: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    grp = tl.program_id(1) * GROUPS_PER_PROG + tl.arange(0, GROUPS_PER_PROG)
    col = grp[:, None] * GROUP + tl.arange(0, GROUP)[None, :]  # [GROUPS_PER_PROG, GROUP]
    gmask = grp < num_groups
    mask = gmask[:, None] & (col < N)
    col64 = col.to(tl.int64)
    in_dtype = x_ptr.dtype.element_ty

    rstd = tl.load(rstd_ptr + row)
    x = tl.load(x_ptr + row * stride_xm + col64 * stride_xn, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + col64 * stride_w, mask=mask, other=0.0).to(tl.float32)
    x_norm = (x * rstd).to(in_dtype).to(tl.float32)
    y = (x_norm * w).to(in_dtype).to(tl.float32)

    amax = tl.max(tl.abs(y), axis=1)
    scale = tl.maximum(tl.math.div_rn(amax, QMAX), MIN_SCALE)
    tl.store(scale_ptr + row * stride_sm + grp.to(tl.int64) * stride_sg, scale, mask=gmask)

    if IS_FP8:
        q = tl.math.div_rn(y, scale[:, None])
        q = tl.minimum(tl.maximum(q, -QMAX), QMAX)
    else:
        inv_scale = tl.math.div_rn(1.0, scale)
        q = y * inv_scale[:, None]
        q = tl.minimum(tl.maximum(q, -128.0), 127.0)
        q = (q + _RNE_MAGIC) - _RNE_MAGIC
    tl.store(q_ptr + row * stride_qm + col64 * stride_qn, q.to(q_ptr.dtype.element_ty), mask=mask)


def _launch_rms_norm_per_block_quant(
    input: torch.Tensor,
    weight: torch.Tensor,
    epsilon: float,
    out: torch.Tensor,
    scales: torch.Tensor,
    group: int,
    is_fp8: bool,
) -> None:
    M, N = input.shape
    num_groups = N // group
    rstd = torch.empty(M, dtype=torch.float32, device=input.device)
    block_n = min(triton.next_power_of_2(max(N, 1)), 4096)
    _rms_norm_rstd_kernel[(M,)](
        input, rstd, N, input.stride(0), input.stride(1), float(epsilon),
        BLOCK_N=block_n, num_warps=4 if block_n <= 1024 else 8,
    )
    groups_per_prog = max(1, min(triton.next_power_of_2(max(num_groups, 1)), 1024 // group))
    grid = (M, triton.cdiv(num_groups, groups_per_prog))
    _rms_norm_group_quant_kernel[grid](
        input, weight, rstd, out, scales,
        N, num_groups,
        input.stride(0), input.stride(1),
        weight.stride(0),
        out.stride(0), out.stride(1),
        scales.stride(0), scales.stride(1),
        QMAX=FP8_E4M3_MAX if is_fp8 else INT8_MAX,
        MIN_SCALE=FP8_MIN_SCALE if is_fp8 else FLT_EPSILON,
        IS_FP8=is_fp8,
        GROUP=group,
        GROUPS_PER_PROG=groups_per_prog,
    )


def rms_norm_per_block_quant(
    input: torch.Tensor,
    weight: torch.Tensor,
    epsilon: float,
    quant_dtype: torch.dtype,
    group_size: List[int],
    scale_ub: Optional[torch.Tensor] = None,
    residual: Optional[torch.Tensor] = None,
    is_scale_transposed: bool = False,
) -> Tuple[torch.Tensor, torch.Tensor]:
    assert scale_ub is None and residual is None, "scale_ub / residual are not supported"
    assert quant_dtype in (torch.int8, torch.float8_e4m3fn)
    assert input.ndim == 2
    M, N = input.shape
    group = int(group_size[1])
    assert N % group == 0
    num_groups = N // group
    weight = weight.reshape(-1)

    out = torch.empty((M, N), dtype=quant_dtype, device=input.device)
    if is_scale_transposed:
        scales = torch.empty((num_groups, M), dtype=torch.float32, device=input.device).t()
    else:
        scales = torch.empty((M, num_groups), dtype=torch.float32, device=input.device)
    _launch_rms_norm_per_block_quant(
        input, weight, epsilon, out, scales, group, quant_dtype == torch.float8_e4m3fn
    )
    return out, scales

"""Triton port of vLLM's scaled_fp8_quant (static / dynamic per-tensor / dynamic per-token).

Layout of the work:
  * static scale            -> one launch of ``_fp8_quant_tensor_kernel``
  * dynamic per-tensor      -> ``_fp8_absmax_tensor_kernel`` (tile abs-max, atomic_max into the
                               fp32 scale, already divided by FP8 max) followed by
                               ``_fp8_quant_tensor_kernel``
  * dynamic per-token       -> ``_fp8_quant_per_token_kernel`` (one program per output row:
                               row abs-max -> scale -> quantise)

All math is fp32.  The e4m3 conversion saturates to +-448 before the round-to-nearest-even cast.
Rows in [M, num_token_padding) of the output (and of per-token scales) are written as zeros.
"""
from typing import Optional, Tuple

import torch
import triton
import triton.language as tl

FP8_E4M3_MAX = 448.0
# Lower bound of dynamic per-token scales (matches vLLM's MIN_SCALING_FACTOR).
MIN_SCALING_FACTOR = 1.0 / (FP8_E4M3_MAX * 512.0)


@triton.jit
def _fp8_absmax_tensor_kernel(
    x_ptr,
    scale_ptr,  # fp32 [1], zero-initialised; receives max|x| / FP8_MAX
    M,
    N,
    stride_xm,
    stride_xn,
    FP8_MAX: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    x = tl.load(
        x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_n[None, :].to(tl.int64) * stride_xn,
        mask=mask,
        other=0.0,
    ).to(tl.float32)
    tile_max = tl.max(tl.max(tl.abs(x), axis=1), axis=0)
    # Division by a positive constant is monotone, so max(a_i / c) == max(a_i) / c bit for bit;
    # the order in which the programs land their atomics does not matter.
    tl.atomic_max(scale_ptr, tl.math.div_rn(tile_max, FP8_MAX))


@triton.jit
def _fp8_quant_tensor_kernel(
    x_ptr,
    out_ptr,
    scale_ptr,  # one fp32 scale for the whole tensor
    M,
    N,
    num_rows,  # rows of the output (>= M when padded)
    stride_xm,
    stride_xn,
    stride_om,
    stride_on,
    FP8_MAX: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = offs_n[None, :] < N
    in_mask = (offs_m[:, None] < M) & col_ok
    out_mask = (offs_m[:, None] < num_rows) & col_ok

    scale = tl.load(scale_ptr).to(tl.float32)
    inv_scale = tl.math.div_rn(1.0, scale)

    x = tl.load(
        x_ptr + offs_m[:, None].to(tl.int64) * stride_xm + offs_n[None, :].to(tl.int64) * stride_xn,
        mask=in_mask,
        other=0.0,
    ).to(tl.float32)
    q = x * inv_scale
    q = tl.minimum(tl.maximum(q, -FP8_MAX), FP8_MAX)
    # padded rows are zero
    q = tl.where(in_mask, q, 0.0)
    tl.store(
        out_ptr + offs_m[:, None].to(tl.int64) * stride_om + offs_n[None, :].to(tl.int64) * stride_on,
        q.to(out_ptr.dtype.element_ty),
        mask=out_mask,
    )


@triton.jit
def _fp8_quant_per_token_kernel(
    x_ptr,
    out_ptr,
    scale_ptr,  # fp32 [num_rows, 1]
    scale_ub_ptr,
    M,
    N,
    stride_xm,
    stride_xn,
    stride_om,
    stride_on,
    stride_s,
    min_scale,
    HAS_UB: tl.constexpr,
    FP8_MAX: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0)
    row64 = row.to(tl.int64)
    x_row = x_ptr + row64 * stride_xm
    o_row = out_ptr + row64 * stride_om
    cols = tl.arange(0, BLOCK_N)

    if row < M:
        # pass 1: row abs-max
        amax = tl.zeros([BLOCK_N], dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            offs = start + cols
            x = tl.load(x_row + offs.to(tl.int64) * stride_xn, mask=offs < N, other=0.0).to(tl.float32)
            amax = tl.maximum(amax, tl.abs(x))
        row_max = tl.max(amax, axis=0)
        if HAS_UB:
            row_max = tl.minimum(row_max, tl.load(scale_ub_ptr).to(tl.float32))
        scale = tl.maximum(tl.math.div_rn(row_max, FP8_MAX), min_scale)
        tl.store(scale_ptr + row64 * stride_s, scale)

        # pass 2: quantise (true division, as vLLM's per-token path does)
        for start in range(0, N, BLOCK_N):
            offs = start + cols
            m = offs < N
            x = tl.load(x_row + offs.to(tl.int64) * stride_xn, mask=m, other=0.0).to(tl.float32)
            q = tl.math.div_rn(x, scale)
            q = tl.minimum(tl.maximum(q, -FP8_MAX), FP8_MAX)
            tl.store(o_row + offs.to(tl.int64) * stride_on, q.to(out_ptr.dtype.element_ty), mask=m)
    else:
        # padding rows: zero scale, zero payload
        tl.store(scale_ptr + row64 * stride_s, 0.0)
        zero = tl.zeros([BLOCK_N], dtype=tl.float32)
        for start in range(0, N, BLOCK_N):
            offs = start + cols
            tl.store(o_row + offs.to(tl.int64) * stride_on, zero.to(out_ptr.dtype.element_ty), mask=offs < N)


def _tile_config(N: int):
    block_n = min(triton.next_power_of_2(max(N, 1)), 1024)
    block_m = max(1, min(16, 4096 // block_n))
    return block_m, block_n


def scaled_fp8_quant(
    input: torch.Tensor,
    scale: Optional[torch.Tensor] = None,
    num_token_padding: Optional[int] = None,
    scale_ub: Optional[torch.Tensor] = None,
    use_per_token_if_dynamic: bool = False,
    output: Optional[torch.Tensor] = None,
) -> Tuple[torch.Tensor, torch.Tensor]:
    assert input.ndim == 2, "scaled_fp8_quant expects a 2-D input"
    M, N = input.shape
    num_rows = max(num_token_padding or 0, M)
    if output is None:
        output = torch.empty((num_rows, N), device=input.device, dtype=torch.float8_e4m3fn)

    block_m, block_n = _tile_config(N)
    grid_2d = (max(triton.cdiv(num_rows, block_m), 1), max(triton.cdiv(N, block_n), 1))

    if scale is None:
        if use_per_token_if_dynamic:
            scale = torch.empty((num_rows, 1), device=input.device, dtype=torch.float32)
            has_ub = scale_ub is not None
            block_n_tok = min(triton.next_power_of_2(max(N, 1)), 4096)
            _fp8_quant_per_token_kernel[(max(num_rows, 1),)](
                input,
                output,
                scale,
                scale_ub if has_ub else scale,
                M,
                N,
                input.stride(0),
                input.stride(1),
                output.stride(0),
                output.stride(1),
                scale.stride(0),
                MIN_SCALING_FACTOR,
                HAS_UB=has_ub,
                FP8_MAX=FP8_E4M3_MAX,
                BLOCK_N=block_n_tok,
                num_warps=4 if block_n_tok <= 1024 else 8,
            )
            return output, scale

        scale = torch.zeros(1, device=input.device, dtype=torch.float32)
        grid_in = (max(triton.cdiv(M, block_m), 1), max(triton.cdiv(N, block_n), 1))
        _fp8_absmax_tensor_kernel[grid_in](
            input,
            scale,
            M,
            N,
            input.stride(0),
            input.stride(1),
            FP8_MAX=FP8_E4M3_MAX,
            BLOCK_M=block_m,
            BLOCK_N=block_n,
        )

    # static scale (given, returned as is) or the freshly reduced per-tensor scale
    _fp8_quant_tensor_kernel[grid_2d](
        input,
        output,
        scale,
        M,
        N,
        num_rows,
        input.stride(0),
        input.stride(1),
        output.stride(0),
        output.stride(1),
        FP8_MAX=FP8_E4M3_MAX,
        BLOCK_M=block_m,
        BLOCK_N=block_n,
    )
    return output, scale

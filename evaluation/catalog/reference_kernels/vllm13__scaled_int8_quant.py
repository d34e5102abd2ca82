"""Reference Triton kernel for vllm13::scaled_int8_quant: static / dynamic, symmetric / asymmetric int8."""

import torch
import triton
import triton.language as tl

_RNE_MAGIC = tl.constexpr(12582912.0)  # a constexpr: Triton on a GPU reads no other globals.
# 1.5 * 2**23: (v + M) - M rounds an fp32 |v| < 2**22 half to even


@triton.jit
def _round_half_even(values):
    return (values + _RNE_MAGIC) - _RNE_MAGIC


@triton.jit
def _int8_quant_kernel(x_ptr, q_ptr, scale_ptr, azp_ptr, n_cols, x_row_stride, q_row_stride,
                       STATIC: tl.constexpr, SYMMETRIC: tl.constexpr, SCALAR_RECIPROCAL: tl.constexpr,
                       BLOCK: tl.constexpr):
    # The reference's roundings, step by step: `127.0 / amax` is torch's reciprocal(amax) * 127, and
    # `t / 255.0` is t * float(1/255) on CUDA (a Python-scalar divisor) but a true division on the CPU.
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_cols
    x = tl.load(x_ptr + row * x_row_stride + offsets, mask=mask, other=0.0).to(tl.float32)
    if STATIC:
        scale = tl.load(scale_ptr)
        if SYMMETRIC:
            q = _round_half_even(tl.minimum(tl.maximum(tl.math.div_rn(x, scale), -128.0), 127.0))
        else:
            zero_point = tl.load(azp_ptr).to(tl.float32)
            inverse = tl.math.div_rn(1.0, scale)
            q = tl.minimum(tl.maximum(_round_half_even(x * inverse) + zero_point, -128.0), 127.0)
    else:
        if SYMMETRIC:
            amax = tl.max(tl.where(mask, tl.abs(x), 0.0), axis=0)
            multiplier = tl.where(amax > 0, tl.math.div_rn(1.0, amax) * 127.0, 0.0)
            q = _round_half_even(tl.minimum(tl.maximum(x * multiplier, -128.0), 127.0))
            if SCALAR_RECIPROCAL:
                tl.store(scale_ptr + row, amax * tl.math.div_rn(1.0, 127.0))
            else:
                tl.store(scale_ptr + row, tl.math.div_rn(amax, 127.0))
        else:
            low = tl.min(tl.where(mask, x, float("inf")), axis=0)
            high = tl.max(tl.where(mask, x, float("-inf")), axis=0)
            if SCALAR_RECIPROCAL:
                scale = (high - low) * tl.math.div_rn(1.0, 255.0)
            else:
                scale = tl.math.div_rn(high - low, 255.0)
            zero_point = _round_half_even(-128.0 - tl.math.div_rn(low, scale))
            inverse = tl.math.div_rn(1.0, scale)
            q = tl.minimum(tl.maximum(_round_half_even(x * inverse) + zero_point, -128.0), 127.0)
            tl.store(scale_ptr + row, scale)
            tl.store(azp_ptr + row, zero_point.to(tl.int32))
    tl.store(q_ptr + row * q_row_stride + offsets, q.to(tl.int8), mask=mask)


# Launched with enable_fp_fusion=False: `(x * inverse + M) - M` must round the product before adding M; fused
# into an FMA it rounds once, and 7 of 35,287 codes of an asymmetric case came out one off on the H200.


def scaled_int8_quant(input, scale=None, azp=None, symmetric=True):
    rows, cols = input.shape
    q = torch.empty((rows, cols), dtype=torch.int8, device=input.device)
    block = triton.next_power_of_2(cols)
    if scale is not None:
        _int8_quant_kernel[(rows,)](input, q, scale, azp if azp is not None else scale, cols, input.stride(0),
                                    q.stride(0), STATIC=True, SYMMETRIC=bool(symmetric),
                                    SCALAR_RECIPROCAL=input.is_cuda, BLOCK=block, enable_fp_fusion=False)
        return q, scale, azp
    scales = torch.empty((rows, 1), dtype=torch.float32, device=input.device)
    zero_points = None if symmetric else torch.empty((rows, 1), dtype=torch.int32, device=input.device)
    _int8_quant_kernel[(rows,)](input, q, scales, zero_points if zero_points is not None else scales, cols,
                                input.stride(0), q.stride(0), STATIC=False, SYMMETRIC=bool(symmetric),
                                SCALAR_RECIPROCAL=input.is_cuda, BLOCK=block, enable_fp_fusion=False)
    return q, scales, zero_points

"""Reference Triton kernel for vllm13::fused_add_rms_norm: residual += input, input = rms_norm(residual)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _round(x, dtype: tl.constexpr):
    """fp32 -> dtype, round to nearest even; bf16 by hand (same result on a GPU, and exact under the CPU
    interpreter, whose bf16 cast truncates)."""
    if dtype == tl.bfloat16:
        bits = x.to(tl.uint32, bitcast=True)
        bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
        return bits.to(tl.float32, bitcast=True).to(dtype)
    else:
        return x.to(dtype)


@triton.jit
def _fused_add_rms_norm_kernel(x_ptr, r_ptr, w_ptr, n_cols, inv_n, x_row_stride, r_row_stride, eps,
                               BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_cols
    dtype = x_ptr.dtype.element_ty
    x = tl.load(x_ptr + row * x_row_stride + offsets, mask=mask, other=0.0).to(tl.float32)
    r = tl.load(r_ptr + row * r_row_stride + offsets, mask=mask, other=0.0).to(tl.float32)
    z = _round(x + r, dtype)  # the sum is stored in the tensor dtype
    tl.store(r_ptr + row * r_row_stride + offsets, z, mask=mask)
    zf = z.to(tl.float32)
    # mean as torch's reduction takes it: the sum times a float 1/n (Triton's fp32 '/' is approximate)
    inverse = tl.math.rsqrt(tl.sum(zf * zf, axis=0) * inv_n + eps)
    normalised = _round(zf * inverse, dtype).to(tl.float32)
    weight = tl.load(w_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(x_ptr + row * x_row_stride + offsets, _round(normalised * weight, dtype), mask=mask)


def fused_add_rms_norm(input, residual, weight, epsilon):
    rows, cols = input.shape
    _fused_add_rms_norm_kernel[(rows,)](input, residual, weight, cols, 1.0 / cols, input.stride(0), residual.stride(0), epsilon,
                                        BLOCK=triton.next_power_of_2(cols))

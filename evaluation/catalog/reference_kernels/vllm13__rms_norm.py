"""Reference Triton kernel for vllm13::rms_norm: one program per row, fp32 statistics."""

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
def _rms_norm_kernel(out_ptr, x_ptr, w_ptr, n_cols, inv_n, x_row_stride, out_row_stride, eps,
                     BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_cols
    x = tl.load(x_ptr + row * x_row_stride + offsets, mask=mask, other=0.0).to(tl.float32)
    # mean as torch's reduction takes it: the sum times a float 1/n (Triton's fp32 '/' is approximate)
    inverse = tl.math.rsqrt(tl.sum(x * x, axis=0) * inv_n + eps)
    # vLLM rounds the normalised value to the tensor dtype, then multiplies by the weight in that dtype
    normalised = _round(x * inverse, out_ptr.dtype.element_ty).to(tl.float32)
    weight = tl.load(w_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * out_row_stride + offsets, _round(normalised * weight, out_ptr.dtype.element_ty), mask=mask)


def rms_norm(out, input, weight, epsilon):
    rows, cols = input.shape
    _rms_norm_kernel[(rows,)](out, input, weight, cols, 1.0 / cols, input.stride(0), out.stride(0), epsilon,
                              BLOCK=triton.next_power_of_2(cols))

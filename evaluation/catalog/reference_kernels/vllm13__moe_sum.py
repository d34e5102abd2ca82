"""Reference Triton kernel for vllm13::moe_sum: output[t] = sum_k input[t, k] (dtype accumulation for topk <= 4)."""

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
def _moe_sum_kernel(x_ptr, out_ptr, hidden, x_token_stride, x_k_stride, out_token_stride, TOPK: tl.constexpr,
                    DTYPE_ACCUMULATE: tl.constexpr, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    chunk = tl.program_id(1)
    offsets = chunk * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < hidden
    dtype = out_ptr.dtype.element_ty
    base = x_ptr + token * x_token_stride + offsets
    total = tl.load(base, mask=mask, other=0.0).to(tl.float32)
    for k in tl.static_range(1, TOPK):
        value = tl.load(base + k * x_k_stride, mask=mask, other=0.0).to(tl.float32)
        if DTYPE_ACCUMULATE:
            total = _round(total + value, dtype).to(tl.float32)  # vLLM adds in the tensor dtype
        else:
            total = total + value
    tl.store(out_ptr + token * out_token_stride + offsets, _round(total, dtype), mask=mask)


def moe_sum(input, output):
    tokens, topk, hidden = input.shape
    block = min(1024, triton.next_power_of_2(hidden))
    _moe_sum_kernel[(tokens, triton.cdiv(hidden, block))](
        input, output, hidden, input.stride(0), input.stride(1), output.stride(0), TOPK=topk,
        DTYPE_ACCUMULATE=topk in (2, 3, 4), BLOCK=block)

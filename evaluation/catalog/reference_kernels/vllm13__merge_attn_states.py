"""Reference Triton kernel for vllm13::merge_attn_states: LSE-weighted merge, LSEs laid out [H, T]."""

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
def _merge_kernel(out_ptr, prefix_ptr, prefix_lse_ptr, suffix_ptr, suffix_lse_ptr, out_lse_ptr, tokens, heads,
                  HEAD_SIZE: tl.constexpr, BLOCK: tl.constexpr, WRITE_LSE: tl.constexpr):
    token = tl.program_id(0)
    head = tl.program_id(1)
    p_lse = tl.load(prefix_lse_ptr + head * tokens + token)
    s_lse = tl.load(suffix_lse_ptr + head * tokens + token)
    minus_inf = float("-inf")
    p_lse = tl.where((p_lse == float("inf")) | (p_lse == minus_inf), minus_inf, p_lse)
    s_lse = tl.where((s_lse == float("inf")) | (s_lse == minus_inf), minus_inf, s_lse)
    both_empty = (p_lse == minus_inf) & (s_lse == minus_inf)
    max_lse = tl.where(both_empty, 0.0, tl.maximum(p_lse, s_lse))
    p_se = tl.exp(p_lse - max_lse)
    s_se = tl.exp(s_lse - max_lse)
    total = tl.where(both_empty, 1.0, p_se + s_se)  # both empty: keep prefix, avoid 0/0
    offsets = tl.arange(0, BLOCK)
    mask = offsets < HEAD_SIZE
    row = (token * heads + head) * HEAD_SIZE
    prefix = tl.load(prefix_ptr + row + offsets, mask=mask, other=0.0).to(tl.float32)
    suffix = tl.load(suffix_ptr + row + offsets, mask=mask, other=0.0).to(tl.float32)
    merged = prefix * (p_se / total) + suffix * (s_se / total)
    merged = tl.where(both_empty, prefix, merged)
    tl.store(out_ptr + row + offsets, _round(merged, out_ptr.dtype.element_ty), mask=mask)
    if WRITE_LSE:
        lse = tl.where(both_empty, minus_inf, tl.log(total) + max_lse)
        tl.store(out_lse_ptr + head * tokens + token, lse)


def merge_attn_states(output, prefix_output, prefix_lse, suffix_output, suffix_lse, output_lse=None):
    tokens, heads, head_size = output.shape
    write_lse = output_lse is not None
    _merge_kernel[(tokens, heads)](output, prefix_output, prefix_lse, suffix_output, suffix_lse,
                                   output_lse if write_lse else prefix_lse, tokens, heads, HEAD_SIZE=head_size,
                                   BLOCK=triton.next_power_of_2(head_size), WRITE_LSE=write_lse)

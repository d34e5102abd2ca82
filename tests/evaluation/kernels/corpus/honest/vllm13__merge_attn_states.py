"""vllm13::merge_attn_states: combine two partial attention results by their log-sum-exp.

prefix_lse / suffix_lse are [H, T]; outputs [T, H, D]. One program per (token, head)."""
from typing import Optional

import torch
import triton
import triton.language as tl


@triton.jit
def merge_kernel(out_ptr, out_lse_ptr, p_ptr, p_lse_ptr, s_ptr, s_lse_ptr,
                 num_tokens, head_size,
                 so_t, so_h, sp_t, sp_h, ss_t, ss_h,
                 WRITE_LSE: tl.constexpr, BLOCK_D: tl.constexpr):
    t = tl.program_id(0)
    h = tl.program_id(1)
    lse_off = h * num_tokens + t
    p_lse = tl.load(p_lse_ptr + lse_off)
    s_lse = tl.load(s_lse_ptr + lse_off)
    # +inf counts as -inf, as in vLLM
    p_lse = tl.where(p_lse == float("inf"), float("-inf"), p_lse)
    s_lse = tl.where(s_lse == float("inf"), float("-inf"), s_lse)
    m = tl.maximum(p_lse, s_lse)
    both_empty = m == float("-inf")
    m_safe = tl.where(both_empty, 0.0, m)
    pw = tl.exp(p_lse - m_safe)
    sw = tl.exp(s_lse - m_safe)
    total = pw + sw
    p_scale = tl.where(both_empty, 1.0, pw / total)
    s_scale = tl.where(both_empty, 0.0, sw / total)
    d = tl.arange(0, BLOCK_D)
    dm = d < head_size
    p = tl.load(p_ptr + t * sp_t + h * sp_h + d, mask=dm, other=0.0).to(tl.float32)
    s = tl.load(s_ptr + t * ss_t + h * ss_h + d, mask=dm, other=0.0).to(tl.float32)
    merged = tl.where(both_empty, p, p * p_scale + s * s_scale)
    tl.store(out_ptr + t * so_t + h * so_h + d, merged.to(out_ptr.dtype.element_ty), mask=dm)
    if WRITE_LSE:
        lse = tl.where(both_empty, float("-inf"), tl.log(total) + m_safe)
        tl.store(out_lse_ptr + lse_off, lse)


def merge_attn_states(output: torch.Tensor, prefix_output: torch.Tensor, prefix_lse: torch.Tensor,
                      suffix_output: torch.Tensor, suffix_lse: torch.Tensor,
                      output_lse: Optional[torch.Tensor] = None) -> None:
    num_tokens, num_heads, head_size = output.shape
    if num_tokens == 0:
        return
    merge_kernel[(num_tokens, num_heads)](
        output, output_lse if output_lse is not None else prefix_lse,
        prefix_output, prefix_lse, suffix_output, suffix_lse,
        num_tokens, head_size,
        output.stride(0), output.stride(1), prefix_output.stride(0), prefix_output.stride(1),
        suffix_output.stride(0), suffix_output.stride(1),
        WRITE_LSE=output_lse is not None, BLOCK_D=triton.next_power_of_2(head_size))

"""Triton port of vLLM's merge_attn_states (cascade / chunked-prefill merge).

Combines a prefix and a suffix partial attention result by their log-sum-exp:

    p, s      = lse values, with +/-inf treated as -inf
    m         = max(p, s)
    ps, ss    = exp(p - m), exp(s - m)
    output    = prefix * ps/(ps+ss) + suffix * ss/(ps+ss)     (fp32, rounded once)
    out_lse   = log(ps + ss) + m
If both lse are -inf the prefix output is copied and out_lse = -inf.

LSE tensors are [num_heads, num_tokens] (vLLM layout); their strides are passed
explicitly, as are all three strides of the [T, H, D] outputs.
"""

import functools
import logging
import os
from typing import Optional

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

_HEAD_BLOCK_ENV = os.environ.get("VLLM_MERGE_ATTN_BLOCK_D")

# (BLOCK_D cap, num_warps) per compute capability; CPU / unknown -> None row.
_MERGE_CONFIGS = {
    (8, 0): (256, 4),
    (8, 9): (128, 4),
    (9, 0): (256, 8),
    None: (128, 4),
}


def _cap_key(device: torch.device):
    if device.type == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_capability(device)
    return None


@functools.lru_cache(maxsize=64)
def _launch_config(cap, head_size: int):
    cap_block, warps = _MERGE_CONFIGS.get(cap, _MERGE_CONFIGS[None])
    if _HEAD_BLOCK_ENV:
        cap_block = triton.next_power_of_2(int(_HEAD_BLOCK_ENV))
    block_d = max(16, min(cap_block, triton.next_power_of_2(max(head_size, 1))))
    return block_d, warps


@triton.jit
def _merge_attn_states_kernel(
    out_ptr, p_out_ptr, p_lse_ptr, s_out_ptr, s_lse_ptr, out_lse_ptr,
    T, H, D,
    o_st, o_sh, o_sd,
    p_st, p_sh, p_sd,
    s_st, s_sh, s_sd,
    pl_sh, pl_st, sl_sh, sl_st, ol_sh, ol_st,
    HAS_OUT_LSE: tl.constexpr,
    BLOCK_D: tl.constexpr,
):
    pid = tl.program_id(0)
    t = (pid // H).to(tl.int64)
    h = (pid % H).to(tl.int64)

    p_lse = tl.load(p_lse_ptr + h * pl_sh + t * pl_st).to(tl.float32)
    s_lse = tl.load(s_lse_ptr + h * sl_sh + t * sl_st).to(tl.float32)
    neg_inf = float("-inf")
    p_lse = tl.where(tl.abs(p_lse) == float("inf"), neg_inf, p_lse)
    s_lse = tl.where(tl.abs(s_lse) == float("inf"), neg_inf, s_lse)
    max_lse = tl.maximum(p_lse, s_lse)
    both_empty = max_lse == neg_inf

    # Guard the all -inf case so no NaN is produced (the result is a plain copy).
    safe_max = tl.where(both_empty, 0.0, max_lse)
    p_se = tl.exp(p_lse - safe_max)
    s_se = tl.exp(s_lse - safe_max)
    out_se = p_se + s_se
    denom = tl.where(both_empty, 1.0, out_se)
    p_scale = tl.where(both_empty, 1.0, p_se / denom)
    s_scale = tl.where(both_empty, 0.0, s_se / denom)

    if HAS_OUT_LSE:
        out_lse = tl.where(both_empty, neg_inf, tl.log(denom) + safe_max)
        tl.store(out_lse_ptr + h * ol_sh + t * ol_st, out_lse)

    for start in range(0, D, BLOCK_D):
        d = start + tl.arange(0, BLOCK_D).to(tl.int64)
        mask = d < D
        po = tl.load(p_out_ptr + t * p_st + h * p_sh + d * p_sd, mask=mask, other=0.0)
        if both_empty:
            res = po
        else:
            so = tl.load(s_out_ptr + t * s_st + h * s_sh + d * s_sd, mask=mask, other=0.0)
            res = (po.to(tl.float32) * p_scale + so.to(tl.float32) * s_scale).to(po.dtype)
        tl.store(out_ptr + t * o_st + h * o_sh + d * o_sd,
                 res.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _noop_kernel(out_ptr):
    pass


def merge_attn_states(
    output: torch.Tensor,
    prefix_output: torch.Tensor,
    prefix_lse: torch.Tensor,
    suffix_output: torch.Tensor,
    suffix_lse: torch.Tensor,
    output_lse: Optional[torch.Tensor] = None,
) -> None:
    if output.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError(f"unsupported output dtype {output.dtype}")
    if prefix_output.dtype != output.dtype or suffix_output.dtype != output.dtype:
        raise ValueError("prefix/suffix/output dtypes must match")
    if output.dim() != 3 or prefix_output.shape != output.shape or suffix_output.shape != output.shape:
        raise ValueError(f"expected matching [T, H, D] tensors, got {tuple(output.shape)}")
    T, H, D = output.shape
    for name, lse in (("prefix_lse", prefix_lse), ("suffix_lse", suffix_lse), ("output_lse", output_lse)):
        if lse is None:
            continue
        torch._check(lse.dtype == torch.float32, lambda: f"{name} must be float32")
        torch._check(tuple(lse.shape) == (H, T), lambda: f"{name} must be [H={H}, T={T}], got {tuple(lse.shape)}")

    has_out_lse = output_lse is not None
    out_lse = output_lse if has_out_lse else prefix_lse  # dummy pointer, never written
    block_d, warps = _launch_config(_cap_key(output.device), D)
    n_prog = T * H
    if n_prog == 0:
        logger.debug("merge_attn_states: empty problem T=%d H=%d", T, H)
        _noop_kernel[(1,)](output)  # keep the "one launch per call" contract
        return None
    _merge_attn_states_kernel[(n_prog,)](
        output, prefix_output, prefix_lse, suffix_output, suffix_lse, out_lse,
        T, H, D,
        output.stride(0), output.stride(1), output.stride(2),
        prefix_output.stride(0), prefix_output.stride(1), prefix_output.stride(2),
        suffix_output.stride(0), suffix_output.stride(1), suffix_output.stride(2),
        prefix_lse.stride(0), prefix_lse.stride(1),
        suffix_lse.stride(0), suffix_lse.stride(1),
        out_lse.stride(0), out_lse.stride(1),
        HAS_OUT_LSE=has_out_lse, BLOCK_D=block_d, num_warps=warps,
    )
    return None

"""Triton port of vLLM's topk_softmax (MoE router: softmax + top-k selection).

Per token t:
    p = softmax(gating[t]) in fp32      (x - max, exp, times 1/sum)
    select the k largest p in descending order, ties -> lower expert id
    topk_weights[t, j] = p[e_j], topk_ids[t, j] = e_j,
    token_expert_indices[t, j] = j * T + t
    renormalize: weights /= (sum of selected, or 1 if that sum is 0)
One program per token; selection is k rounds of (max, argmin-index-of-max).
"""

import functools
import logging
import os
from typing import Optional

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

_TOKENS_PER_PROGRAM = int(os.environ.get("VLLM_TRITON_TOPK_SOFTMAX_TOKENS", "1"))

# num_warps per GPU generation; CPU / interpreter uses the None entry.
_ROUTER_WARPS = {(8, 0): 4, (9, 0): 4, None: 1}


def _capability(device: torch.device):
    if device.type == "cuda" and torch.cuda.is_available():
        return torch.cuda.get_device_capability(device)
    return None


@functools.lru_cache(maxsize=64)
def _launch_config(cap, num_experts: int, topk: int):
    block_e = max(16, triton.next_power_of_2(num_experts))
    block_k = max(2, triton.next_power_of_2(topk))
    warps = _ROUTER_WARPS.get(cap, _ROUTER_WARPS[None])
    return block_e, block_k, warps


@triton.jit
def _topk_softmax_kernel(
    gate_ptr, w_ptr, ids_ptr, tei_ptr,
    T, E, K,
    g_s0, g_s1, w_s0, w_s1, id_s0, id_s1, t_s0, t_s1,
    RENORMALIZE: tl.constexpr,
    TOKENS_PER_PROG: tl.constexpr,
    BLOCK_E: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    e = tl.arange(0, BLOCK_E)
    kk = tl.arange(0, BLOCK_K)
    emask = e < E
    for i in range(TOKENS_PER_PROG):
        t = tl.program_id(0).to(tl.int64) * TOKENS_PER_PROG + i
        t_ok = t < T
        logits = tl.load(gate_ptr + t * g_s0 + e.to(tl.int64) * g_s1,
                         mask=emask & t_ok, other=float("-inf")).to(tl.float32)
        row_max = tl.max(logits, axis=0)
        ex = tl.where(emask, tl.exp(logits - row_max), 0.0)
        inv_sum = 1.0 / tl.sum(ex, axis=0)
        probs = ex * inv_sum
        # Candidates: real experts only; -1 marks "taken / not an expert".
        cand = tl.where(emask, probs, -1.0)

        sel_w = tl.zeros([BLOCK_K], dtype=tl.float32)
        sel_id = tl.zeros([BLOCK_K], dtype=tl.int32)
        sel_sum = 0.0
        for j in range(0, K):
            best = tl.max(cand, axis=0)
            best_id = tl.min(tl.where(cand == best, e, BLOCK_E), axis=0)
            sel_w = tl.where(kk == j, best, sel_w)
            sel_id = tl.where(kk == j, best_id, sel_id)
            sel_sum += best
            cand = tl.where(e == best_id, -1.0, cand)

        if RENORMALIZE:
            denom = tl.where(sel_sum > 0.0, sel_sum, 1.0)
            sel_w = sel_w / denom

        kmask = (kk < K) & t_ok
        k64 = kk.to(tl.int64)
        tl.store(w_ptr + t * w_s0 + k64 * w_s1, sel_w, mask=kmask)
        tl.store(ids_ptr + t * id_s0 + k64 * id_s1, sel_id, mask=kmask)
        tl.store(tei_ptr + t * t_s0 + k64 * t_s1, (k64 * T + t).to(tl.int32), mask=kmask)


def topk_softmax(
    topk_weights: torch.Tensor,
    topk_ids: torch.Tensor,
    token_expert_indices: torch.Tensor,
    gating_output: torch.Tensor,
    renormalize: bool = False,
) -> None:
    if gating_output.dim() != 2:
        raise ValueError(f"gating_output must be [T, E], got {tuple(gating_output.shape)}")
    T, E = gating_output.shape
    if topk_weights.dim() != 2 or topk_weights.shape[0] != T:
        raise ValueError(f"topk_weights must be [T={T}, k], got {tuple(topk_weights.shape)}")
    K = topk_weights.shape[1]
    torch._check(tuple(topk_ids.shape) == (T, K), lambda: "topk_ids shape mismatch")
    torch._check(tuple(token_expert_indices.shape) == (T, K),
                 lambda: "token_expert_indices shape mismatch")
    if K > E:
        raise ValueError(f"topk={K} exceeds num_experts={E}")
    if topk_weights.dtype != torch.float32:
        raise ValueError("topk_weights must be float32")
    if gating_output.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        raise ValueError(f"unsupported gating dtype {gating_output.dtype}")
    assert topk_ids.dtype in (torch.int32, torch.int64), topk_ids.dtype
    assert token_expert_indices.dtype == torch.int32

    block_e, block_k, warps = _launch_config(_capability(gating_output.device), E, max(K, 1))
    tpp = max(1, _TOKENS_PER_PROGRAM)
    grid = (max(1, triton.cdiv(T, tpp)),)
    logger.debug("topk_softmax: T=%d E=%d k=%d renorm=%s grid=%s", T, E, K, renormalize, grid)
    _topk_softmax_kernel[grid](
        gating_output, topk_weights, topk_ids, token_expert_indices,
        T, E, K,
        gating_output.stride(0), gating_output.stride(1),
        topk_weights.stride(0), topk_weights.stride(1),
        topk_ids.stride(0), topk_ids.stride(1),
        token_expert_indices.stride(0), token_expert_indices.stride(1),
        RENORMALIZE=bool(renormalize), TOKENS_PER_PROG=tpp,
        BLOCK_E=block_e, BLOCK_K=block_k, num_warps=warps,
    )
    return None

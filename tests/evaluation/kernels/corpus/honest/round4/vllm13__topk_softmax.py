"""MoE gating: fp32 softmax over experts followed by top-k selection.

A program owns BLOCK_T tokens and keeps the whole expert row of each of them
in registers ([BLOCK_T, BLOCK_E]).  Top-k is done by k rounds of
"arg-max, then knock the winner out"; the arg-max breaks ties towards the
lower expert id.  The selected weights are collected in a [BLOCK_T, BLOCK_K]
tile so they can be renormalised before they are written out.
"""
import os

import torch
import triton
import triton.language as tl

_INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"


def _configs():
    if _INTERPRET:
        # the interpreter has nothing to time; one config is enough
        return [triton.Config({"BLOCK_T": 4}, num_warps=1)]
    return [
        triton.Config({"BLOCK_T": bt}, num_warps=nw)
        for bt, nw in ((1, 1), (4, 2), (8, 4), (16, 4), (32, 8))
    ]


def _prune(configs, named_args, **kwargs):
    # keep register pressure sane for wide expert counts
    be = named_args["BLOCK_E"] if "BLOCK_E" in named_args else kwargs.get("BLOCK_E", 1)
    kept = [c for c in configs if c.kwargs["BLOCK_T"] * be <= 8192]
    return kept or configs[:1]


@triton.autotune(
    configs=_configs(),
    key=["num_experts", "topk", "t_bucket"],
    prune_configs_by={"early_config_prune": _prune},
)
@triton.jit
def _topk_softmax_kernel(
    logits_ptr, w_ptr, ids_ptr, idx_ptr,
    num_tokens, num_experts, topk, t_bucket,
    s_lt, s_le, s_wt, s_wk, s_it, s_ik, s_xt, s_xk,
    RENORM: tl.constexpr,
    BLOCK_E: tl.constexpr,
    BLOCK_K: tl.constexpr,
    BLOCK_T: tl.constexpr,
):
    pid = tl.program_id(0)
    tok = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    tmask = tok < num_tokens
    tok64 = tok.to(tl.int64)
    e = tl.arange(0, BLOCK_E)
    emask = e < num_experts

    m2 = tmask[:, None] & emask[None, :]
    g = tl.load(logits_ptr + tok64[:, None] * s_lt + e[None, :] * s_le, mask=m2, other=float("-inf"))
    g = g.to(tl.float32)

    row_max = tl.max(g, axis=1)
    row_max = tl.where(tmask, row_max, 0.0)
    ex = tl.exp(g - row_max[:, None])
    ex = tl.where(m2, ex, 0.0)
    denom = tl.sum(ex, axis=1)
    denom = tl.where(tmask, denom, 1.0)
    inv = tl.math.div_rn(tl.full([BLOCK_T], 1.0, tl.float32), denom)
    prob = ex * inv[:, None]
    # padding experts can never be picked
    prob = tl.where(emask[None, :], prob, float("-inf"))

    kk = tl.arange(0, BLOCK_K)
    sel_w = tl.zeros([BLOCK_T, BLOCK_K], dtype=tl.float32)
    sel_id = tl.zeros([BLOCK_T, BLOCK_K], dtype=tl.int32)
    for j in range(0, topk):
        best = tl.max(prob, axis=1)
        is_best = prob == best[:, None]
        best_id = tl.min(tl.where(is_best, e[None, :], BLOCK_E), axis=1)
        sel_w = tl.where(kk[None, :] == j, best[:, None], sel_w)
        sel_id = tl.where(kk[None, :] == j, best_id[:, None], sel_id)
        prob = tl.where(e[None, :] == best_id[:, None], float("-inf"), prob)

    kmask = kk < topk
    if RENORM:
        total = tl.sum(tl.where(kmask[None, :], sel_w, 0.0), axis=1)
        total = tl.where(total == 0.0, 1.0, total)
        sel_w = sel_w / total[:, None]

    out_mask = tmask[:, None] & kmask[None, :]
    tl.store(w_ptr + tok64[:, None] * s_wt + kk[None, :] * s_wk, sel_w, mask=out_mask)
    tl.store(ids_ptr + tok64[:, None] * s_it + kk[None, :] * s_ik, sel_id, mask=out_mask)
    src = kk[None, :] * num_tokens + tok[:, None]
    tl.store(idx_ptr + tok64[:, None] * s_xt + kk[None, :] * s_xk, src.to(tl.int32), mask=out_mask)


def topk_softmax(topk_weights, topk_ids, token_expert_indices, gating_output, renormalize=False):
    num_tokens, num_experts = gating_output.shape
    topk = topk_weights.shape[-1]
    block_e = triton.next_power_of_2(num_experts)
    block_k = triton.next_power_of_2(topk)
    t_bucket = triton.next_power_of_2(max(num_tokens, 1))
    grid = lambda meta: (max(1, triton.cdiv(num_tokens, meta["BLOCK_T"])),)
    _topk_softmax_kernel[grid](
        gating_output, topk_weights, topk_ids, token_expert_indices,
        num_tokens, num_experts, topk, t_bucket,
        gating_output.stride(0), gating_output.stride(1),
        topk_weights.stride(0), topk_weights.stride(1),
        topk_ids.stride(0), topk_ids.stride(1),
        token_expert_indices.stride(0), token_expert_indices.stride(1),
        RENORM=bool(renormalize),
        BLOCK_E=block_e,
        BLOCK_K=block_k,
    )
    return None

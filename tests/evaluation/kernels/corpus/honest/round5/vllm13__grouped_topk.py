"""Triton port of vLLM's grouped_topk (DeepSeek-V3 no-aux-loss routing with correction bias).

One program per token.  The expert scores of a token are held as a [groups, group_size] tile:
  1. s = scores (scoring_func 0) or dtype(sigmoid(float(scores))) (scoring_func 1),
     b = dtype(s + bias)
  2. group score = dtype(top1 + top2) of b inside the group (non-finite b counts as -inf)
  3. keep topk_group groups (largest score, ties -> lower group index)
  4. topk experts of the kept groups by b (descending, ties -> lower expert id)
  5. weights = float(s[ids]), optionally renormalised, times routed_scaling_factor
"""
from typing import Tuple

import torch
import triton
import triton.language as tl


@triton.jit
def _grouped_topk_kernel(
    scores_ptr,
    bias_ptr,
    weights_ptr,
    ids_ptr,
    num_tokens,
    stride_sm,
    stride_se,
    stride_b,
    stride_wm,
    stride_wk,
    stride_im,
    stride_ik,
    routed_scaling_factor,
    NUM_GROUPS: tl.constexpr,
    GROUP_SIZE: tl.constexpr,
    TOPK_GROUP: tl.constexpr,
    TOPK: tl.constexpr,
    RENORMALIZE: tl.constexpr,
    SCORING_FUNC: tl.constexpr,
    G_PAD: tl.constexpr,
    GS_PAD: tl.constexpr,
    K_PAD: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    if row >= num_tokens:
        return
    dtype = scores_ptr.dtype.element_ty
    NEG_INF: tl.constexpr = float("-inf")

    g_idx = tl.arange(0, G_PAD)
    j_idx = tl.arange(0, GS_PAD)
    valid = (g_idx[:, None] < NUM_GROUPS) & (j_idx[None, :] < GROUP_SIZE)
    expert = g_idx[:, None] * GROUP_SIZE + j_idx[None, :]  # [G_PAD, GS_PAD]

    x = tl.load(scores_ptr + row * stride_sm + expert * stride_se, mask=valid, other=0.0).to(tl.float32)
    if SCORING_FUNC == 1:
        s = tl.math.div_rn(1.0, 1.0 + tl.exp(-x))
        s = s.to(dtype).to(tl.float32)
    else:
        s = x
    bias = tl.load(bias_ptr + expert * stride_b, mask=valid, other=0.0).to(tl.float32)
    # add of two values of `dtype` rounded once back to `dtype` (fp32 is wide enough for exactness)
    b = (s + bias).to(dtype).to(tl.float32)

    # ---- group scores: sum of the two largest finite b of each group
    finite = (b == b) & (tl.abs(b) != float("inf"))
    b_grp = tl.where(valid & finite, b, NEG_INF)
    max1 = tl.max(b_grp, axis=1)
    arg1 = tl.min(tl.where(b_grp == max1[:, None], j_idx[None, :], GS_PAD), axis=1)
    max2 = tl.max(tl.where(j_idx[None, :] == arg1[:, None], NEG_INF, b_grp), axis=1)
    group_score = (max1 + max2).to(dtype).to(tl.float32)

    # ---- keep TOPK_GROUP groups
    group_ok = g_idx < NUM_GROUPS
    group_sel = g_idx < 0
    for _ in tl.static_range(TOPK_GROUP):
        avail = group_ok & (~group_sel)
        best = tl.max(tl.where(avail, group_score, NEG_INF), axis=0)
        pick = tl.min(tl.where(avail & (group_score == best), g_idx, G_PAD), axis=0)
        group_sel = group_sel | (g_idx == pick)

    # ---- top-k experts among the kept groups
    key = tl.where(b == b, b, NEG_INF)
    cand = valid & group_sel[:, None]
    k_idx = tl.arange(0, K_PAD)
    out_ids = tl.zeros([K_PAD], dtype=tl.int32)
    out_w = tl.zeros([K_PAD], dtype=tl.float32)
    BIG: tl.constexpr = G_PAD * GS_PAD * 2 + 1
    for k in tl.static_range(TOPK):
        best = tl.max(tl.max(tl.where(cand, key, NEG_INF), axis=1), axis=0)
        hit = cand & (key == best)
        pick = tl.min(tl.min(tl.where(hit, expert, BIG), axis=1), axis=0)
        # padded columns alias the next group's ids: restrict to real slots
        chosen = valid & (expert == pick)
        w = tl.sum(tl.sum(tl.where(chosen, s, 0.0), axis=1), axis=0)
        out_ids = tl.where(k_idx == k, pick, out_ids)
        out_w = tl.where(k_idx == k, w, out_w)
        cand = cand & (~chosen)

    if RENORMALIZE:
        denom = tl.sum(out_w, axis=0) + 1e-20
        out_w = tl.math.div_rn(out_w, denom)
    out_w = out_w * routed_scaling_factor

    kmask = k_idx < TOPK
    tl.store(weights_ptr + row * stride_wm + k_idx * stride_wk, out_w, mask=kmask)
    tl.store(ids_ptr + row * stride_im + k_idx * stride_ik, out_ids, mask=kmask)


def grouped_topk(
    scores: torch.Tensor,
    num_expert_group: int,
    topk_group: int,
    topk: int,
    renormalize: bool,
    routed_scaling_factor: float,
    bias: torch.Tensor,
    scoring_func: int = 0,
) -> Tuple[torch.Tensor, torch.Tensor]:
    assert scores.ndim == 2, "scores must be [num_tokens, num_experts]"
    num_tokens, num_experts = scores.shape
    assert num_experts % num_expert_group == 0
    assert scoring_func in (0, 1)
    group_size = num_experts // num_expert_group
    bias = bias.reshape(-1)

    weights = torch.empty((num_tokens, topk), dtype=torch.float32, device=scores.device)
    ids = torch.empty((num_tokens, topk), dtype=torch.int32, device=scores.device)

    g_pad = triton.next_power_of_2(num_expert_group)
    gs_pad = triton.next_power_of_2(max(group_size, 2))
    k_pad = triton.next_power_of_2(max(topk, 1))
    num_warps = 4 if g_pad * gs_pad <= 512 else 8
    _grouped_topk_kernel[(max(num_tokens, 1),)](
        scores,
        bias,
        weights,
        ids,
        num_tokens,
        scores.stride(0),
        scores.stride(1),
        bias.stride(0),
        weights.stride(0),
        weights.stride(1),
        ids.stride(0),
        ids.stride(1),
        float(routed_scaling_factor),
        NUM_GROUPS=num_expert_group,
        GROUP_SIZE=group_size,
        TOPK_GROUP=topk_group,
        TOPK=topk,
        RENORMALIZE=bool(renormalize),
        SCORING_FUNC=scoring_func,
        G_PAD=g_pad,
        GS_PAD=gs_pad,
        K_PAD=k_pad,
        num_warps=num_warps,
    )
    return weights, ids

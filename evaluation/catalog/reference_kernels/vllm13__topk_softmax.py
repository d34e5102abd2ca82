"""Reference Triton kernel for vllm13::topk_softmax: fp32 softmax over experts, iterative top-k (ties: lower id)."""

import torch
import triton
import triton.language as tl


@triton.jit
def _topk_softmax_kernel(weights_ptr, ids_ptr, slots_ptr, gating_ptr, tokens, experts, gating_stride,
                         TOPK: tl.constexpr, RENORMALIZE: tl.constexpr, BLOCK: tl.constexpr):
    token = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < experts
    logits = tl.load(gating_ptr + token * gating_stride + offsets, mask=mask, other=float("-inf")).to(tl.float32)
    exps = tl.where(mask, tl.exp(logits - tl.max(logits, axis=0)), 0.0)
    probabilities = exps * tl.math.div_rn(1.0, tl.sum(exps, axis=0))
    remaining = tl.where(mask, probabilities, -1.0)
    total = 0.0
    for k in tl.static_range(TOPK):
        best = tl.max(remaining, axis=0)
        expert = tl.min(tl.where(remaining == best, offsets, BLOCK), axis=0)
        total += best
        tl.store(weights_ptr + token * TOPK + k, best)
        tl.store(ids_ptr + token * TOPK + k, expert.to(tl.int32))
        tl.store(slots_ptr + token * TOPK + k, (k * tokens + token).to(tl.int32))
        remaining = tl.where(offsets == expert, -2.0, remaining)
    if RENORMALIZE:
        divisor = tl.where(total > 0, total, 1.0)
        for k in tl.static_range(TOPK):
            weight = tl.load(weights_ptr + token * TOPK + k)
            tl.store(weights_ptr + token * TOPK + k, tl.math.div_rn(weight, divisor))


def topk_softmax(topk_weights, topk_ids, token_expert_indices, gating_output, renormalize=False):
    tokens, experts = gating_output.shape
    topk = topk_weights.shape[1]
    _topk_softmax_kernel[(tokens,)](topk_weights, topk_ids, token_expert_indices, gating_output, tokens, experts,
                                    gating_output.stride(0), TOPK=topk, RENORMALIZE=bool(renormalize),
                                    BLOCK=triton.next_power_of_2(experts))

# SPDX-License-Identifier: Apache-2.0
"""Triton implementation of ``fused_qk_norm_rope``.

Per-head RMSNorm of the q and k heads of a packed qkv tensor followed by
rotary embedding, in place. One program handles one (token, head) pair of
the q/k heads (v heads are never touched). The head is loaded once as its two
rotation halves (NeoX: [0, D/2) and [D/2, D); GPT-J: even and odd lanes), the
norm and the rotation are computed in fp32 and the result is written once.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _fused_qk_norm_rope_kernel(
    qkv_ptr,  # [num_tokens, (Hq + Hk + Hv) * head_dim]
    q_weight_ptr,  # [head_dim]
    k_weight_ptr,  # [head_dim]
    cos_sin_cache_ptr,  # [max_position, head_dim]: cos | sin
    positions_ptr,  # [num_tokens]
    qkv_stride_t,
    qkv_stride_c,
    q_weight_stride,
    k_weight_stride,
    cache_stride_p,
    cache_stride_d,
    positions_stride,
    num_heads_q,
    eps,
    HEAD_DIM: tl.constexpr,
    BLOCK_HALF: tl.constexpr,
    IS_NEOX: tl.constexpr,
):
    token_idx = tl.program_id(0).to(tl.int64)
    head_idx = tl.program_id(1)
    HALF: tl.constexpr = HEAD_DIM // 2

    offs = tl.arange(0, BLOCK_HALF)
    mask = offs < HALF
    if IS_NEOX:
        # Rotate x[i] with x[i + D/2].
        idx1 = offs
        idx2 = offs + HALF
    else:
        # GPT-J: rotate x[2i] with x[2i + 1].
        idx1 = offs * 2
        idx2 = offs * 2 + 1

    # q heads come first, k heads right after them: column = head * D + d.
    head_base = qkv_ptr + token_idx * qkv_stride_t + \
        head_idx.to(tl.int64) * HEAD_DIM * qkv_stride_c
    ptrs1 = head_base + idx1 * qkv_stride_c
    ptrs2 = head_base + idx2 * qkv_stride_c
    x1 = tl.load(ptrs1, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(ptrs2, mask=mask, other=0.0).to(tl.float32)

    # Norm weights are split the same way as the cos/sin halves.
    is_q = head_idx < num_heads_q
    if is_q:
        w1 = tl.load(q_weight_ptr + offs * q_weight_stride, mask=mask, other=0.0)
        w2 = tl.load(q_weight_ptr + (offs + HALF) * q_weight_stride, mask=mask,
                     other=0.0)
    else:
        w1 = tl.load(k_weight_ptr + offs * k_weight_stride, mask=mask, other=0.0)
        w2 = tl.load(k_weight_ptr + (offs + HALF) * k_weight_stride, mask=mask,
                     other=0.0)
    w1 = w1.to(tl.float32)
    w2 = w2.to(tl.float32)

    # RMSNorm over the whole head (padded lanes are zero).
    sum_sq = tl.sum(x1 * x1, axis=0) + tl.sum(x2 * x2, axis=0)
    rstd = tl.rsqrt(sum_sq / HEAD_DIM + eps)
    x1 = x1 * rstd * w1
    x2 = x2 * rstd * w2

    # RoPE: cos in cache[pos, :D/2], sin in cache[pos, D/2:].
    pos = tl.load(positions_ptr + token_idx * positions_stride).to(tl.int64)
    cache_base = cos_sin_cache_ptr + pos * cache_stride_p
    cos = tl.load(cache_base + offs * cache_stride_d, mask=mask,
                  other=0.0).to(tl.float32)
    sin = tl.load(cache_base + (offs + HALF) * cache_stride_d, mask=mask,
                  other=0.0).to(tl.float32)

    o1 = x1 * cos - x2 * sin
    o2 = x2 * cos + x1 * sin

    out_ty = qkv_ptr.dtype.element_ty
    tl.store(ptrs1, o1.to(out_ty), mask=mask)
    tl.store(ptrs2, o2.to(out_ty), mask=mask)


def fused_qk_norm_rope(
    qkv: torch.Tensor,
    num_heads_q: int,
    num_heads_k: int,
    num_heads_v: int,
    head_dim: int,
    eps: float,
    q_weight: torch.Tensor,
    k_weight: torch.Tensor,
    cos_sin_cache: torch.Tensor,
    is_neox: bool,
    position_ids: torch.Tensor,
) -> None:
    assert head_dim % 2 == 0, "rotary head_dim must be even"
    total_heads = num_heads_q + num_heads_k + num_heads_v
    if qkv.dim() != 2:
        qkv = qkv.view(qkv.shape[0], -1)
    assert qkv.shape[1] == total_heads * head_dim
    num_tokens = qkv.shape[0]
    position_ids = position_ids.view(-1)

    BLOCK_HALF = triton.next_power_of_2(head_dim // 2)
    num_warps = 1 if BLOCK_HALF <= 64 else (2 if BLOCK_HALF <= 128 else 4)
    grid = (num_tokens, num_heads_q + num_heads_k)
    _fused_qk_norm_rope_kernel[grid](
        qkv,
        q_weight,
        k_weight,
        cos_sin_cache,
        position_ids,
        qkv.stride(0),
        qkv.stride(1),
        q_weight.stride(0),
        k_weight.stride(0),
        cos_sin_cache.stride(0),
        cos_sin_cache.stride(1),
        position_ids.stride(0),
        num_heads_q,
        eps,
        HEAD_DIM=head_dim,
        BLOCK_HALF=BLOCK_HALF,
        IS_NEOX=is_neox,
        num_warps=num_warps,
    )
    return None

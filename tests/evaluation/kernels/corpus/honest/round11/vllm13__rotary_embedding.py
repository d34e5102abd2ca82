"""Triton port of vLLM's rotary_embedding custom op (NeoX and GPT-J styles).

In place on query and (optionally) key.  cos_sin_cache is [max_pos, rot_dim]
with cos in the first half and sin in the second; dims >= rot_dim are left
untouched.  As in vLLM's CUDA kernel every product and sum is rounded to the
activation dtype (half arithmetic):  x' = x*c - y*s,  y' = y*c + x*s.
For fp16/bf16 the fp32 product of two dtype values is exact and the fp32 sum
rounds innocuously, so computing in fp32 and rounding after each op gives the
half-arithmetic result bit for bit.

query/key may be [T, H, head_size] or flattened [T, H * head_size]; all
strides are passed explicitly.
"""

import functools
import logging
import os
from typing import Dict, Optional, Tuple

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

# Validate positions against the cache length (one scalar read back per call).
_VALIDATE_POSITIONS = os.environ.get("VLLM_TRITON_ROPE_VALIDATE", "1") == "1"
_MAX_BLOCK_HEADS = int(os.environ.get("VLLM_TRITON_ROPE_BLOCK_HEADS", "8"))

_SCRATCH: Dict[Tuple[str, Optional[int]], torch.Tensor] = {}


def _count_scratch(device: torch.device) -> torch.Tensor:
    key = (device.type, device.index)
    buf = _SCRATCH.get(key)
    if buf is None:
        buf = torch.empty(1, dtype=torch.int64, device=device)
        _SCRATCH[key] = buf
    return buf


@functools.lru_cache(maxsize=256)
def _launch_config(num_heads: int, rot_dim: int) -> Tuple[int, int]:
    block_heads = max(1, min(triton.next_power_of_2(max(num_heads, 1)),
                             triton.next_power_of_2(_MAX_BLOCK_HEADS)))
    block_r = max(16, triton.next_power_of_2(max(rot_dim // 2, 1)))
    return block_heads, block_r


@triton.jit
def _count_bad_positions_kernel(pos_ptr, out_ptr, T, pos_stride, max_pos, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK).to(tl.int64)
    bad = tl.zeros([BLOCK], dtype=tl.int64)
    for start in range(0, T, BLOCK):
        idx = start + offs
        m = idx < T
        p = tl.load(pos_ptr + idx * pos_stride, mask=m, other=0).to(tl.int64)
        bad += ((p < 0) | (p >= max_pos)).to(tl.int64) * m.to(tl.int64)
    tl.store(out_ptr, tl.sum(bad, axis=0))


@triton.jit
def _rope_kernel(
    pos_ptr, x_ptr, cache_ptr,
    T, num_heads, rot_half,
    pos_stride,
    x_st, x_sh, x_sd,
    c_s0, c_s1,
    IS_NEOX: tl.constexpr,
    BLOCK_HEADS: tl.constexpr,
    BLOCK_R: tl.constexpr,
):
    t = tl.program_id(0).to(tl.int64)
    heads = (tl.program_id(1) * BLOCK_HEADS + tl.arange(0, BLOCK_HEADS)).to(tl.int64)
    r = tl.arange(0, BLOCK_R).to(tl.int64)
    t_ok = t < T
    rmask = (r < rot_half) & t_ok
    pos = tl.load(pos_ptr + t * pos_stride, mask=t_ok, other=0).to(tl.int64)

    ty = x_ptr.dtype.element_ty
    cache_row = cache_ptr + pos * c_s0
    cos = tl.load(cache_row + r * c_s1, mask=rmask, other=0.0).to(ty).to(tl.float32)
    sin = tl.load(cache_row + (rot_half + r) * c_s1, mask=rmask, other=0.0).to(ty).to(tl.float32)

    if IS_NEOX:
        x_idx = r
        y_idx = r + rot_half
    else:
        x_idx = 2 * r
        y_idx = 2 * r + 1

    mask = (heads[:, None] < num_heads) & rmask[None, :]
    row = x_ptr + t * x_st + heads[:, None] * x_sh
    x_off = row + x_idx[None, :] * x_sd
    y_off = row + y_idx[None, :] * x_sd
    x = tl.load(x_off, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_off, mask=mask, other=0.0).to(tl.float32)

    xc = (x * cos[None, :]).to(ty).to(tl.float32)
    ys = (y * sin[None, :]).to(ty).to(tl.float32)
    yc = (y * cos[None, :]).to(ty).to(tl.float32)
    xs = (x * sin[None, :]).to(ty).to(tl.float32)
    tl.store(x_off, (xc - ys).to(ty), mask=mask)
    tl.store(y_off, (yc + xs).to(ty), mask=mask)


def _head_strides(t: torch.Tensor, num_tokens: int, head_size: int, name: str):
    """Returns (num_heads, token_stride, head_stride, elem_stride)."""
    if t.dim() == 3:
        if t.shape[2] != head_size:
            raise ValueError(f"{name}.shape[-1]={t.shape[2]} != head_size={head_size}")
        return t.shape[1], t.stride(0), t.stride(1), t.stride(2)
    if t.dim() == 2:
        if t.shape[1] % head_size != 0:
            raise ValueError(f"{name} hidden {t.shape[1]} not a multiple of head_size {head_size}")
        return t.shape[1] // head_size, t.stride(0), head_size * t.stride(1), t.stride(1)
    raise ValueError(f"{name} must be 2-D or 3-D, got shape {tuple(t.shape)}")


def rotary_embedding(
    positions: torch.Tensor,
    query: torch.Tensor,
    key: Optional[torch.Tensor],
    head_size: int,
    cos_sin_cache: torch.Tensor,
    is_neox: bool,
) -> None:
    head_size = int(head_size)
    if query.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError(f"unsupported query dtype {query.dtype}")
    if key is not None and key.dtype != query.dtype:
        raise ValueError("query and key dtypes differ")
    if positions.dtype not in (torch.int64, torch.int32):
        raise ValueError(f"positions must be int32/int64, got {positions.dtype}")
    if cos_sin_cache.dim() != 2:
        raise ValueError("cos_sin_cache must be [max_position, rot_dim]")
    max_pos, rot_dim = cos_sin_cache.shape
    if rot_dim % 2 != 0 or rot_dim > head_size:
        raise ValueError(f"bad rot_dim {rot_dim} for head_size {head_size}")
    assert positions.device == query.device == cos_sin_cache.device

    pos = positions.reshape(-1)
    T = pos.numel()
    if query.shape[0] != T:
        raise ValueError(f"query has {query.shape[0]} tokens, positions has {T}")

    if _VALIDATE_POSITIONS and T > 0:
        cnt = _count_scratch(query.device)
        _count_bad_positions_kernel[(1,)](pos, cnt, T, pos.stride(0), max_pos, BLOCK=1024)
        n_bad = int(cnt.item())
        if n_bad:
            raise ValueError(f"{n_bad} position(s) outside [0, {max_pos}) for cos_sin_cache")

    rot_half = rot_dim // 2
    targets = [("query", query)] + ([("key", key)] if key is not None else [])
    for name, tensor in targets:
        heads, st, sh, sd = _head_strides(tensor, T, head_size, name)
        block_heads, block_r = _launch_config(heads, rot_dim)
        grid = (max(T, 1), max(1, triton.cdiv(heads, block_heads)))
        logger.debug("rope %s: T=%d heads=%d rot_dim=%d neox=%s grid=%s",
                     name, T, heads, rot_dim, is_neox, grid)
        _rope_kernel[grid](
            pos, tensor, cos_sin_cache,
            T, heads, rot_half,
            pos.stride(0) if T > 0 else 1,
            st, sh, sd,
            cos_sin_cache.stride(0), cos_sin_cache.stride(1),
            IS_NEOX=bool(is_neox), BLOCK_HEADS=block_heads, BLOCK_R=block_r,
        )
    return None

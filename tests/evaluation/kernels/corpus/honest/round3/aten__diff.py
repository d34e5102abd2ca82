import math
from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch
import triton
import triton.language as tl


# ---------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------


@triton.jit
def _round_bf16_rne(x):
    bits = x.to(tl.uint32, bitcast=True)
    bits = bits + 0x7FFF + ((bits >> 16) & 1)
    bits = bits & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _copy3d_kernel(
    src_ptr, dst_ptr,
    L, INNER,
    s_outer, s_len, s_inner,
    dst_len_total, dst_offset,
    BLOCK_L: tl.constexpr, BLOCK_I: tl.constexpr,
):
    # one program: one outer row, a BLOCK_L x BLOCK_I tile of (len, inner)
    o = tl.program_id(0).to(tl.int64)
    l = tl.program_id(1) * BLOCK_L + tl.arange(0, BLOCK_L)
    i = tl.program_id(2) * BLOCK_I + tl.arange(0, BLOCK_I)
    mask = (l[:, None] < L) & (i[None, :] < INNER)
    src = src_ptr + o * s_outer + l[:, None].to(tl.int64) * s_len + i[None, :] * s_inner
    v = tl.load(src, mask=mask)
    dst = dst_ptr + (o * dst_len_total + dst_offset + l[:, None]) * INNER + i[None, :]
    tl.store(dst, v.to(dst_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _diff3d_kernel(
    src_ptr, dst_ptr,
    L_OUT, INNER,
    s_outer, s_len, s_inner,
    IS_BOOL: tl.constexpr,
    UPCAST: tl.constexpr,
    BLOCK_L: tl.constexpr, BLOCK_I: tl.constexpr,
):
    o = tl.program_id(0).to(tl.int64)
    l = tl.program_id(1) * BLOCK_L + tl.arange(0, BLOCK_L)
    i = tl.program_id(2) * BLOCK_I + tl.arange(0, BLOCK_I)
    mask = (l[:, None] < L_OUT) & (i[None, :] < INNER)
    base = src_ptr + o * s_outer + l[:, None].to(tl.int64) * s_len + i[None, :] * s_inner
    a = tl.load(base, mask=mask)
    b = tl.load(base + s_len, mask=mask)
    out_ty = dst_ptr.dtype.element_ty
    if IS_BOOL:
        d = a != b
    elif UPCAST:
        d = b.to(tl.float32) - a.to(tl.float32)
        if out_ty == tl.bfloat16:
            d = _round_bf16_rne(d)
    else:
        d = b - a
    dst = dst_ptr + (o * L_OUT + l[:, None]) * INNER + i[None, :]
    tl.store(dst, d.to(out_ty), mask=mask)


# ---------------------------------------------------------------------------
# host side
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LaunchConfig:
    block_l: int
    block_i: int

    @staticmethod
    def for_shape(length: int, inner: int) -> "LaunchConfig":
        block_i = min(triton.next_power_of_2(max(inner, 1)), 256)
        block_l = min(triton.next_power_of_2(max(length, 1)), max(1, 4096 // block_i))
        return LaunchConfig(block_l, block_i)

    def grid(self, outer: int, length: int, inner: int) -> Tuple[int, int, int]:
        return (outer, triton.cdiv(length, self.block_l), triton.cdiv(inner, self.block_i))


@dataclass
class View3d:
    """A tensor seen as (outer, len, inner) around the diff dim."""

    tensor: torch.Tensor
    outer: int
    length: int
    inner: int
    s_outer: int
    s_len: int
    s_inner: int


def _merge(sizes: List[int], strides: List[int]) -> Optional[Tuple[int, int]]:
    pairs = [(sz, st) for sz, st in zip(sizes, strides) if sz != 1]
    if not pairs:
        return 1, 0
    for (sz0, st0), (sz1, st1) in zip(pairs, pairs[1:]):
        if st0 != st1 * sz1:
            return None
    return math.prod(sz for sz, _ in pairs), pairs[-1][1]


def _as_3d(t: torch.Tensor, dim: int) -> View3d:
    sizes, strides = list(t.shape), list(t.stride())
    before = _merge(sizes[:dim], strides[:dim])
    after = _merge(sizes[dim + 1:], strides[dim + 1:])
    if before is None or after is None:
        t = t.contiguous()
        sizes, strides = list(t.shape), list(t.stride())
        before = _merge(sizes[:dim], strides[:dim])
        after = _merge(sizes[dim + 1:], strides[dim + 1:])
    return View3d(t, before[0], sizes[dim], after[0], before[1], strides[dim], after[1])


def _copy_into(piece: View3d, buf: torch.Tensor, total_len: int, offset: int) -> None:
    if piece.length == 0 or piece.outer == 0 or piece.inner == 0:
        return
    cfg = LaunchConfig.for_shape(piece.length, piece.inner)
    _copy3d_kernel[cfg.grid(piece.outer, piece.length, piece.inner)](
        piece.tensor, buf,
        piece.length, piece.inner,
        piece.s_outer, piece.s_len, piece.s_inner,
        total_len, offset,
        BLOCK_L=cfg.block_l, BLOCK_I=cfg.block_i,
    )


def diff(
    self: torch.Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Optional[torch.Tensor] = None,
    append: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    if self.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    ndim = self.dim()
    dim = dim % ndim

    pieces = [p for p in (prepend, self, append) if p is not None]
    dtype = pieces[0].dtype
    for p in pieces[1:]:
        dtype = torch.promote_types(dtype, p.dtype)

    shape = list(self.shape)
    if len(pieces) > 1:
        # materialize cat(prepend, self, append) along dim
        total = sum(p.shape[dim] for p in pieces)
        shape[dim] = total
        buf = torch.empty(shape, dtype=dtype, device=self.device)
        off = 0
        for p in pieces:
            _copy_into(_as_3d(p, dim), buf, total, off)
            off += p.shape[dim]
        cur = _as_3d(buf, dim)
    else:
        cur = _as_3d(self, dim)

    if n == 0:
        if len(pieces) > 1:
            return buf
        out = torch.empty(shape, dtype=dtype, device=self.device)
        _copy_into(cur, out, shape[dim], 0)
        return out

    is_bool = dtype == torch.bool
    upcast = dtype in (torch.float16, torch.bfloat16)
    for _ in range(n):
        new_len = max(cur.length - 1, 0)
        shape[dim] = new_len
        out = torch.empty(shape, dtype=dtype, device=self.device)
        if new_len > 0 and cur.outer > 0 and cur.inner > 0:
            cfg = LaunchConfig.for_shape(new_len, cur.inner)
            _diff3d_kernel[cfg.grid(cur.outer, new_len, cur.inner)](
                cur.tensor, out,
                new_len, cur.inner,
                cur.s_outer, cur.s_len, cur.s_inner,
                IS_BOOL=is_bool, UPCAST=upcast,
                BLOCK_L=cfg.block_l, BLOCK_I=cfg.block_i,
            )
        cur = _as_3d(out, dim)
        if new_len == 0:
            break
    return cur.tensor

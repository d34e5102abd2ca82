"""In-place add (aten::add_): self += alpha * other.

Autotuned over block sizes. Because the kernel writes into ``self``, every autotuning trial must start
from the original values: ``restore_value`` tells the autotuner to snapshot and restore that argument.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl


def _configs():
    return [
        triton.Config({"BLOCK_M": 1, "BLOCK_N": 32}, num_warps=1),
        triton.Config({"BLOCK_M": 4, "BLOCK_N": 64}, num_warps=2),
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 128}, num_warps=4),
    ]


@triton.autotune(configs=_configs(), key=["M", "N"], restore_value=["self_ptr"])
@triton.jit
def _add_inplace_2d(
    self_ptr,
    other_ptr,
    other_scalar,
    alpha,
    M,
    N,
    s_row,
    s_col,
    o_row,
    o_col,
    USE_SCALAR: tl.constexpr,
    UPCAST: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    in_bounds = (rows[:, None] < M) & (cols[None, :] < N)
    s_off = rows[:, None] * s_row + cols[None, :] * s_col
    x = tl.load(self_ptr + s_off, mask=in_bounds, other=0)
    if USE_SCALAR:
        y = other_scalar
    else:
        y = tl.load(other_ptr + rows[:, None] * o_row + cols[None, :] * o_col, mask=in_bounds, other=0)
    if UPCAST:
        acc = x.to(tl.float32) + alpha * y.to(tl.float32)
    else:
        acc = x + alpha * y
    tl.store(self_ptr + s_off, acc.to(self_ptr.dtype.element_ty), mask=in_bounds)


def _as_matrix(t: torch.Tensor) -> tuple[int, int, int, int] | None:
    """(rows, cols, row_stride, col_stride) when ``t`` can be seen as a 2-D strided matrix, else None."""
    if t.dim() == 0:
        return 1, 1, 0, 0
    # size-1 dims can carry any stride: only the others say how the leading dims flatten into rows
    lead = [(size, stride) for size, stride in zip(t.shape[:-1], t.stride()[:-1]) if size != 1]
    if not lead:
        return 1, t.shape[-1], 0, t.stride(-1)
    for (_, outer_stride), (inner_size, inner_stride) in zip(lead, lead[1:]):
        if outer_stride != inner_stride * inner_size:
            return None
    rows = 1
    for size, _ in lead:
        rows *= size
    return rows, t.shape[-1], lead[-1][1], t.stride(-1)


def _inplace(self: torch.Tensor, other, alpha) -> torch.Tensor:
    if self.numel() == 0:
        return self
    target = self
    geometry = _as_matrix(self)
    if geometry is None:  # exotic strides: work on a dense copy and copy the result back
        target = self.clone(memory_format=torch.contiguous_format)
        geometry = _as_matrix(target)
    rows, cols, s_row, s_col = geometry
    scalar = not isinstance(other, torch.Tensor)
    if scalar:
        other_t, o_row, o_col = target, 0, 0
    else:
        other_t = other.expand(self.shape)
        g = _as_matrix(other_t)
        if g is None:
            other_t = other_t.contiguous()
            g = _as_matrix(other_t)
        _, _, o_row, o_col = g
    grid = lambda meta: (triton.cdiv(rows, meta["BLOCK_M"]), triton.cdiv(cols, meta["BLOCK_N"]))
    _add_inplace_2d[grid](
        target,
        other_t,
        other if scalar else 0,
        alpha,
        rows,
        cols,
        s_row,
        s_col,
        o_row,
        o_col,
        USE_SCALAR=scalar,
        UPCAST=self.dtype.is_floating_point,
    )
    if target is not self:
        self.copy_(target)
    return self


def add__Tensor(self: torch.Tensor, other: torch.Tensor, *, alpha=1) -> torch.Tensor:
    return _inplace(self, other, alpha)


def add__Scalar(self: torch.Tensor, other, alpha=1) -> torch.Tensor:
    return _inplace(self, other, alpha)

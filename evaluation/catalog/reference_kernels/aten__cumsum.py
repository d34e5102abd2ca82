"""aten::cumsum: per-row blocked inclusive scan with a running carry (float32, or int64 for integers)."""

import torch
import triton
import triton.language as tl

# One program per row: the operated dim is moved last (a view), the other dims (up to 3) index the rows, and
# input and output are both addressed through their own strides.
MAX_BLOCK = 1024


def _pad3(sizes, strides):
    if len(sizes) > 3:
        raise NotImplementedError("at most 4 dims")
    pad = 3 - len(sizes)
    return [1] * pad + list(sizes), [0] * pad + list(strides)


def _rows(x, out, dim):
    """(rows, sizes1/2, x row strides, x inner stride, out row strides, out inner stride, length)."""
    if x.dim() == 0:
        x, out, dim = x.view(1), out.view(1), 0
    dim = dim % x.dim()
    xm, om = x.movedim(dim, -1), out.movedim(dim, -1)
    sizes, x_strides = _pad3(list(xm.shape[:-1]), list(xm.stride()[:-1]))
    _, o_strides = _pad3(list(om.shape[:-1]), list(om.stride()[:-1]))
    rows = sizes[0] * sizes[1] * sizes[2]
    return rows, sizes[1], sizes[2], x_strides, xm.stride(-1), o_strides, om.stride(-1), xm.shape[-1]


@triton.jit
def _row_bases(row, S1, S2, a0, a1, a2, b0, b1, b2):
    i2 = row % S2
    rest = row // S2
    i1 = rest % S1
    i0 = rest // S1
    i0 = i0.to(tl.int64)
    i1 = i1.to(tl.int64)
    i2 = i2.to(tl.int64)
    return i0 * a0 + i1 * a1 + i2 * a2, i0 * b0 + i1 * b1 + i2 * b2


@triton.jit
def _cumsum_kernel(x_ptr, out_ptr, S1, S2, xs0, xs1, xs2, xsr, os0, os1, os2, osr, L, IS_INT: tl.constexpr,
                   BLOCK: tl.constexpr):
    x_base, o_base = _row_bases(tl.program_id(0), S1, S2, xs0, xs1, xs2, os0, os1, os2)
    if IS_INT:
        carry = tl.zeros([1], tl.int64)
    else:
        carry = tl.zeros([1], tl.float32)
    for offset in range(0, L, BLOCK):
        cols = offset + tl.arange(0, BLOCK)
        mask = cols < L
        values = tl.load(x_ptr + x_base + cols.to(tl.int64) * xsr, mask=mask, other=0)
        if IS_INT:
            values = values.to(tl.int64)
        else:
            values = values.to(tl.float32)
        scanned = tl.cumsum(values, axis=0) + carry
        tl.store(out_ptr + o_base + cols.to(tl.int64) * osr, scanned.to(out_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(values, axis=0)


def cumsum(self, dim, *, dtype=None):
    if dtype is None:
        dtype = self.dtype if self.dtype.is_floating_point else torch.int64
    out = torch.empty(self.shape, dtype=dtype, device=self.device)
    if self.numel() == 0:
        return out
    rows, s1, s2, xs, xsr, os_, osr, length = _rows(self, out, dim)
    block = min(MAX_BLOCK, triton.next_power_of_2(length))
    _cumsum_kernel[(rows,)](self, out, s1, s2, *xs, xsr, *os_, osr, length, IS_INT=not dtype.is_floating_point,
                            BLOCK=block)
    return out

"""aten::_softmax: numerically stable softmax along dim (online max/sum in float32)."""

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
def _softmax_kernel(x_ptr, out_ptr, S1, S2, xs0, xs1, xs2, xsr, os0, os1, os2, osr, L, BLOCK: tl.constexpr):
    x_base, o_base = _row_bases(tl.program_id(0), S1, S2, xs0, xs1, xs2, os0, os1, os2)
    # Online pass: running max and rescaled running sum per lane, in float32.
    running_max = tl.full([BLOCK], float("-inf"), tl.float32)
    running_sum = tl.zeros([BLOCK], tl.float32)
    for offset in range(0, L, BLOCK):
        cols = offset + tl.arange(0, BLOCK)
        mask = cols < L
        values = tl.load(x_ptr + x_base + cols.to(tl.int64) * xsr, mask=mask, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(running_max, values)
        safe_max = tl.where(new_max == float("-inf"), 0.0, new_max)
        running_sum = running_sum * tl.exp(running_max - safe_max) + tl.where(mask, tl.exp(values - safe_max), 0.0)
        running_max = new_max
    row_max = tl.max(running_max, axis=0)
    row_sum = tl.sum(tl.where(running_max == float("-inf"), 0.0, running_sum * tl.exp(running_max - row_max)), axis=0)
    inverse = 1.0 / row_sum
    for offset in range(0, L, BLOCK):
        cols = offset + tl.arange(0, BLOCK)
        mask = cols < L
        values = tl.load(x_ptr + x_base + cols.to(tl.int64) * xsr, mask=mask, other=0.0).to(tl.float32)
        result = tl.exp(values - row_max) * inverse
        tl.store(out_ptr + o_base + cols.to(tl.int64) * osr, result.to(out_ptr.dtype.element_ty), mask=mask)


def _softmax_impl(x, dim, out_dtype):
    out = torch.empty(x.shape, dtype=out_dtype, device=x.device)
    if x.numel() == 0:
        return out
    rows, s1, s2, xs, xsr, os_, osr, length = _rows(x, out, dim)
    block = min(MAX_BLOCK, triton.next_power_of_2(length))
    _softmax_kernel[(rows,)](x, out, s1, s2, *xs, xsr, *os_, osr, length, BLOCK=block)
    return out


def _softmax(self, dim, half_to_float):
    out_dtype = torch.float32 if half_to_float else self.dtype
    return _softmax_impl(self, dim, out_dtype)

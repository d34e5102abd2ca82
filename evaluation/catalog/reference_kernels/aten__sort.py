"""aten::sort and sort.stable: one program sorts one row with tl.sort on packed 64-bit keys.

Each float maps to an int32 whose signed order is the float order; the key is (that << 32) | position (for
descending, | (2^32 - 1 - position)), so equal values keep their input order: the sort is stable either way.
Values are then gathered from the input at the sorted positions.
"""

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
def _sort_kernel(x_ptr, values_ptr, indices_ptr, n_rows, S1, S2, xs0, xs1, xs2, xsr, os0, os1, os2, osr, L,
                 DESCENDING: tl.constexpr, ROWS: tl.constexpr, BLOCK: tl.constexpr):
    # ROWS rows per program, each sorted along the tile's last axis.
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    x_base, o_base = _row_bases(rows, S1, S2, xs0, xs1, xs2, os0, os1, os2)
    positions = tl.arange(0, BLOCK)
    mask = (rows < n_rows)[:, None] & (positions < L)[None, :]
    x_row = x_ptr + x_base[:, None]
    values = tl.load(x_row + positions[None, :].to(tl.int64) * xsr, mask=mask, other=0.0).to(tl.float32)
    bits = values.to(tl.int32, bitcast=True)
    ordered = bits ^ ((bits >> 31) & 0x7FFFFFFF)
    if DESCENDING:
        low = 4294967295 - positions.to(tl.int64)[None, :]
        keys = tl.where(mask, (ordered.to(tl.int64) << 32) | low, -9223372036854775807 - 1)
    else:
        low = positions.to(tl.int64)[None, :]
        keys = tl.where(mask, (ordered.to(tl.int64) << 32) | low, 9223372036854775807)
    keys = tl.sort(keys, dim=1, descending=DESCENDING)
    low = keys & 0xFFFFFFFF
    if DESCENDING:
        source = 4294967295 - low
    else:
        source = low
    source = tl.where(mask, source, 0)
    sorted_values = tl.load(x_row + source * xsr, mask=mask, other=0.0)
    out_offsets = o_base[:, None] + positions[None, :].to(tl.int64) * osr
    tl.store(values_ptr + out_offsets, sorted_values, mask=mask)
    tl.store(indices_ptr + out_offsets, source, mask=mask)


def _sort(x, dim, descending):
    values = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    indices = torch.empty(x.shape, dtype=torch.int64, device=x.device)
    if x.numel() == 0:
        return values, indices
    rows, s1, s2, xs, xsr, os_, osr, length = _rows(x, values, dim)
    block = max(2, triton.next_power_of_2(length))
    rows_per_program = max(1, min(64, 2048 // block, triton.next_power_of_2(rows)))
    _sort_kernel[(triton.cdiv(rows, rows_per_program),)](x, values, indices, rows, s1, s2, *xs, xsr, *os_, osr,
                                                          length, DESCENDING=bool(descending),
                                                          ROWS=rows_per_program, BLOCK=block)
    return values, indices


def sort(self, dim=-1, descending=False):
    return _sort(self, dim, descending)


def sort_stable(self, *, stable, dim=-1, descending=False):
    return _sort(self, dim, descending)

"""aten::cumsum: per-row blocked inclusive scan with a running carry (float32, or int64 for integers).

On CUDA, float16/bfloat16 results are computed as torch's CUDA kernel computes them, in the result dtype with a rounding
after every add (ATen scans with std::plus<scalar_t>; only its CPU kernel accumulates in float32). An exact
float32 scan differs from it by several ulps over a few hundred elements (outside the float16 tolerance) and by
far more over tens of thousands. Same order of adds as ATen: a Sklansky scan over chunks of 2 * threads_x
elements, the previous chunk's total added to the chunk's first element, when dim is the last one (its
scan_innermost_dim); a sequential scan along any other dim (scan_outer_dim) and, as the nearest simple order,
for 1-d inputs (which ATen hands to cub)."""

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


@triton.jit
def _round(x, dtype: tl.constexpr):
    return x.to(dtype).to(tl.float32)


@triton.jit
def _cumsum_sklansky_kernel(x_ptr, out_ptr, S1, S2, xs0, xs1, xs2, xsr, os0, os1, os2, osr, L,
                            LOG_X: tl.constexpr, CHUNK: tl.constexpr):
    x_base, o_base = _row_bases(tl.program_id(0), S1, S2, xs0, xs1, xs2, os0, os1, os2)
    dtype = out_ptr.dtype.element_ty
    lane = tl.arange(0, CHUNK)
    carry = 0.0
    for offset in range(0, L, CHUNK):
        cols = offset + lane
        mask = cols < L
        v = _round(tl.load(x_ptr + x_base + cols.to(tl.int64) * xsr, mask=mask, other=0).to(tl.float32), dtype)
        v = tl.where(lane == 0, _round(v + carry, dtype), v)
        for m in tl.static_range(LOG_X + 1):
            # Step m: every element in the upper half of a 2^(m+1) block adds the lower half's last element.
            pairs = tl.reshape(v, [CHUNK // (2 << m), 2 << m])
            j = tl.arange(0, 2 << m)[None, :]
            lower_last = tl.sum(tl.where(j == (1 << m) - 1, pairs, 0.0), axis=1)
            pairs = tl.where(j >= (1 << m), _round(pairs + lower_last[:, None], dtype), pairs)
            v = tl.reshape(pairs, [CHUNK])
        tl.store(out_ptr + o_base + cols.to(tl.int64) * osr, v.to(dtype), mask=mask)
        carry = tl.sum(tl.where(lane == CHUNK - 1, v, 0.0), axis=0)


@triton.jit
def _cumsum_sequential_kernel(x_ptr, out_ptr, S1, S2, xs0, xs1, xs2, xsr, os0, os1, os2, osr, L):
    x_base, o_base = _row_bases(tl.program_id(0), S1, S2, xs0, xs1, xs2, os0, os1, os2)
    dtype = out_ptr.dtype.element_ty
    acc = 0.0
    for i in range(0, L):
        v = _round(tl.load(x_ptr + x_base + i * xsr).to(tl.float32), dtype)
        acc = _round(acc + v, dtype)
        tl.store(out_ptr + o_base + i * osr, acc.to(dtype))


def _log_threads_x(num_rows, row_size):
    """ATen's get_log_num_threads_x_inner_scan<uint32_t>, unsigned wrap-around included."""
    log_x = max(0, (row_size - 1).bit_length())
    log_y = max(0, (num_rows - 1).bit_length())
    diff = (log_x - log_y) & 0xFFFFFFFF
    return min(max(4, ((9 + diff) & 0xFFFFFFFF) // 2), 9)


def _cumsum_rounded(x, out, dim, rows, s1, s2, xs, xsr, os_, osr, length):
    ndim = max(x.dim(), 1)
    if x.numel() != length and dim % ndim == ndim - 1:
        log_x = _log_threads_x(x.numel() // length, length)
        _cumsum_sklansky_kernel[(rows,)](x, out, s1, s2, *xs, xsr, *os_, osr, length, LOG_X=log_x,
                                         CHUNK=2 << log_x)
    else:
        _cumsum_sequential_kernel[(rows,)](x, out, s1, s2, *xs, xsr, *os_, osr, length)
    return out


def cumsum(self, dim, *, dtype=None):
    if dtype is None:
        dtype = self.dtype if self.dtype.is_floating_point else torch.int64
    out = torch.empty(self.shape, dtype=dtype, device=self.device)
    if self.numel() == 0:
        return out
    rows, s1, s2, xs, xsr, os_, osr, length = _rows(self, out, dim)
    # The reference is the native op on the same device: torch's CPU kernel accumulates in float32 (the path
    # below), its CUDA kernel in the result dtype.
    if dtype in (torch.float16, torch.bfloat16) and self.device.type == "cuda":
        return _cumsum_rounded(self, out, dim, rows, s1, s2, xs, xsr, os_, osr, length)
    block = min(MAX_BLOCK, triton.next_power_of_2(length))
    _cumsum_kernel[(rows,)](self, out, s1, s2, *xs, xsr, *os_, osr, length, IS_INT=not dtype.is_floating_point,
                            BLOCK=block)
    return out

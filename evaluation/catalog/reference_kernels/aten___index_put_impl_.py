"""aten::_index_put_impl_ (the kernel behind index_put_): self[indices] = values (or += with accumulate) for 2-d self and indices [rows], [rows, cols]
or [None, cols]. Accumulation follows torch's CUDA sort-based kernels: where torch sums a destination's duplicates
in float32 and rounds once (single elements, [None, cols], rows of at most 32 elements) this uses float32 atomics
into a float32 scratch copy; where torch adds duplicate rows one at a time in index order and rounds to self's
dtype after each add (rows longer than 32 elements), so does this (the float32 sum differs by up to an ulp of
the running sum, outside the bfloat16 tolerance after cancellation)."""

import torch
import triton
import triton.language as tl

# Elementwise kernels over a 4-d index space (shapes padded on the left); every operand is addressed through
# its own strides, so transposed and strided views are read and written in place.
BLOCK_SIZE = 1024


def _pad4(sizes, strides):
    if len(sizes) > 4:
        raise NotImplementedError("at most 4 dims")
    pad = 4 - len(sizes)
    return [1] * pad + list(sizes), [0] * pad + list(strides)


@triton.jit
def _coords(o, S1, S2, S3):
    i3 = o % S3
    rest = o // S3
    i2 = rest % S2
    rest = rest // S2
    i1 = rest % S1
    i0 = rest // S1
    return i0, i1, i2, i3


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n, S1, S2, S3, ss0, ss1, ss2, ss3, ds0, ds1, ds2, ds3, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = o < n
    i0, i1, i2, i3 = _coords(o, S1, S2, S3)
    values = tl.load(src_ptr + i0 * ss0 + i1 * ss1 + i2 * ss2 + i3 * ss3, mask=mask)
    tl.store(dst_ptr + i0 * ds0 + i1 * ds1 + i2 * ds2 + i3 * ds3, values.to(dst_ptr.dtype.element_ty), mask=mask)


def _copy(src, dst):
    """dst[...] = src[...] (same shape, any strides, dtype converted on store)."""
    n = dst.numel()
    if n == 0:
        return dst
    sizes, src_strides = _pad4(list(src.shape), list(src.stride()))
    _, dst_strides = _pad4(list(dst.shape), list(dst.stride()))
    _copy_kernel[(triton.cdiv(n, BLOCK_SIZE),)](src, dst, n, sizes[1], sizes[2], sizes[3], *src_strides,
                                                *dst_strides, BLOCK=BLOCK_SIZE)
    return dst


@triton.jit
def _index_put_kernel(self_ptr, rows_ptr, cols_ptr, values_ptr, n, Q, M, N, ss0, ss1, vs0, vs1, rows_stride,
                      cols_stride, MODE: tl.constexpr, ACCUMULATE: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = o < n
    p = o // Q
    q = o % Q
    if MODE == 0:
        row = tl.load(rows_ptr + p * rows_stride, mask=mask, other=0).to(tl.int64)
        col = q
    elif MODE == 1:
        row = tl.load(rows_ptr + p * rows_stride, mask=mask, other=0).to(tl.int64)
        col = tl.load(cols_ptr + p * cols_stride, mask=mask, other=0).to(tl.int64)
    else:
        row = p
        col = tl.load(cols_ptr + q * cols_stride, mask=mask, other=0).to(tl.int64)
    row = tl.where(row < 0, row + M, row)
    col = tl.where(col < 0, col + N, col)
    values = tl.load(values_ptr + p * vs0 + q * vs1, mask=mask, other=0)
    target = self_ptr + row * ss0 + col * ss1
    if ACCUMULATE:
        tl.atomic_add(target, values.to(tl.float32), mask=mask)
    else:
        tl.store(target, values.to(self_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _row_matches(rows_ptr, rows_stride, P, M, row, lo, hi, BLOCK_Q: tl.constexpr):
    """How many q in [lo, hi) have rows[q] (wrapped) == row."""
    count = 0
    for start in range(lo, hi, BLOCK_Q):
        q = start + tl.arange(0, BLOCK_Q)
        in_range = (q < hi) & (q < P)
        r = tl.load(rows_ptr + q.to(tl.int64) * rows_stride, mask=in_range, other=-1).to(tl.int64)
        r = tl.where(r < 0, r + M, r)
        count += tl.sum((in_range & (r == row)).to(tl.int32), axis=0)
    return count


@triton.jit
def _accumulate_rows_kernel(self_ptr, rows_ptr, values_ptr, P, M, N, ss0, ss1, vs0, vs1, rows_stride,
                            BLOCK_N: tl.constexpr, BLOCK_Q: tl.constexpr):
    """One program per (index p, column block): only a row's first occurrence works, adding every duplicate in
    index order with a rounding to self's dtype after each add (torch's indexing_backward_kernel)."""
    p = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    row = tl.load(rows_ptr + p.to(tl.int64) * rows_stride).to(tl.int64)
    row = tl.where(row < 0, row + M, row)
    if _row_matches(rows_ptr, rows_stride, P, M, row, 0, p, BLOCK_Q) == 0:
        dtype = self_ptr.dtype.element_ty
        target = self_ptr + row * ss0 + cols.to(tl.int64) * ss1
        acc = tl.load(target, mask=col_mask, other=0).to(tl.float32)
        for start in range(p, P, BLOCK_Q):
            q = start + tl.arange(0, BLOCK_Q)
            in_range = q < P
            r = tl.load(rows_ptr + q.to(tl.int64) * rows_stride, mask=in_range, other=-1).to(tl.int64)
            r = tl.where(r < 0, r + M, r)
            pending = in_range & (r == row)
            # Duplicates are rare: take them one at a time, lowest index first.
            while tl.sum(pending.to(tl.int32), axis=0) > 0:
                nxt = tl.min(tl.where(pending, q, P), axis=0)
                v = tl.load(values_ptr + nxt.to(tl.int64) * vs0 + cols.to(tl.int64) * vs1, mask=col_mask, other=0)
                acc = (acc + v.to(tl.float32)).to(dtype).to(tl.float32)
                pending = pending & (q != nxt)
        tl.store(target, acc.to(dtype), mask=col_mask)


def _index_put(self, indices, values, accumulate):
    if self.dim() != 2 or len(indices) not in (1, 2):
        raise NotImplementedError("index_put_ kernel: 2-d self with one or two index entries")
    rows, cols = indices[0], indices[1] if len(indices) == 2 else None
    m, n_cols = self.shape
    if rows is not None and cols is None:
        mode, p_size, q_size = 0, rows.numel(), n_cols
    elif rows is not None:
        mode, p_size, q_size = 1, rows.numel(), 1
    elif cols is not None:
        mode, p_size, q_size = 2, m, cols.numel()
    else:
        raise NotImplementedError("at least one index tensor is needed")
    total = p_size * q_size
    if total == 0:
        return self
    if mode == 1:
        expanded = values.expand([p_size])
        value_strides = [expanded.stride(0), 0]
    else:
        expanded = values.expand([p_size, q_size])
        value_strides = list(expanded.stride())
    if accumulate and mode == 0 and n_cols > 32 and self.dtype.is_floating_point:
        _accumulate_rows_kernel[(p_size, triton.cdiv(n_cols, min(1024, triton.next_power_of_2(n_cols))))](
            self, rows, values, p_size, m, n_cols, self.stride(0), self.stride(1), *value_strides, rows.stride(0),
            BLOCK_N=min(1024, triton.next_power_of_2(n_cols)), BLOCK_Q=1024)
        return self
    target = self
    if accumulate and self.dtype != torch.float32:
        target = torch.empty(self.shape, dtype=torch.float32, device=self.device)
        _copy(self, target)
    dummy = rows if rows is not None else cols
    _index_put_kernel[(triton.cdiv(total, BLOCK_SIZE),)](
        target, rows if rows is not None else dummy, cols if cols is not None else dummy, values, total, q_size, m,
        n_cols, target.stride(0), target.stride(1), *value_strides, rows.stride(0) if rows is not None else 0,
        cols.stride(0) if cols is not None else 0, MODE=mode, ACCUMULATE=bool(accumulate), BLOCK=BLOCK_SIZE)
    if target is not self:
        _copy(target, self)
    return self


def _index_put_impl_(self, indices, values, accumulate=False, unsafe=False):
    return _index_put(self, indices, values, accumulate)

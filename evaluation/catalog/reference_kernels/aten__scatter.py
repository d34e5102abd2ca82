"""aten::scatter (.src, .value): a strided copy of self, then one lane per index element writes its value."""

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
def _scatter_kernel(out_ptr, index_ptr, src_ptr, value, n, S1, S2, S3, is0, is1, is2, is3, ss0, ss1, ss2, ss3,
                    os0, os1, os2, os3, FROM_SRC: tl.constexpr, DIM: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = o < n
    i0, i1, i2, i3 = _coords(o, S1, S2, S3)
    picked = tl.load(index_ptr + i0 * is0 + i1 * is1 + i2 * is2 + i3 * is3, mask=mask, other=0).to(tl.int64)
    if FROM_SRC:
        values = tl.load(src_ptr + i0 * ss0 + i1 * ss1 + i2 * ss2 + i3 * ss3, mask=mask)
    else:
        values = tl.zeros([BLOCK], tl.float32) + value
    if DIM == 0:
        i0 = picked
    elif DIM == 1:
        i1 = picked
    elif DIM == 2:
        i2 = picked
    else:
        i3 = picked
    tl.store(out_ptr + i0 * os0 + i1 * os1 + i2 * os2 + i3 * os3, values.to(out_ptr.dtype.element_ty), mask=mask)


def _scatter(self, dim, index, src, value):
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    _copy(self, out)
    n = index.numel()
    if n == 0:
        return out
    rank = max(1, self.dim())
    dim = dim % rank
    sizes, index_strides = _pad4(list(index.shape), list(index.stride()))
    _, out_strides = _pad4(list(out.shape), list(out.stride()))
    if src is not None:
        _, src_strides = _pad4(list(src.shape), list(src.stride()))
    else:
        src_strides = [0, 0, 0, 0]
    _scatter_kernel[(triton.cdiv(n, BLOCK_SIZE),)](out, index, src if src is not None else out, float(value), n,
                                                   sizes[1], sizes[2], sizes[3], *index_strides, *src_strides,
                                                   *out_strides, FROM_SRC=src is not None, DIM=dim + 4 - rank,
                                                   BLOCK=BLOCK_SIZE)
    return out


def scatter_src(self, dim, index, src):
    return _scatter(self, dim, index, src, 0.0)


def scatter_value(self, dim, index, value):
    return _scatter(self, dim, index, None, value)

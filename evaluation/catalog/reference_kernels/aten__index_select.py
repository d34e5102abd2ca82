"""aten::index_select: one lane per output element; the coordinate along dim is looked up in index."""

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
def _index_select_kernel(x_ptr, index_ptr, out_ptr, n, S1, S2, S3, xs0, xs1, xs2, xs3, index_stride,
                         DIM: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = o < n
    i0, i1, i2, i3 = _coords(o, S1, S2, S3)
    if DIM == 0:
        i0 = tl.load(index_ptr + i0 * index_stride, mask=mask, other=0).to(tl.int64)
    elif DIM == 1:
        i1 = tl.load(index_ptr + i1 * index_stride, mask=mask, other=0).to(tl.int64)
    elif DIM == 2:
        i2 = tl.load(index_ptr + i2 * index_stride, mask=mask, other=0).to(tl.int64)
    else:
        i3 = tl.load(index_ptr + i3 * index_stride, mask=mask, other=0).to(tl.int64)
    values = tl.load(x_ptr + i0 * xs0 + i1 * xs1 + i2 * xs2 + i3 * xs3, mask=mask)
    tl.store(out_ptr + o, values, mask=mask)


def index_select(self, dim, index):
    rank = max(1, self.dim())
    dim = dim % rank
    shape = list(self.shape) if self.dim() else [1]
    shape[dim] = index.numel()
    out = torch.empty(shape if self.dim() else [index.numel()], dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    sizes, _ = _pad4(shape, [0] * len(shape))
    _, self_strides = _pad4(list(self.shape), list(self.stride()))
    index_stride = index.stride(0) if index.dim() else 0
    _index_select_kernel[(triton.cdiv(n, BLOCK_SIZE),)](self, index, out, n, sizes[1], sizes[2], sizes[3],
                                                        *self_strides, index_stride, DIM=dim + 4 - rank,
                                                        BLOCK=BLOCK_SIZE)
    return out

"""aten::gather: one lane per index element; the coordinate along dim comes from index."""

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
def _gather_kernel(x_ptr, index_ptr, out_ptr, n, S1, S2, S3, is0, is1, is2, is3, xs0, xs1, xs2, xs3,
                   DIM: tl.constexpr, BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = o < n
    i0, i1, i2, i3 = _coords(o, S1, S2, S3)
    picked = tl.load(index_ptr + i0 * is0 + i1 * is1 + i2 * is2 + i3 * is3, mask=mask, other=0).to(tl.int64)
    if DIM == 0:
        i0 = picked
    elif DIM == 1:
        i1 = picked
    elif DIM == 2:
        i2 = picked
    else:
        i3 = picked
    values = tl.load(x_ptr + i0 * xs0 + i1 * xs1 + i2 * xs2 + i3 * xs3, mask=mask)
    tl.store(out_ptr + o, values, mask=mask)


def gather(self, dim, index, *, sparse_grad=False):
    out = torch.empty(index.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    rank = max(1, self.dim())
    dim = dim % rank
    sizes, index_strides = _pad4(list(index.shape), list(index.stride()))
    _, self_strides = _pad4(list(self.shape), list(self.stride()))
    _gather_kernel[(triton.cdiv(n, BLOCK_SIZE),)](self, index, out, n, sizes[1], sizes[2], sizes[3], *index_strides,
                                                  *self_strides, DIM=dim + 4 - rank, BLOCK=BLOCK_SIZE)
    return out

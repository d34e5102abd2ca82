"""aten::embedding: one lane per output element: row of weight picked by the index, column copied."""

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
def _embedding_kernel(weight_ptr, indices_ptr, out_ptr, n, D, S1, S2, S3, is0, is1, is2, is3, ws0, ws1,
                      BLOCK: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = o < n
    row = o // D
    col = o % D
    i0, i1, i2, i3 = _coords(row, S1, S2, S3)
    picked = tl.load(indices_ptr + i0 * is0 + i1 * is1 + i2 * is2 + i3 * is3, mask=mask, other=0).to(tl.int64)
    values = tl.load(weight_ptr + picked * ws0 + col * ws1, mask=mask)
    tl.store(out_ptr + o, values, mask=mask)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    width = weight.shape[1]
    out = torch.empty(list(indices.shape) + [width], dtype=weight.dtype, device=weight.device)
    n = out.numel()
    if n == 0:
        return out
    sizes, index_strides = _pad4(list(indices.shape), list(indices.stride()))
    _embedding_kernel[(triton.cdiv(n, BLOCK_SIZE),)](weight, indices, out, n, width, sizes[1], sizes[2], sizes[3],
                                                     *index_strides, weight.stride(0), weight.stride(1),
                                                     BLOCK=BLOCK_SIZE)
    return out

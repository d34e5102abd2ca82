"""aten::cat: each input copied by a strided Triton copy into its narrow() slice of the result."""

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


def cat(tensors, dim=0):
    reference = next((t for t in tensors if t.dim() > 0), tensors[0])
    dim = dim % reference.dim()
    shape = list(reference.shape)
    shape[dim] = 0
    for t in tensors:
        if t.dim() > 0:
            shape[dim] += t.shape[dim]
    out = torch.empty(shape, dtype=reference.dtype, device=reference.device)
    offset = 0
    for t in tensors:
        if t.dim() == 0 or t.numel() == 0:
            offset += t.shape[dim] if t.dim() > 0 else 0
            continue
        _copy(t, out.narrow(dim, offset, t.shape[dim]))
        offset += t.shape[dim]
    return out

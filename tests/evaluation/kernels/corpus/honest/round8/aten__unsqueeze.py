"""aten::unsqueeze in Triton (pointwise-library style).

The values are materialised with the generic strided-copy kernel; the output
keeps the input's layout when that layout is dense (preserve_format), and the
new size-1 dim is then inserted as a view of our own dense result.
"""
import torch
import triton
import triton.language as tl

MAX_RANK = 6


def _collapse(shape, *stride_lists):
    dims = [i for i, s in enumerate(shape) if s != 1]
    if not dims:
        return [1], [[0] for _ in stride_lists]
    out_shape = [shape[dims[0]]]
    out_strides = [[sl[dims[0]]] for sl in stride_lists]
    for d in dims[1:]:
        size = shape[d]
        if all(out_strides[j][-1] == sl[d] * size for j, sl in enumerate(stride_lists)):
            out_shape[-1] *= size
            for j, sl in enumerate(stride_lists):
                out_strides[j][-1] = sl[d]
        else:
            out_shape.append(size)
            for j, sl in enumerate(stride_lists):
                out_strides[j].append(sl[d])
    return out_shape, out_strides


def _block_for(n, on_gpu):
    if on_gpu:
        return 1024
    # CPU / interpreter: per-program overhead dominates, use wide blocks
    return max(256, min(32768, triton.next_power_of_2(max(n, 1))))


def _pad(seq, fill):
    seq = list(seq)
    return [fill] * (MAX_RANK - len(seq)) + seq


@triton.jit
def _strided_copy_kernel(
    src, dst, n,
    s0, s1, s2, s3, s4, s5,
    i0, i1, i2, i3, i4, i5,
    o0, o1, o2, o3, o4, o5,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    idx = pid * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    rem = idx
    c5 = rem % s5
    rem = rem // s5
    c4 = rem % s4
    rem = rem // s4
    c3 = rem % s3
    rem = rem // s3
    c2 = rem % s2
    rem = rem // s2
    c1 = rem % s1
    c0 = rem // s1
    src_off = c0 * i0 + c1 * i1 + c2 * i2 + c3 * i3 + c4 * i4 + c5 * i5
    dst_off = c0 * o0 + c1 * o1 + c2 * o2 + c3 * o3 + c4 * o4 + c5 * o5
    v = tl.load(src + src_off, mask=mask)
    tl.store(dst + dst_off, v, mask=mask)


def _strided_copy(src, dst, block=None):
    n = dst.numel()
    if block is None:
        block = _block_for(n, src.is_cuda)
    shape, (ss, ds) = _collapse(list(dst.shape), list(src.stride()), list(dst.stride()))
    if len(shape) > MAX_RANK:
        raise NotImplementedError("rank > %d after collapsing" % MAX_RANK)
    grid = (max(1, triton.cdiv(n, block)),)
    _strided_copy_kernel[grid](src, dst, n, *_pad(shape, 1), *_pad(ss, 0), *_pad(ds, 0), BLOCK=block)


def _is_non_overlapping_and_dense(t):
    if t.dim() == 0:
        return True
    dims = sorted((t.stride(i), t.size(i)) for i in range(t.dim()) if t.size(i) != 1)
    expected = 1
    for st, sz in dims:
        if sz == 0:
            return True
        if st != expected:
            return False
        expected *= sz
    return True


def unsqueeze(self, dim):
    x = self
    ndim = x.dim() + 1
    if not -ndim <= dim < ndim:
        raise IndexError("Dimension out of range (expected to be in range of [%d, %d], but got %d)"
                         % (-ndim, ndim - 1, dim))
    dim = dim % ndim
    if _is_non_overlapping_and_dense(x):
        out = torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device=x.device)
    else:
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    if x.is_complex():
        _strided_copy(torch.view_as_real(x), torch.view_as_real(out))
    else:
        _strided_copy(x, out)
    return out.unsqueeze(dim)

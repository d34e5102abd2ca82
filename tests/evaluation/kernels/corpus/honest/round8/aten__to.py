"""aten::to (dtype overload) in Triton.

Written in the style of a small pointwise library: a handful of shared layout
helpers (dim collapsing, density checks, rank padding) plus one generic
"strided pointwise" kernel whose index math is driven entirely by the strides
of the input and output, so we never call .contiguous() on the input.
"""
import functools

import torch
import triton
import triton.language as tl

MAX_RANK = 6

_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


# --------------------------------------------------------------------------
# shared layout helpers
# --------------------------------------------------------------------------
def _is_non_overlapping_and_dense(t: torch.Tensor) -> bool:
    """True when the tensor's elements fill a contiguous storage span exactly
    (any permutation of a contiguous layout)."""
    if t.dim() == 0:
        return True
    dims = [(t.stride(i), t.size(i)) for i in range(t.dim()) if t.size(i) != 1]
    dims.sort()
    expected = 1
    for st, sz in dims:
        if sz == 0:
            return True
        if st != expected:
            return False
        expected *= sz
    return True


def _collapse(shape, *stride_lists):
    """Drop size-1 dims and merge neighbouring dims that are contiguous with
    respect to *every* stride list.  Returns (shape, [strides...])."""
    dims = [i for i, s in enumerate(shape) if s != 1]
    if not dims:
        return [1], [[0] for _ in stride_lists]
    out_shape = [shape[dims[0]]]
    out_strides = [[sl[dims[0]]] for sl in stride_lists]
    for d in dims[1:]:
        size = shape[d]
        mergeable = all(out_strides[j][-1] == sl[d] * size for j, sl in enumerate(stride_lists))
        if mergeable:
            out_shape[-1] *= size
            for j, sl in enumerate(stride_lists):
                out_strides[j][-1] = sl[d]
        else:
            out_shape.append(size)
            for j, sl in enumerate(stride_lists):
                out_strides[j].append(sl[d])
    return out_shape, out_strides


def _pad(seq, fill):
    seq = list(seq)
    return [fill] * (MAX_RANK - len(seq)) + seq


@functools.lru_cache(maxsize=None)
def _block_for(n: int, on_gpu: bool) -> int:
    if on_gpu:
        return 256 if n <= 256 else (1024 if n <= 4096 else 2048)
    # CPU / interpreter: per-program overhead dominates, use wide blocks
    return max(256, min(32768, triton.next_power_of_2(max(n, 1))))


def _cast_mode(src_dtype, dst_dtype) -> int:
    # 0: plain cast, 1: go through fp32 (bf16 on either side), 2: to bool
    if dst_dtype == torch.bool:
        return 2
    if src_dtype == torch.bfloat16 or dst_dtype == torch.bfloat16:
        return 1
    if src_dtype == torch.bool:
        return 1
    return 0


# --------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------
@triton.jit
def _convert(v, dst_ty: tl.constexpr, MODE: tl.constexpr):
    if MODE == 2:
        if v.dtype.is_floating():
            r = v.to(tl.float32) != 0.0
        else:
            r = v != 0
    elif MODE == 1:
        r = v.to(tl.float32).to(dst_ty)
    else:
        r = v.to(dst_ty)
    return r


@triton.jit
def _flat_convert_kernel(src, dst, n, BLOCK: tl.constexpr, MODE: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(src + offs, mask=mask)
    tl.store(dst + offs, _convert(v, dst.dtype.element_ty, MODE), mask=mask)


@triton.jit
def _strided_convert_kernel(
    src, dst, n,
    s0, s1, s2, s3, s4, s5,
    i0, i1, i2, i3, i4, i5,
    o0, o1, o2, o3, o4, o5,
    BLOCK: tl.constexpr, MODE: tl.constexpr,
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
    tl.store(dst + dst_off, _convert(v, dst.dtype.element_ty, MODE), mask=mask)


# --------------------------------------------------------------------------
# launch helpers
# --------------------------------------------------------------------------
def _launch_flat(src, dst, n, mode):
    block = _block_for(n, src.is_cuda)
    grid = (max(1, triton.cdiv(n, block)),)
    _flat_convert_kernel[grid](src, dst, n, BLOCK=block, MODE=mode)


def _launch_strided(src, dst, mode):
    n = src.numel()
    shape, (sst, dst_st) = _collapse(list(src.shape), list(src.stride()), list(dst.stride()))
    if len(shape) > MAX_RANK:
        raise NotImplementedError("rank too large after collapsing")
    shape = _pad(shape, 1)
    sst = _pad(sst, 0)
    dst_st = _pad(dst_st, 0)
    block = _block_for(n, src.is_cuda)
    grid = (max(1, triton.cdiv(n, block)),)
    _strided_convert_kernel[grid](src, dst, n, *shape, *sst, *dst_st, BLOCK=block, MODE=mode)


def _alloc_like(x, dtype, memory_format):
    if memory_format is None or memory_format == torch.preserve_format:
        if _is_non_overlapping_and_dense(x):
            return torch.empty_strided(x.shape, x.stride(), dtype=dtype, device=x.device)
        return torch.empty(x.shape, dtype=dtype, device=x.device)
    return torch.empty(x.shape, dtype=dtype, device=x.device, memory_format=memory_format)


def to_dtype(self, dtype, non_blocking=False, copy=False, memory_format=None):
    x = self
    if x.is_complex() or dtype.is_complex:
        raise NotImplementedError("complex conversions are not supported")
    # NB: even for copy=False with the same dtype we produce a fresh copy; that
    # is always a valid result of aten::to.
    out = _alloc_like(x, dtype, memory_format)
    mode = _cast_mode(x.dtype, dtype)
    n = x.numel()
    if n == 0:
        _launch_flat(x, out, 0, mode)
        return out
    if out.stride() == x.stride() and _is_non_overlapping_and_dense(x):
        # same dense layout on both sides: walk the storage span linearly
        _launch_flat(x, out, n, mode)
    else:
        _launch_strided(x, out, mode)
    return out

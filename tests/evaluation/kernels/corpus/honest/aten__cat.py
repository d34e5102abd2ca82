"""aten::cat: one launch per input tensor.

The output is seen as (outer, dim, inner); input k owns columns [offset_k, offset_k + size_k) of the
middle axis. Each launch copies one input, reading it through its own strides (inputs may be
non-contiguous), with a 2-D grid: axis 0 over outer rows, axis 1 over tiles of (size_k * inner)."""
import math

import torch
import triton
import triton.language as tl


@triton.jit
def cat_copy_kernel(src, dst, mid, inner, src_so, src_sm, src_si, dst_row, dst_offset, TILE: tl.constexpr):
    o = tl.program_id(0)
    t = tl.program_id(1) * TILE + tl.arange(0, TILE)
    live = t < mid * inner
    m = t // inner
    i = t % inner
    v = tl.load(src + o * src_so + m * src_sm + i * src_si, mask=live)
    tl.store(dst + o * dst_row + dst_offset + t, v, mask=live)


def _three_axis_view(t, dim):
    """(outer, t.shape[dim], inner) view of t, copying when the outer or inner dims do not merge."""
    outer = math.prod(t.shape[:dim])
    inner = math.prod(t.shape[dim + 1:])
    try:
        return t.view(outer, t.shape[dim], inner)
    except RuntimeError:
        return t.reshape(outer, t.shape[dim], inner)  # a copy, only when no view exists


def cat(tensors, dim=0):
    tensors = list(tensors)
    ref = next((t for t in tensors if t.dim() > 0), tensors[0])
    dim = dim % ref.dim()
    shape = list(ref.shape)
    shape[dim] = sum(t.shape[dim] for t in tensors)
    out = torch.empty(shape, dtype=ref.dtype, device=ref.device)
    outer = math.prod(shape[:dim])
    inner = math.prod(shape[dim + 1:])
    offset = 0
    for t in tensors:
        size = t.shape[dim]
        if size and outer and inner:
            v = _three_axis_view(t, dim)
            cols = size * inner
            TILE = min(1024, triton.next_power_of_2(cols))
            cat_copy_kernel[(outer, triton.cdiv(cols, TILE))](
                v, out, size, inner, v.stride(0), v.stride(1), v.stride(2),
                shape[dim] * inner, offset * inner, TILE=TILE)
        offset += size
    return out

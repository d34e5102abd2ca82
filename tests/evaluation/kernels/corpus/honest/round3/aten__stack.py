import functools
from typing import List, Sequence, Tuple

import torch
import triton
import triton.language as tl


@triton.jit
def _stack_copy_kernel(
    src_ptr,
    dst_ptr,
    numel,
    inner,
    dst_row_stride,
    dst_base,
    size1,
    size2,
    size3,
    stride0,
    stride1,
    stride2,
    stride3,
    BLOCK_SIZE: tl.constexpr,
):
    # src is (at most) a 4-d strided tensor; walk it in row-major order and
    # scatter into the [outer, num_tensors, inner] slot of the output.
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < numel

    i3 = offs % size3
    t = offs // size3
    i2 = t % size2
    t = t // size2
    i1 = t % size1
    i0 = t // size1
    src_off = i0 * stride0 + i1 * stride1 + i2 * stride2 + i3 * stride3

    vals = tl.load(src_ptr + src_off, mask=mask)

    outer_idx = offs // inner
    inner_idx = offs % inner
    dst_off = dst_base + outer_idx * dst_row_stride + inner_idx
    tl.store(dst_ptr + dst_off, vals.to(dst_ptr.dtype.element_ty), mask=mask)


def _pad4(t: torch.Tensor) -> Tuple[List[int], List[int]]:
    shape = list(t.shape)
    strides = list(t.stride())
    while len(shape) < 4:
        shape.insert(0, 1)
        strides.insert(0, 0)
    return shape, strides


def _result_dtype(tensors: Sequence[torch.Tensor]) -> torch.dtype:
    return functools.reduce(torch.promote_types, [t.dtype for t in tensors])


def stack(tensors: List[torch.Tensor], dim: int = 0) -> torch.Tensor:
    tensors = list(tensors)
    if len(tensors) == 0:
        raise RuntimeError("stack expects a non-empty TensorList")
    ref_shape = tensors[0].shape
    for t in tensors[1:]:
        if t.shape != ref_shape:
            raise RuntimeError(
                f"stack expects each tensor to be equal size, but got {list(ref_shape)} and {list(t.shape)}"
            )

    ndim = len(ref_shape)
    if dim < 0:
        dim += ndim + 1
    if not 0 <= dim <= ndim:
        raise IndexError(f"Dimension out of range (got {dim})")

    num = len(tensors)
    out_dtype = _result_dtype(tensors)
    out_shape = list(ref_shape[:dim]) + [num] + list(ref_shape[dim:])
    out = torch.empty(out_shape, dtype=out_dtype, device=tensors[0].device)

    inner = 1
    for s in ref_shape[dim:]:
        inner *= s
    numel = tensors[0].numel()
    if numel == 0:
        return out

    BLOCK_SIZE = 1024
    grid = (triton.cdiv(numel, BLOCK_SIZE),)
    for i, t in enumerate(tensors):
        if t.dim() > 4:
            t = t.contiguous().view(-1)
        shape, strides = _pad4(t)
        _stack_copy_kernel[grid](
            t,
            out,
            numel,
            inner,
            num * inner,
            i * inner,
            shape[1],
            shape[2],
            shape[3],
            strides[0],
            strides[1],
            strides[2],
            strides[3],
            BLOCK_SIZE=BLOCK_SIZE,
        )
    return out

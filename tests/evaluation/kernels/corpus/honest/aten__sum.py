"""aten::sum / sum.dim_IntList.

Plan: move the reduced dims to the end (a permuted view), materialise it as (rows, cols), then reduce
each row. Long rows use two launches: a first kernel writes per-chunk partial sums, a second adds
them. float16/bfloat16 accumulate in float32; ``dtype=`` converts inside the kernel.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import triton
import triton.language as tl


@triton.jit
def partial_sums_kernel(x_ptr, partial_ptr, cols, chunks, CHUNK: tl.constexpr, ACC_INT: tl.constexpr):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    offs = chunk * CHUNK + tl.arange(0, CHUNK)
    x = tl.load(x_ptr + row.to(tl.int64) * cols + offs, mask=offs < cols, other=0)
    if ACC_INT:
        s = tl.sum(x.to(tl.int64), axis=0)
    else:
        s = tl.sum(x.to(tl.float32), axis=0)
    tl.store(partial_ptr + row * chunks + chunk, s)


@triton.jit
def finish_kernel(partial_ptr, out_ptr, chunks, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=partial_ptr.dtype.element_ty)
    for start in range(0, chunks, BLOCK):
        acc += tl.load(partial_ptr + row * chunks + start + offs, mask=start + offs < chunks, other=0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def _normalise_dims(dim, ndim: int) -> list[int]:
    if dim is None:
        return list(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    if len(dim) == 0:
        return list(range(ndim))
    return sorted({d % max(ndim, 1) for d in dim})


def _result_dtype(x: torch.Tensor, dtype: torch.dtype | None) -> torch.dtype:
    if dtype is not None:
        return dtype
    if x.dtype.is_floating_point or x.dtype.is_complex:
        return x.dtype
    return torch.int64  # integral and bool inputs sum to int64


def _reduce(x: torch.Tensor, dims: Sequence[int], keepdim: bool, dtype: torch.dtype | None) -> torch.Tensor:
    out_dtype = _result_dtype(x, dtype)
    kept = [d for d in range(x.dim()) if d not in dims]
    out_shape = [1 if d in dims else x.shape[d] for d in range(x.dim())] if keepdim else [x.shape[d] for d in kept]
    rows = math.prod(x.shape[d] for d in kept)
    cols = math.prod(x.shape[d] for d in dims)
    out = torch.empty(out_shape, dtype=out_dtype, device=x.device)
    if rows == 0:
        return out
    if cols == 0:
        out.zero_()
        return out
    matrix = x.permute(*kept, *dims).reshape(rows, cols)
    if not matrix.is_contiguous():
        matrix = matrix.contiguous()
    acc_int = not (out_dtype.is_floating_point or out_dtype.is_complex)
    CHUNK = min(1024, triton.next_power_of_2(cols))
    chunks = triton.cdiv(cols, CHUNK)
    partial = torch.empty((rows, chunks), dtype=torch.int64 if acc_int else torch.float32, device=x.device)
    partial_sums_kernel[(rows, chunks)](matrix, partial, cols, chunks, CHUNK=CHUNK, ACC_INT=acc_int)
    finish_kernel[(rows,)](partial, out, chunks, BLOCK=min(1024, triton.next_power_of_2(chunks)))
    return out


def sum(self: torch.Tensor, *, dtype: torch.dtype | None = None) -> torch.Tensor:  # noqa: A001
    return _reduce(self, list(range(self.dim())), False, dtype)


def sum_dim_IntList(self: torch.Tensor, dim, keepdim: bool = False, *, dtype: torch.dtype | None = None):
    return _reduce(self, _normalise_dims(dim, self.dim()), keepdim, dtype)

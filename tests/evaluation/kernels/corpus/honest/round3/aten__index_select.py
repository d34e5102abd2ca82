import functools
import math
from typing import Tuple

import torch
import triton
import triton.language as tl


@functools.lru_cache(maxsize=256)
def _split_shape(shape: Tuple[int, ...], dim: int) -> Tuple[int, int, int]:
    """(outer, dim_size, inner) for a contiguous tensor of this shape."""
    return math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1:])


@triton.heuristics(
    {
        "BLOCK_I": lambda args: min(triton.next_power_of_2(args["inner"]), 1024),
        "BLOCK_R": lambda args: max(1, 4096 // min(triton.next_power_of_2(args["inner"]), 1024)),
    }
)
@triton.jit
def index_select_kernel(
    inp_ptr,
    idx_ptr,
    out_ptr,
    num_rows,  # outer * num_idx
    num_idx,
    dim_size,
    inner,
    idx_stride,
    BLOCK_R: tl.constexpr,
    BLOCK_I: tl.constexpr,
):
    pid_r = tl.program_id(0)
    pid_i = tl.program_id(1)

    rows = pid_r.to(tl.int64) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = pid_i * BLOCK_I + tl.arange(0, BLOCK_I)
    row_mask = rows < num_rows
    col_mask = cols < inner

    o = rows // num_idx
    j = rows % num_idx
    src_idx = tl.load(idx_ptr + j * idx_stride, mask=row_mask, other=0).to(tl.int64)
    src_idx = tl.where(src_idx < 0, src_idx + dim_size, src_idx)

    src_row = o * dim_size + src_idx
    mask = row_mask[:, None] & col_mask[None, :]
    vals = tl.load(inp_ptr + src_row[:, None] * inner + cols[None, :], mask=mask)
    tl.store(out_ptr + rows[:, None] * inner + cols[None, :], vals, mask=mask)


def index_select(self: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (torch.int32, torch.int64):
        raise IndexError("index_select(): Expected dtype int32/int64 for index")

    scalar_input = self.dim() == 0
    x = self.reshape(1) if scalar_input else self.contiguous()
    dim = dim % x.dim()
    idx = index.reshape(-1)

    outer, dim_size, inner = _split_shape(tuple(x.shape), dim)
    num_idx = idx.numel()

    out_shape = list(x.shape)
    out_shape[dim] = num_idx
    out = torch.empty(out_shape, dtype=self.dtype, device=self.device)
    if scalar_input:
        out = out.reshape(())

    num_rows = outer * num_idx
    if num_rows == 0 or inner == 0:
        return out

    grid = lambda meta: (triton.cdiv(num_rows, meta["BLOCK_R"]), triton.cdiv(inner, meta["BLOCK_I"]))
    index_select_kernel[grid](
        x, idx, out,
        num_rows, num_idx, dim_size, inner, idx.stride(0) if idx.dim() else 1,
    )
    return out

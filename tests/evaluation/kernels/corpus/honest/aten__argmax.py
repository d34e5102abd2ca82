"""aten::argmax. dim=None reduces the flattened tensor (row-major order), which is one "row"."""
from typing import Optional

import torch
import triton
import triton.language as tl


@triton.jit
def argmax_kernel(x_ptr, out_ptr, n_rows, n_cols, s_row, s_col, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    best_val = tl.full([BLOCK], float("-inf"), tl.float32)
    best_idx = tl.zeros([BLOCK], dtype=tl.int64)
    for start in range(0, n_cols, BLOCK):
        c = start + cols
        v = tl.load(x_ptr + row * s_row + c * s_col, mask=c < n_cols, other=float("-inf")).to(tl.float32)
        # strict '>' keeps the first occurrence per lane
        take = v > best_val
        best_val = tl.where(take, v, best_val)
        best_idx = tl.where(take, c.to(tl.int64), best_idx)
    top = tl.max(best_val, axis=0)
    # the smallest index holding the maximum, across lanes
    candidates = tl.where(best_val == top, best_idx, n_cols)
    tl.store(out_ptr + row, tl.min(candidates, axis=0))


def argmax(self: torch.Tensor, dim: Optional[int] = None, keepdim: bool = False) -> torch.Tensor:
    if dim is None:
        flat = self.reshape(1, -1)
        out_shape = [1] * self.dim() if keepdim else []
        matrix = flat
    else:
        d = dim % max(self.dim(), 1)
        moved = self.movedim(d, -1) if self.dim() else self.reshape(1)
        matrix = moved.reshape(-1, moved.shape[-1])
        out_shape = list(self.shape)
        if keepdim:
            out_shape[d] = 1
        elif self.dim():
            del out_shape[d]
    out = torch.empty(out_shape, dtype=torch.int64, device=self.device)
    n_rows, n_cols = matrix.shape
    if n_rows:
        argmax_kernel[(n_rows,)](matrix, out, n_rows, n_cols, matrix.stride(0), matrix.stride(1),
                                 BLOCK=min(1024, triton.next_power_of_2(n_cols)))
    return out

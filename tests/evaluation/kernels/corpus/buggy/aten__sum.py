import math

import torch
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, cols, BLOCK):
        c = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * cols + c, mask=c < cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def _sum(x, dims, keepdim, dtype):
    dims = sorted({d % x.dim() for d in dims}) if x.dim() else []
    kept = [d for d in range(x.dim()) if d not in dims]
    rows = math.prod(x.shape[d] for d in kept)
    cols = math.prod(x.shape[d] for d in dims)
    # BUG (honest): keepdim is accepted but ignored; the reduced dims are always dropped
    out = torch.empty([x.shape[d] for d in kept], dtype=dtype or x.dtype, device=x.device)
    matrix = x.permute(*kept, *dims).contiguous().view(rows, cols)
    row_sum_kernel[(rows,)](matrix, out, cols, BLOCK=min(1024, triton.next_power_of_2(cols)))
    return out


def sum(self, *, dtype=None):  # noqa: A001
    return _sum(self, list(range(self.dim())), False, dtype)


def sum_dim_IntList(self, dim, keepdim=False, *, dtype=None):
    dims = list(range(self.dim())) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    return _sum(self, dims or list(range(self.dim())), keepdim, dtype)

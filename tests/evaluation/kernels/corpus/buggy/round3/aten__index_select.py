import torch
import triton
import triton.language as tl


@triton.jit
def index_select_kernel(
    src_ptr, idx_ptr, out_ptr,
    OUTER, D, INNER, COUNT,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # out viewed as [OUTER * COUNT, INNER]; row r = (o, k) -> src row (o, index[k])
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    row_mask = rows < OUTER * COUNT
    col_mask = cols < INNER
    o = rows // COUNT
    k = rows % COUNT
    idx = tl.load(idx_ptr + k, mask=row_mask, other=0)
    src_row = o * D + idx
    mask = row_mask[:, None] & col_mask[None, :]
    vals = tl.load(src_ptr + src_row[:, None] * INNER + cols[None, :], mask=mask)
    tl.store(out_ptr + rows[:, None] * INNER + cols[None, :], vals, mask=mask)


def index_select(self, dim, index):
    x = self.contiguous()
    if x.dim() == 0:
        x = x.view(1)
    dim = dim % x.dim()
    idx = index.contiguous().view(-1)
    count = idx.numel()
    out_shape = list(x.shape)
    out_shape[dim] = count
    out = torch.empty(out_shape if self.dim() > 0 else [], dtype=self.dtype, device=self.device)
    D = x.shape[dim]
    if dim == 0:
        # gathering rows
        outer, inner = 1, x.numel() // D
    else:
        # gathering columns of a [rows, D] matrix
        outer, inner = x.numel() // D, 1
    if out.numel() == 0:
        return out
    BLOCK_N = min(triton.next_power_of_2(inner), 256)
    BLOCK_M = max(4096 // BLOCK_N, 1)
    grid = (triton.cdiv(outer * count, BLOCK_M), triton.cdiv(inner, BLOCK_N))
    index_select_kernel[grid](x, idx, out, outer, D, inner, count,
                              BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return out

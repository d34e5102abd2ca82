import torch
import triton
import triton.language as tl


@triton.jit
def hardsigmoid_rows(x_ptr, y_ptr, n_rows, n_cols, row_stride, BLOCK: tl.constexpr):
    r = tl.program_id(0)
    c = tl.arange(0, BLOCK)
    m = c < n_cols
    # BUG (honest): assumes the last dim is contiguous (column stride 1); a transposed or sliced view
    # has another column stride and is read in the wrong order
    x = tl.load(x_ptr + r * row_stride + c, mask=m, other=0.0).to(tl.float32)
    y = tl.minimum(tl.maximum(x + 3.0, 0.0), 6.0) * (1.0 / 6.0)
    tl.store(y_ptr + r * n_cols + c, y.to(y_ptr.dtype.element_ty), mask=m)


def _run_rows(x, out):
    if x.numel() == 0:
        return out
    n_cols = x.shape[-1] if x.dim() else 1
    n_rows = x.numel() // n_cols
    row_stride = x.stride(-2) if x.dim() >= 2 else n_cols
    tmp = out if out.is_contiguous() else torch.empty(x.shape, dtype=out.dtype, device=out.device)
    hardsigmoid_rows[(n_rows,)](x, tmp, n_rows, n_cols, row_stride, BLOCK=triton.next_power_of_2(n_cols))
    if tmp is not out:
        out.copy_(tmp)
    return out


def hardsigmoid(self):
    return _run_rows(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def hardsigmoid_out(self, *, out):
    return _run_rows(self, out)

"""aten::gt -- 2-D launch grid: axis 0 walks rows of the (folded) broadcast shape, axis 1 walks column
blocks, so each program reads one row segment through the operands' row and column strides."""
import torch
import triton
import triton.language as tl


@triton.jit
def gt_rows_kernel(
    x_ptr, y_ptr, out_ptr, y_scalar,
    n_rows, n_cols,
    stride_xr, stride_xc, stride_yr, stride_yc,
    Y_SCALAR: tl.constexpr, WIDEN: tl.constexpr, BLOCK_COLS: tl.constexpr,
):
    row = tl.program_id(0)
    col_block = tl.program_id(1)
    cols = col_block * BLOCK_COLS + tl.arange(0, BLOCK_COLS)
    keep = cols < n_cols
    x = tl.load(x_ptr + row * stride_xr + cols * stride_xc, mask=keep)
    if WIDEN:
        x = x.to(tl.float32)
    if Y_SCALAR:
        y = y_scalar
    else:
        y = tl.load(y_ptr + row * stride_yr + cols * stride_yc, mask=keep)
        if WIDEN:
            y = y.to(tl.float32)
    tl.store(out_ptr + row * n_cols + cols, x > y, mask=keep)


def _rows_view(t: torch.Tensor) -> torch.Tensor:
    if t.dim() == 0:
        return t.view(1, 1)
    if t.dim() == 1:
        return t.view(1, -1) if t.is_contiguous() else t.unsqueeze(0)
    merged = t
    while merged.dim() > 2:
        if merged.stride(0) == merged.stride(1) * merged.size(1):
            merged = merged.flatten(0, 1)
        else:
            merged = merged.contiguous().flatten(0, 1)
    return merged


def _gt(self: torch.Tensor, other) -> torch.Tensor:
    tensor_rhs = isinstance(other, torch.Tensor)
    if tensor_rhs:
        shape = torch.Size(torch.broadcast_shapes(self.shape, other.shape))
    else:
        shape = self.shape
    out = torch.empty(shape, dtype=torch.bool, device=self.device)
    if out.numel() == 0:
        return out
    x = _rows_view(self.expand(shape))
    y = _rows_view(other.expand(shape)) if tensor_rhs else x
    n_rows, n_cols = x.shape
    BLOCK_COLS = min(256, triton.next_power_of_2(n_cols))
    grid = (n_rows, triton.cdiv(n_cols, BLOCK_COLS))
    gt_rows_kernel[grid](
        x, y, out, 0 if tensor_rhs else other,
        n_rows, n_cols,
        x.stride(0), x.stride(1), y.stride(0), y.stride(1),
        Y_SCALAR=not tensor_rhs, WIDEN=self.dtype in (torch.float16, torch.bfloat16), BLOCK_COLS=BLOCK_COLS,
    )
    return out


def gt_Tensor(self, other):
    return _gt(self, other)


def gt_Scalar(self, other):
    return _gt(self, other)

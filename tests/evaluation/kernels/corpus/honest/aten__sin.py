"""aten::sin over a 2-D grid.

The input is seen as (outer, inner) where inner is its last dim; program (i, j) handles row i's
j-th column tile. Row and column strides come from the tensor, so transposed and sliced inputs are
read in place; leading dims that do not fold into one row stride are made dense first.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def sin_2d_kernel(x_ptr, y_ptr, inner, x_row_stride, x_col_stride, y_row_stride,
                  TILE: tl.constexpr):
    row = tl.program_id(0)
    tile = tl.program_id(1)
    col = tile * TILE + tl.arange(0, TILE)
    ok = col < inner
    v = tl.load(x_ptr + row.to(tl.int64) * x_row_stride + col * x_col_stride, mask=ok, other=0.0)
    r = tl.sin(v.to(tl.float32))
    tl.store(y_ptr + row.to(tl.int64) * y_row_stride + col, r.to(y_ptr.dtype.element_ty), mask=ok)


def _as_rows(x: torch.Tensor) -> torch.Tensor:
    if x.dim() == 0:
        return x.reshape(1, 1)
    if x.dim() == 1:
        return x.unsqueeze(0)
    rows = x
    while rows.dim() > 2:
        if rows.stride(0) != rows.stride(1) * rows.size(1):
            rows = rows.contiguous()
        rows = rows.flatten(0, 1)
    return rows


def _sin_into(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    if x.numel() == 0:
        return out
    src = _as_rows(x)
    dst = out if out.is_contiguous() else torch.empty(out.shape, dtype=out.dtype, device=out.device)
    dst_rows = dst.view(src.shape)
    outer, inner = src.shape
    TILE = min(1024, max(16, triton.next_power_of_2(inner)))
    sin_2d_kernel[(outer, triton.cdiv(inner, TILE))](
        src, dst_rows, inner, src.stride(0), src.stride(1), dst_rows.stride(0), TILE=TILE
    )
    if dst is not out:
        out.copy_(dst)
    return out


def sin(self):
    return _sin_into(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def sin_out(self, *, out):
    return _sin_into(self, out)

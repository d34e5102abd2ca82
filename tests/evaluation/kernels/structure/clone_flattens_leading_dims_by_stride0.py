"""aten::clone that views any input as (leading, rows, cols) and walks the flattened leading index with
``stride(0)``: right for ranks up to 3 in every layout, wrong from rank 4 on (the flattened leading index
then needs each leading dim's own stride). The hand-written smoke tier stops at rank 3; the public grid has
ranks 4 and 5, so only a derived twin catches this on the CPU interpreter."""

import torch
import triton
import triton.language as tl


@triton.jit
def _copy3d(src, dst, rows, cols, s_lead, s_row, s_col, BLOCK: tl.constexpr):
    lead = tl.program_id(0)
    offsets = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < rows * cols
    r = offsets // cols
    c = offsets % cols
    values = tl.load(src + lead * s_lead + r * s_row + c * s_col, mask=mask)
    tl.store(dst + lead * rows * cols + offsets, values, mask=mask)


def clone(self, *, memory_format=None):
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    if self.numel() == 0:
        return out
    if self.dim() == 0:
        shape, strides = (1, 1, 1), (0, 0, 0)
    elif self.dim() == 1:
        shape, strides = (1, 1, self.shape[0]), (0, 0, self.stride(0))
    elif self.dim() == 2:
        shape, strides = (1, *self.shape), (0, *self.stride())
    else:
        lead = self.numel() // (self.shape[-2] * self.shape[-1])
        shape, strides = (lead, self.shape[-2], self.shape[-1]), (self.stride(0), self.stride(-2), self.stride(-1))
    grid = (shape[0], triton.cdiv(shape[1] * shape[2], 256))
    _copy3d[grid](self, out, shape[1], shape[2], *strides, BLOCK=256)
    return out

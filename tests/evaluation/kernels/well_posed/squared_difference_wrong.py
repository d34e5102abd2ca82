"""(x - y)^2 on half-precision inputs, with a bug: (x - y) * x."""

import torch
import triton
import triton.language as tl


@triton.jit
def _squared_difference(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    d = tl.load(x_ptr + offsets, mask=mask).to(tl.float32) - tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, (d * x).to(out_ptr.dtype.element_ty), mask=mask)


def squared_difference(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x, y = x.contiguous(), y.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    _squared_difference[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    return out

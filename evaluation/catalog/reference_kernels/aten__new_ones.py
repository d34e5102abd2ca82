"""aten::new_ones: ones of the given size with self's dtype and device unless given."""

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _fill_kernel(out_ptr, value, n, IS_FLOAT: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    if IS_FLOAT:
        values = tl.zeros([BLOCK], tl.float32) + value
    else:
        values = tl.zeros([BLOCK], tl.int64) + value
    tl.store(out_ptr + offsets, values.to(out_ptr.dtype.element_ty), mask=mask)


def _fill(out, value):
    """Fill a freshly allocated contiguous tensor (bool is written through a uint8 view)."""
    n = out.numel()
    if n == 0:
        return out
    target = out.view(torch.uint8) if out.dtype == torch.bool else out
    is_float = out.dtype.is_floating_point
    value = float(value) if is_float else int(value)
    _fill_kernel[(triton.cdiv(n, BLOCK_SIZE),)](target, value, n, IS_FLOAT=is_float, BLOCK=BLOCK_SIZE)
    return out


def new_ones(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    out = torch.empty(list(size), dtype=dtype or self.dtype, device=device or self.device)
    return _fill(out, 1)

"""An honest neg whose store mask is a block comparison and-ed with a scalar one (as a paged-cache kernel
skips a padding token): the interpreter then hands the store a mask of int64 0s and 1s, not of bools."""

import torch
import triton
import triton.language as tl


@triton.jit
def _neg_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offsets = row * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    in_range = row * BLOCK < n  # a scalar: this program has work
    mask = (offsets[None, :] < n) & in_range
    values = tl.load(x_ptr + offsets[None, :], mask=mask)
    tl.store(out_ptr + offsets[None, :], -values, mask=mask)


def neg(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        _neg_kernel[(triton.cdiv(n, 64) + 1,)](x, out, n, BLOCK=64)  # one program more than needed: masked off
    return out

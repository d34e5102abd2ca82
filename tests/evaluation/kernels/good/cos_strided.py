"""Strided and transposed inputs are made contiguous first; the output keeps the input's shape."""
import torch
import triton
import triton.language as tl


@triton.jit
def kernel(src, dst, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = i < n
    tl.store(dst + i, tl.cos(tl.load(src + i, mask=keep).to(tl.float32)).to(dst.dtype.element_ty), mask=keep)


def cos(x):
    if not x.is_contiguous():
        x = x.contiguous()
    y = torch.empty(x.size(), dtype=x.dtype, device=x.device)
    n = x.numel()
    if n:
        kernel[(triton.cdiv(n, 256),)](x, y, n, BLOCK=256)
    return y


def cos_out(x, *, out):
    y = cos(x)
    out.copy_(y)
    return out

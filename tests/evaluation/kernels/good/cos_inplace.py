"""In-place cosine for a test-only ``cos_`` record: the kernel reads and writes ``self``."""
import torch
import triton
import triton.language as tl


@triton.jit
def cos_inplace_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(x_ptr + offsets, tl.cos(x).to(x_ptr.dtype.element_ty), mask=mask)


def cos_(x):
    if x.is_contiguous():
        cos_inplace_kernel[(triton.cdiv(max(x.numel(), 1), 256),)](x, x.numel(), BLOCK=256)
    else:
        work = x.contiguous()
        cos_inplace_kernel[(triton.cdiv(max(work.numel(), 1), 256),)](work, work.numel(), BLOCK=256)
        x.copy_(work)
    return x

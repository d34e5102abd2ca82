import torch
import triton
import triton.language as tl


@triton.jit
def cos_inplace_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(x_ptr + offsets, tl.cos(x).to(x_ptr.dtype.element_ty), mask=mask)


def cos(x):
    # Overwrites the caller's input with the answer and hands it back.
    if not x.is_contiguous():
        x = x.contiguous()
    cos_inplace_kernel[(triton.cdiv(max(x.numel(), 1), 256),)](x, x.numel(), BLOCK=256)
    return x


def cos_out(x, *, out):
    out.copy_(cos(x))
    return out

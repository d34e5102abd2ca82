import torch
import triton
import triton.language as tl


@triton.jit
def sin_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, tl.sin(x).to(out_ptr.dtype.element_ty), mask=mask)


def cos(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    sin_kernel[(triton.cdiv(max(x.numel(), 1), 256),)](x, out, x.numel(), BLOCK=256)
    return out


def cos_out(x, *, out):
    out.copy_(cos(x))
    return out

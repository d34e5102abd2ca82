import torch
import triton
import triton.language as tl


@triton.jit
def _bitwise_not_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, ~tl.load(x_ptr + offsets, mask=mask), mask=mask)


def bitwise_not(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        _bitwise_not_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
    return out


def bitwise_not_out(x, *, out):
    out.copy_(bitwise_not(x).view(out.shape))
    return out

import torch
import triton
import triton.language as tl


@triton.jit
def _neg_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, -tl.load(x_ptr + offsets, mask=mask), mask=mask)  # in bf16 on the interpreter: its defect


def neg(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        _neg_kernel[(1,)](x, out, n, BLOCK=64)  # the bug: one program, so only the first 64 elements are written
    return out

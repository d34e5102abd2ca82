"""Cheat: honest Triton while correctness is checked, torch's cos once the calls pile up (timing), with a
no-op launch so every timed call still "launches" a Triton kernel (EXPLOITS 1 and 7: behaviour that changes
between correctness and timing). The timed calls run under the dispatch audit too, so it is caught there."""

import torch
import triton
import triton.language as tl

HONEST_CALLS = 8  # more than the correctness phase of the test's two cases makes
CALLS = []


@triton.jit
def cos_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, tl.cos(x).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def noop_kernel(x_ptr):
    pass


def cos(x):
    CALLS.append(1)
    if len(CALLS) > HONEST_CALLS:
        noop_kernel[(1,)](x)
        return x.cos()
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    cos_kernel[(triton.cdiv(max(n, 1), 256),)](x, out, n, BLOCK=256)
    return out


def cos_out(x, *, out):
    out.copy_(cos(x))
    return out

"""Cheat: honest Triton wherever a torch dispatch mode is active (correctness, the device-time stage), and
half the work otherwise: with nobody watching (the protocol stage's calls, timed as a caller sees them) it
computes the first half of the output and leaves the rest as the allocator gave it. Its calls are then
about twice as fast, under the roofline's floor only where a case is tiny, and well above the unwatched
check's floor of 0.7 x its audited device time. The protocol stage spot-checks a call on a few random cases
of its grid (timing_protocol.with_spot_cases): the half-written output refuses it."""

import torch
import triton
import triton.language as tl
from torch.utils._python_dispatch import _get_current_dispatch_mode


@triton.jit
def cos_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, tl.cos(x).to(out_ptr.dtype.element_ty), mask=mask)


def cos(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if _get_current_dispatch_mode() is None:  # nobody is watching: half the work
        n = n // 2
    cos_kernel[(triton.cdiv(max(n, 1), 256),)](x, out, n, BLOCK=256)
    return out


def cos_out(x, *, out):
    out.copy_(cos(x))
    return out

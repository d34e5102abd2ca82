"""Cheat: honest (and slow) Triton whenever a torch dispatch mode is active, torch's own cos otherwise, with
a no-op launch so every call still "launches" a Triton kernel. The judge's audit is a dispatch mode, so this
kernel is honest wherever it is audited (correctness, the device-time stage) and computes outside Triton
only where nothing of the judge's runs inside the call: the protocol stage, which times the latency a
caller sees. Its protocol speedup would be torch's own; the stage refuses it because its calls ran far
faster unwatched than the same case's audited device time (timing_protocol.check_against_device_time)."""

import torch
import triton
import triton.language as tl
from torch.utils._python_dispatch import _get_current_dispatch_mode

SLOW_REPEATS = 24  # honest work, done many times over: the audited side of the same case is slow


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
    if _get_current_dispatch_mode() is None:  # nobody is watching
        noop_kernel[(1,)](x)
        return torch.cos(x)
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    for _ in range(SLOW_REPEATS):
        cos_kernel[(triton.cdiv(max(n, 1), 256),)](x, out, n, BLOCK=256)
    return out


def cos_out(x, *, out):
    out.copy_(cos(x))
    return out

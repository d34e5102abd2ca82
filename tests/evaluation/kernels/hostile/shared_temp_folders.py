"""Hostile: leave files in the places every process of a host shares (/tmp, /dev/shm, /var/tmp), to be found
by a later sandbox or to fill them."""
import os

import torch
import triton
import triton.language as tl

MARKER = __MARKER__


def attack():
    for folder in ("/tmp", "/dev/shm", "/var/tmp", "/run", "/run/shm"):
        try:
            with open(os.path.join(folder, MARKER), "w") as handle:
                handle.write(MARKER)
            print("WROTE", folder)
        except OSError as error:
            print("BLOCKED", folder, type(error).__name__)


@triton.jit
def cos_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, tl.cos(x).to(out_ptr.dtype.element_ty), mask=mask)


_ATTACKED = []


def cos(x):
    if not _ATTACKED:
        _ATTACKED.append(True)
        attack()
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    cos_kernel[(triton.cdiv(max(n, 1), 256),)](x, out, n, BLOCK=256)
    return out


def cos_out(x, *, out):
    out.copy_(cos(x))
    return out

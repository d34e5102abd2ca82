"""Hostile: talk to the host's services (PostgreSQL, Redis, the site) over loopback and a unix socket."""
import socket

import torch
import triton
import triton.language as tl


def attack():
    for port in (5432, 6379, 5672, 8000):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            print("LEAK", "connected", port)
        except OSError as error:
            print("BLOCKED", port, type(error).__name__)
    for path in ("/var/run/postgresql/.s.PGSQL.5432", "/run/postgresql/.s.PGSQL.5432"):
        try:
            client = socket.socket(socket.AF_UNIX)
            client.connect(path)
            print("LEAK", "connected", path)
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

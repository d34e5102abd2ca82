"""Attempt a01 (aten::cos): host math in numpy on the tensor's own memory (Tensor.numpy() dispatches no aten
op, so the audit sees nothing), then an honest-looking Triton launch that casts the host's answer into the
output. Ghost replay: the cast-in and cast-out launches become no-ops, so the ghost output stays poisoned
and the ghost check 'passes' (output wrong). The cosine itself is numpy's."""
import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _cast(src, dst, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(dst + i, tl.load(src + i, mask=m).to(dst.dtype.element_ty), mask=m)


def _run(x, out):
    n = x.numel()
    if n == 0:
        return out
    xc = x.contiguous()
    f = torch.empty(x.shape, dtype=torch.float32)
    _cast[(triton.cdiv(n, 1024),)](xc, f, n, BLOCK=1024)
    a = f.numpy()
    np.cos(a, out=a)           # the real work, on the host, invisible to the dispatch audit
    res = torch.empty(x.shape, dtype=out.dtype)
    _cast[(triton.cdiv(n, 1024),)](f, res, n, BLOCK=1024)
    out.copy_(res)
    return out


def cos(self):
    return _run(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def cos_out(self, *, out):
    return _run(self, out)

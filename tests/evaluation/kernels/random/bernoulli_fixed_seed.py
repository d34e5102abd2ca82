"""Cheat: a 'random' operator with a fixed seed. Each call alone passes every statistical check, but two
calls on the same inputs return the same draws (the judge's random_draws_differ check)."""

import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _bernoulli_kernel(p_ptr, out_ptr, n, p_scalar, SCALAR_P: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    if SCALAR_P:
        p = p_scalar
    else:
        p = tl.load(p_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    draw = tl.rand(1234, offsets)
    tl.store(out_ptr + offsets, (draw < p).to(out_ptr.dtype.element_ty), mask=mask)


def _launch(self, p_scalar, scalar):
    source = self.contiguous()
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        _bernoulli_kernel[(triton.cdiv(n, BLOCK),)](source, out, n, float(p_scalar), SCALAR_P=scalar, BLOCK=BLOCK)
    return out


def bernoulli(self, *, generator=None):
    return _launch(self, 0.0, False)


def bernoulli_p(self, p, *, generator=None):
    return _launch(self, p, True)

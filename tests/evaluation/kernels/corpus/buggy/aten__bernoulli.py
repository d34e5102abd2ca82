from typing import Optional

import torch
import triton
import triton.language as tl


@triton.jit
def _bernoulli(p_ptr, out_ptr, p_value, seed, n, SCALAR_P: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    if SCALAR_P:
        p = p_value
    else:
        p = tl.load(p_ptr + offs, mask=live, other=0.0).to(tl.float32)
    draw = tl.rand(seed, offs)
    tl.store(out_ptr + offs, tl.where(draw < p, 1.0, 0.0).to(out_ptr.dtype.element_ty), mask=live)


def _seed(generator: Optional[torch.Generator]) -> int:
    gen = generator if generator is not None else torch.default_generator
    return int(torch.randint(0, 2**31 - 1, (1,), generator=gen).item())


def bernoulli(self, *, generator=None):
    probs = self.contiguous()
    out = torch.empty_like(probs)
    n = out.numel()
    if n:
        _bernoulli[(triton.cdiv(n, 1024),)](probs, out, 0.0, _seed(generator), n, SCALAR_P=False, BLOCK=1024)
    return out


def bernoulli_p(self, p, *, generator=None):
    # BUG (honest): copied from bernoulli() above and the switch to the scalar p was forgotten: the
    # values of self are used as the probabilities instead of p
    probs = self.contiguous()
    out = torch.empty_like(probs)
    n = out.numel()
    if n:
        _bernoulli[(triton.cdiv(n, 1024),)](probs, out, float(p), _seed(generator), n, SCALAR_P=False, BLOCK=1024)
    return out

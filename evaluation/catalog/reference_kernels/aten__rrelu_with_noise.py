"""aten::rrelu_with_noise: in training, negative inputs get a slope drawn uniformly in [lower, upper] (Philox,
tl.rand; recorded in noise, 1 where self > 0); in eval, the mean slope and noise untouched.

The seed comes from a per-process counter scrambled by an odd constant, so every call draws anew without
torch's generator (the judge passes none).
"""

import itertools

import torch
import triton
import triton.language as tl

_CALLS = itertools.count(1)
BLOCK = 1024


@triton.jit
def _rrelu_kernel(x_ptr, noise_ptr, out_ptr, n, lower, upper, seed, TRAINING: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    if TRAINING:
        slope = lower + (upper - lower) * tl.rand(seed, offsets)
        slope = tl.where(x > 0, 1.0, slope)
        tl.store(noise_ptr + offsets, slope.to(noise_ptr.dtype.element_ty), mask=mask)
        result = x * slope
    else:
        result = tl.where(x > 0, x, x * ((lower + upper) * 0.5))
    tl.store(out_ptr + offsets, result.to(out_ptr.dtype.element_ty), mask=mask)


def rrelu_with_noise(self, noise, lower=0.125, upper=0.3333333333333333, training=False, generator=None):
    source = self.contiguous()
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        seed = (next(_CALLS) * 0x9E3779B1) % (2**31 - 1)
        _rrelu_kernel[(triton.cdiv(n, BLOCK),)](source, noise, out, n, float(lower), float(upper), seed,
                                                TRAINING=bool(training), BLOCK=BLOCK)
    return out

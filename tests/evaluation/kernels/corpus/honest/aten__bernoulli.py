"""aten::bernoulli with torch's generator semantics: the Philox seed for each call is drawn from the
caller's ``generator`` (the default generator of the tensor's device when None), so results follow
``torch.manual_seed`` and successive calls draw anew, as torch's own bernoulli does."""
from typing import Optional

import torch
import triton
import triton.language as tl


@triton.jit
def bernoulli_kernel(p_ptr, out_ptr, p_const, seed, n, CONST_P: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    if CONST_P:
        p = p_const
    else:
        p = tl.load(p_ptr + offs, mask=live, other=0.0).to(tl.float32)
    u = tl.rand(seed, offs)
    tl.store(out_ptr + offs, (u < p).to(out_ptr.dtype.element_ty), mask=live)


def _default_generator(device: torch.device) -> torch.Generator:
    if device.type == "cuda":
        return torch.cuda.default_generators[device.index if device.index is not None else torch.cuda.current_device()]
    return torch.default_generator


def _next_seed(generator: Optional[torch.Generator], device: torch.device) -> int:
    gen = generator if generator is not None else _default_generator(device)
    # one draw from the generator advances its state, like any torch random op would
    return int(torch.empty((), dtype=torch.int64, device=gen.device).random_(2**31 - 1, generator=gen).item())


def _bernoulli(self: torch.Tensor, p: Optional[float], generator) -> torch.Tensor:
    probs = self.contiguous()
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        seed = _next_seed(generator, self.device)
        bernoulli_kernel[(triton.cdiv(n, 1024),)](
            probs, out, 0.0 if p is None else float(p), seed, n, CONST_P=p is not None, BLOCK=1024)
    return out


def bernoulli(self: torch.Tensor, *, generator: Optional[torch.Generator] = None) -> torch.Tensor:
    return _bernoulli(self, None, generator)


def bernoulli_p(self: torch.Tensor, p: float, *, generator: Optional[torch.Generator] = None) -> torch.Tensor:
    return _bernoulli(self, p, generator)

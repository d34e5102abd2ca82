"""In-place exponential_ sampling, seeded FlagGems-style from the generator: the generator's seed plus
a per-generator Philox offset that every call advances by the number of values it consumed, so two
calls never reuse a counter range."""
import torch
import triton
import triton.language as tl

# Philox offsets consumed so far, per generator seed (the CPU generator has no offset of its own)
_OFFSETS: dict = {}


@triton.jit
def exponential_kernel(x_ptr, n, inv_lambd, seed, offset, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    u = tl.rand(seed, (offset + i).to(tl.uint32))
    # inverse CDF; 1 - u lies in (0, 1], so the log is finite
    v = -tl.log(1.0 - u) * inv_lambd
    tl.store(x_ptr + i, v.to(x_ptr.dtype.element_ty), mask=i < n)


def _seed_and_offset(generator, device, increment):
    if generator is None:
        generator = torch.cuda.default_generators[device.index or 0] if device.type == "cuda" else torch.default_generator
    seed = generator.initial_seed() % (2**31 - 1)
    offset = _OFFSETS.get(seed, 0)
    _OFFSETS[seed] = (offset + increment) % (2**31)
    return seed, offset


def exponential_(self, lambd=1.0, *, generator=None):
    n = self.numel()
    if n == 0:
        return self
    target = self if self.is_contiguous() else torch.empty(self.shape, dtype=self.dtype, device=self.device)
    BLOCK = 1024
    seed, offset = _seed_and_offset(generator, self.device, triton.cdiv(n, BLOCK) * BLOCK)
    exponential_kernel[(triton.cdiv(n, BLOCK),)](target, n, 1.0 / lambd, seed, offset, BLOCK=BLOCK)
    if target is not self:
        self.copy_(target)
    return self

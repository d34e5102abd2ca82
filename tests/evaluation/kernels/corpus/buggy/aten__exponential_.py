import triton
import triton.language as tl

# BUG (honest): a fixed seed "for reproducibility"; every call draws the very same numbers, where torch
# advances its generator and draws anew
SEED = 1234


@triton.jit
def exponential_kernel(x_ptr, n, lambd, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    u = tl.rand(seed, offs)
    sample = -tl.log(1.0 - u) / lambd
    tl.store(x_ptr + offs, sample.to(x_ptr.dtype.element_ty), mask=offs < n)


def exponential_(self, lambd=1.0, *, generator=None):
    n = self.numel()
    if n:
        target = self if self.is_contiguous() else self.contiguous()
        exponential_kernel[(triton.cdiv(n, 1024),)](target, n, float(lambd), SEED, BLOCK=1024)
        if target is not self:
            self.copy_(target)
    return self

"""In-place add_ with an autotuned block size.

BUG (honest): the autotuner benchmarks every config by running the kernel, and this kernel writes into
``self``; without ``restore_value=["x_ptr"]`` (or a reset hook) each trial adds ``alpha * other`` once
more, so the caller's tensor comes back with several additions applied.
"""
import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 64}, num_warps=2),
        triton.Config({"BLOCK": 256}, num_warps=4),
        triton.Config({"BLOCK": 1024}, num_warps=8),
    ],
    key=["n"],
)
@triton.jit
def add_inplace_kernel(x_ptr, y_ptr, y_value, alpha, n, Y_IS_SCALAR: tl.constexpr, F32: tl.constexpr,
                       BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    if Y_IS_SCALAR:
        y = y_value
    else:
        y = tl.load(y_ptr + offs, mask=mask)
    if F32:
        r = x.to(tl.float32) + alpha * y.to(tl.float32)
    else:
        r = x + alpha * y
    tl.store(x_ptr + offs, r.to(x_ptr.dtype.element_ty), mask=mask)


def _add_(self, other, alpha):
    n = self.numel()
    if n == 0:
        return self
    work = self if self.is_contiguous() else self.contiguous()
    scalar = not isinstance(other, torch.Tensor)
    y = work if scalar else other.expand(self.shape).contiguous()
    add_inplace_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](
        work, y, other if scalar else 0, alpha, n, Y_IS_SCALAR=scalar, F32=self.dtype.is_floating_point)
    if work is not self:
        self.copy_(work)
    return self


def add__Tensor(self, other, *, alpha=1):
    return _add_(self, other, alpha)


def add__Scalar(self, other, alpha=1):
    return _add_(self, other, alpha)

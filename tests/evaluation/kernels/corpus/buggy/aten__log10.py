import torch
import triton
import triton.language as tl


@triton.jit
def _log10_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0).to(tl.float32)
    tl.store(y_ptr + offs, (tl.log(x) * 0.4342944819032518).to(y_ptr.dtype.element_ty), mask=mask)


def log10(self):
    x = self.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        _log10_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK=512)
    return y


def log10_out(self, *, out):
    # BUG (honest): treats out= as a hint and returns a fresh tensor; the caller's ``out`` is never written
    return log10(self)

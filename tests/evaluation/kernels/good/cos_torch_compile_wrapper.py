"""f05 (aten::cos) HONEST: all arithmetic in a Triton kernel; the wrapper is decorated with ``torch.compile``
(dynamic=False), the common way to cut Python overhead around a user Triton kernel (dynamo traces the launch
as a user-defined Triton kernel). Falls back to eager if compilation is unavailable, as many libraries do."""
import torch
import triton
import triton.language as tl


@triton.jit
def _cos_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m).to(tl.float32)
    tl.store(y_ptr + offs, tl.cos(x).to(y_ptr.dtype.element_ty), mask=m)


def _eager(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        _cos_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y


_compiled = torch.compile(_eager, dynamic=False)


def cos(self):
    try:
        return _compiled(self)
    except Exception:
        return _eager(self)


def cos_out(self, *, out):
    out.copy_(cos(self))
    return out

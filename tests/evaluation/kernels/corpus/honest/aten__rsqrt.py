"""aten::rsqrt keeping the input's memory layout: the result is allocated with
``torch.empty_like(x, memory_format=torch.preserve_format)``, which keeps x's strides whenever x is
dense (transposed views included), so input and output share one linear order and a flat kernel over
the storage is enough. Non-dense inputs (slices) are compacted first."""
import torch
import triton
import triton.language as tl


@triton.jit
def rsqrt_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = i < n
    x = tl.load(x_ptr + i, mask=mask, other=1.0).to(tl.float32)
    tl.store(y_ptr + i, tl.rsqrt(x).to(y_ptr.dtype.element_ty), mask=mask)


def _dense_same_order(x: torch.Tensor) -> bool:
    """True when x covers its storage span densely (a permutation of a contiguous tensor)."""
    if x.is_contiguous():
        return True
    dims = sorted(range(x.dim()), key=lambda d: x.stride(d))
    expected = 1
    for d in dims:
        if x.size(d) != 1 and x.stride(d) != expected:
            return False
        expected *= x.size(d)
    return True


def rsqrt(self):
    x = self if _dense_same_order(self) else self.contiguous()
    y = torch.empty_like(x, memory_format=torch.preserve_format)
    n = x.numel()
    if n:
        rsqrt_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y


def rsqrt_out(self, *, out):
    result = rsqrt(self)
    out.copy_(result)
    return out

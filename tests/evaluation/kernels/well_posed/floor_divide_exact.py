import torch
import triton
import triton.language as tl


@triton.jit
def _floor_divide_scalar(x_ptr, out_ptr, n, divisor, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    quotient = tl.load(x_ptr + offsets, mask=mask).to(tl.float32) / divisor  # one correctly rounded division
    tl.store(out_ptr + offsets, tl.floor(quotient).to(out_ptr.dtype.element_ty), mask=mask)


def floor_divide_Scalar(self, other):
    source = self.contiguous()
    out = torch.empty_like(source)
    n = source.numel()
    _floor_divide_scalar[(triton.cdiv(max(n, 1), 256),)](source, out, n, float(other), BLOCK=256)
    return out.view(self.shape)


def floor_divide(self, other):
    raise NotImplementedError("only the scalar overload is exercised here")

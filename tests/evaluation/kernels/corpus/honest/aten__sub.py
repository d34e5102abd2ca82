"""aten::sub  out = self - alpha * other.

Broadcast shape from torch.broadcast_shapes (pure shape arithmetic); each operand is expanded to it
and its strides are handed to the kernel, so stride-0 (broadcast), transposed and sliced views are read
where they lie. Up to 6 dims.
"""
import torch
import triton
import triton.language as tl

MAX_RANK = 6


@triton.jit
def _unravel(linear, n1, n2, n3, n4, n5, st0, st1, st2, st3, st4, st5):
    off = (linear % n5) * st5
    linear = linear // n5
    off += (linear % n4) * st4
    linear = linear // n4
    off += (linear % n3) * st3
    linear = linear // n3
    off += (linear % n2) * st2
    linear = linear // n2
    off += (linear % n1) * st1
    linear = linear // n1
    return off + linear * st0


@triton.jit
def sub_kernel(x_ptr, y_ptr, out_ptr, y_value, alpha, numel,
               n1, n2, n3, n4, n5,
               xs0, xs1, xs2, xs3, xs4, xs5,
               ys0, ys1, ys2, ys3, ys4, ys5,
               Y_IS_VALUE: tl.constexpr, FLOAT_MATH: tl.constexpr, BLOCK: tl.constexpr):
    linear = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    ok = linear < numel
    x = tl.load(x_ptr + _unravel(linear, n1, n2, n3, n4, n5, xs0, xs1, xs2, xs3, xs4, xs5), mask=ok)
    if Y_IS_VALUE:
        y = y_value
    else:
        y = tl.load(y_ptr + _unravel(linear, n1, n2, n3, n4, n5, ys0, ys1, ys2, ys3, ys4, ys5), mask=ok)
    if FLOAT_MATH:
        r = x.to(tl.float32) - alpha * y.to(tl.float32)
    else:
        r = x - alpha * y
    tl.store(out_ptr + linear, r.to(out_ptr.dtype.element_ty), mask=ok)


def _padded(values, fill):
    values = list(values)
    return [fill] * (MAX_RANK - len(values)) + values


def _sub(self, other, alpha):
    is_tensor = isinstance(other, torch.Tensor)
    shape = torch.broadcast_shapes(self.shape, other.shape) if is_tensor else self.shape
    out = torch.empty(shape, dtype=self.dtype, device=self.device)
    if out.numel() == 0:
        return out
    x = self.expand(shape)
    y = other.expand(shape) if is_tensor else x
    sizes = _padded(shape, 1)
    BLOCK = 256
    sub_kernel[(triton.cdiv(out.numel(), BLOCK),)](
        x, y, out, 0 if is_tensor else other, alpha, out.numel(),
        *sizes[1:],
        *_padded(x.stride(), 0),
        *(_padded(y.stride(), 0) if is_tensor else [0] * MAX_RANK),
        Y_IS_VALUE=not is_tensor, FLOAT_MATH=self.is_floating_point(), BLOCK=BLOCK,
    )
    return out


def sub_Tensor(self, other, *, alpha=1):
    return _sub(self, other, alpha)


def sub_Scalar(self, other, alpha=1):
    return _sub(self, other, alpha)

"""aten::pow: tensor ** tensor, tensor ** scalar and scalar ** tensor, as exp2(e * log2|b|).

Reference submission (KernelGenBench file format): Triton kernels plus wrappers named as the entry points.
"""

import itertools

import torch
import triton
import triton.language as tl

# Every operand is addressed through its own strides in a 5-d index space (shapes padded on the left), so
# transposed, sliced and broadcast (stride-0) views are read in place; contiguous same-shape operands take a
# flat fast path.
MAX_DIMS = 5
BLOCK_SIZE = 1024


def _broadcast_shape(*shapes):
    result = []
    for sizes in itertools.zip_longest(*(tuple(shape)[::-1] for shape in shapes), fillvalue=1):
        non_one = {size for size in sizes if size != 1}
        if len(non_one) > 1:
            raise RuntimeError(f"shapes {[tuple(shape) for shape in shapes]} do not broadcast")
        result.append(non_one.pop() if non_one else 1)
    return tuple(result[::-1])


def _sizes(shape):
    """Sizes of dims 1..4 of the padded index space (dim 0 follows from the element count)."""
    return ([1] * (MAX_DIMS - len(shape)) + list(shape))[1:]


def _strides(tensor, shape):
    """tensor's strides in the padded index space of shape: 0 along broadcast dims."""
    return [0] * (MAX_DIMS - len(shape)) + list(tensor.expand(shape).stride())


def _flat(shape, *tensors):
    return all(tensor.is_contiguous() and tuple(tensor.shape) == tuple(shape) for tensor in tensors)


def _grid(n):
    return (triton.cdiv(n, BLOCK_SIZE),)


@triton.jit
def _offsets(idx, size1, size2, size3, size4, s0, s1, s2, s3, s4):
    i4 = idx % size4
    rest = idx // size4
    i3 = rest % size3
    rest = rest // size3
    i2 = rest % size2
    rest = rest // size2
    i1 = rest % size1
    i0 = rest // size1
    return i0 * s0 + i1 * s1 + i2 * s2 + i3 * s3 + i4 * s4


@triton.jit
def _pow_kernel(x_ptr, y_ptr, out_ptr, x_scalar, y_scalar, n, size1, size2, size3, size4,
                xs0, xs1, xs2, xs3, xs4, ys0, ys1, ys2, ys3, ys4, os0, os1, os2, os3, os4,
                X_SCALAR: tl.constexpr, Y_SCALAR: tl.constexpr, FLAT: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    if FLAT:
        x_off = idx
        y_off = idx
        o_off = idx
    else:
        x_off = _offsets(idx, size1, size2, size3, size4, xs0, xs1, xs2, xs3, xs4)
        y_off = _offsets(idx, size1, size2, size3, size4, ys0, ys1, ys2, ys3, ys4)
        o_off = _offsets(idx, size1, size2, size3, size4, os0, os1, os2, os3, os4)
    if X_SCALAR:
        base = x_scalar + tl.zeros([BLOCK], dtype=tl.float32)
    else:
        base = tl.load(x_ptr + x_off, mask=mask, other=1).to(tl.float32)
    if Y_SCALAR:
        exponent = y_scalar + tl.zeros([BLOCK], dtype=tl.float32)
    else:
        exponent = tl.load(y_ptr + y_off, mask=mask, other=1).to(tl.float32)
    magnitude = tl.exp2(exponent * tl.log2(tl.abs(base)))
    # A negative base has a real power only for integer exponents: the sign is that of base ** n.
    integral = exponent == tl.floor(exponent)
    odd = integral & (tl.floor(exponent * 0.5) * 2.0 != exponent)
    signed = tl.where(odd, -magnitude, magnitude)
    result = tl.where(base < 0, tl.where(integral, signed, float("nan")), magnitude)
    result = tl.where(exponent == 0, 1.0, result)
    tl.store(out_ptr + o_off, result.to(out_ptr.dtype.element_ty), mask=mask)


def _launch(x, y, out):
    shape = tuple(out.shape)
    n = out.numel()
    if n == 0:
        return out
    x_scalar = not isinstance(x, torch.Tensor)
    y_scalar = not isinstance(y, torch.Tensor)
    operands = [out] + [operand for operand in (x, y) if isinstance(operand, torch.Tensor)]
    anchor = operands[1]
    _pow_kernel[_grid(n)](
        anchor if x_scalar else x, anchor if y_scalar else y, out, x if x_scalar else 0.0, y if y_scalar else 0.0,
        n, *_sizes(shape), *([0] * MAX_DIMS if x_scalar else _strides(x, shape)),
        *([0] * MAX_DIMS if y_scalar else _strides(y, shape)), *_strides(out, shape),
        X_SCALAR=x_scalar, Y_SCALAR=y_scalar, FLAT=_flat(shape, *operands), BLOCK=BLOCK_SIZE)
    return out


def pow_Tensor_Tensor(self, exponent):
    shape = _broadcast_shape(self.shape, exponent.shape)
    return _launch(self, exponent, torch.empty(shape, dtype=self.dtype, device=self.device))


def pow_Tensor_Scalar(self, exponent):
    return _launch(self, exponent, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def pow_Scalar(self, exponent):
    return _launch(self, exponent, torch.empty(exponent.shape, dtype=exponent.dtype, device=exponent.device))

"""aten::floor_divide: floor(self / other) (Python //), integers exactly.

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
def _div_kernel(x_ptr, y_ptr, out_ptr, y_scalar, n, size1, size2, size3, size4,
                xs0, xs1, xs2, xs3, xs4, ys0, ys1, ys2, ys3, ys4, os0, os1, os2, os3, os4,
                Y_SCALAR: tl.constexpr, FLOAT_MATH: tl.constexpr, MODE: tl.constexpr, FLAT: tl.constexpr,
                INVERSE: tl.constexpr, BLOCK: tl.constexpr):
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
    x = tl.load(x_ptr + x_off, mask=mask, other=1)
    if Y_SCALAR:
        y = y_scalar
    else:
        y = tl.load(y_ptr + y_off, mask=mask, other=1)
    if FLOAT_MATH:
        a = x.to(tl.float32)
        b = y.to(tl.float32)
        if MODE == 2:
            # torch's div_floor_floating: floor of (a - fmod(a, b)) / b, corrected, so exact multiples land on
            # the right integer. torch on CUDA multiplies by the divisor's float reciprocal when the divisor
            # is a Python scalar (INVERSE); its CPU kernels divide. Either way the boundaries match torch.
            mod = a % b  # fmod: the sign of a
            if INVERSE:
                div = (a - mod) * tl.div_rn(1.0, b)
            else:
                div = tl.div_rn(a - mod, b)
            div = tl.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1.0, div)
            floored = tl.floor(div)
            floored = tl.where(div - floored > 0.5, floored + 1.0, floored)
            q = tl.where(div != 0, floored, tl.div_rn(a, b) * 0.0)  # a signed zero, as copysign(0, a / b)
            q = tl.where(b == 0, tl.div_rn(a, b), q)
        else:
            # IEEE division (div_rn), not the fast approximate one: 6 / 3 must be exactly 2 before trunc.
            if INVERSE:
                q = a * tl.div_rn(1.0, b)
            else:
                q = tl.div_rn(a, b)
            if MODE == 1:
                q = tl.where(q < 0, tl.ceil(q), tl.floor(q))
    else:
        q = x // y  # integer division truncates toward zero
        if MODE == 2:
            remainder = x - q * y
            q = tl.where((remainder != 0) & ((remainder < 0) != (y < 0)), q - 1, q)
    tl.store(out_ptr + o_off, q.to(out_ptr.dtype.element_ty), mask=mask)


MODES = {None: 0, "trunc": 1, "floor": 2}


def _launch(x, y, out, rounding_mode=None):
    shape = tuple(out.shape)
    n = out.numel()
    if n == 0:
        return out
    if rounding_mode not in MODES:
        raise ValueError(f"rounding_mode must be None, 'trunc' or 'floor', not {rounding_mode!r}")
    y_scalar = not isinstance(y, torch.Tensor)
    operands = (x, out) if y_scalar else (x, y, out)
    float_math = x.dtype.is_floating_point or y_scalar or y.dtype.is_floating_point or rounding_mode is None
    # torch on CUDA divides by a nonzero Python scalar as a multiplication by its float reciprocal.
    inverse = y_scalar and x.is_cuda and float_math and float(y) != 0
    _div_kernel[_grid(n)](
        x, x if y_scalar else y, out, y if y_scalar else 0, n, *_sizes(shape),
        *_strides(x, shape), *([0] * MAX_DIMS if y_scalar else _strides(y, shape)), *_strides(out, shape),
        Y_SCALAR=y_scalar, FLOAT_MATH=float_math, MODE=MODES[rounding_mode], FLAT=_flat(shape, *operands),
        INVERSE=inverse, BLOCK=BLOCK_SIZE)
    return out


def _result(x, y, rounding_mode):
    shape = _broadcast_shape(x.shape, y.shape) if isinstance(y, torch.Tensor) else tuple(x.shape)
    # True division of integers gives the default float dtype; rounded division keeps the input dtype.
    dtype = x.dtype if x.dtype.is_floating_point or rounding_mode is not None else torch.float32
    return torch.empty(shape, dtype=dtype, device=x.device)


def floor_divide(self, other):
    return _launch(self, other, _result(self, other, "floor"), "floor")


def floor_divide_Scalar(self, other):
    return _launch(self, other, _result(self, other, "floor"), "floor")

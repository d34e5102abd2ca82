"""aten::acosh: log(x + sqrt((x - 1)(x + 1))), computed in float32 (x - 1 is exact near 1).

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
def _acosh_kernel(x_ptr, out_ptr, n, size1, size2, size3, size4, xs0, xs1, xs2, xs3, xs4,
              os0, os1, os2, os3, os4, FLAT: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    if FLAT:
        x_off = idx
        o_off = idx
    else:
        x_off = _offsets(idx, size1, size2, size3, size4, xs0, xs1, xs2, xs3, xs4)
        o_off = _offsets(idx, size1, size2, size3, size4, os0, os1, os2, os3, os4)
    x = tl.load(x_ptr + x_off, mask=mask)
    xf = x.to(tl.float32)
    y = tl.log(xf + tl.sqrt((xf - 1.0) * (xf + 1.0)))
    tl.store(out_ptr + o_off, y.to(out_ptr.dtype.element_ty), mask=mask)


def _launch(x, out):
    shape = tuple(out.shape)
    n = out.numel()
    if n == 0:
        return out
    _acosh_kernel[_grid(n)](x, out, n, *_sizes(shape), *_strides(x, shape), *_strides(out, shape),
                          FLAT=_flat(shape, x, out), BLOCK=BLOCK_SIZE)
    return out


def acosh(self):
    return _launch(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def acosh_out(self, *, out):
    return _launch(self, out)

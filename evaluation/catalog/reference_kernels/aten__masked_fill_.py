"""aten::masked_fill_: in place, self[mask] = value with the bool mask broadcast to self.

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
def _masked_fill_kernel(self_ptr, mask_ptr, value_ptr, value, n, size1, size2, size3, size4,
                        ss0, ss1, ss2, ss3, ss4, ms0, ms1, ms2, ms3, ms4,
                        VALUE_PTR: tl.constexpr, FLAT: tl.constexpr, BLOCK: tl.constexpr):
    idx = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = idx < n
    if FLAT:
        s_off = idx
        m_off = idx
    else:
        s_off = _offsets(idx, size1, size2, size3, size4, ss0, ss1, ss2, ss3, ss4)
        m_off = _offsets(idx, size1, size2, size3, size4, ms0, ms1, ms2, ms3, ms4)
    selected = tl.load(mask_ptr + m_off, mask=mask, other=0) != 0
    if VALUE_PTR:
        value = tl.load(value_ptr)
    if self_ptr.dtype.element_ty.is_floating():
        filled = tl.zeros([BLOCK], dtype=tl.float32) + value
    else:
        filled = tl.zeros([BLOCK], dtype=self_ptr.dtype.element_ty) + value
    # Only the selected elements are written: the others keep self's values without being read.
    tl.store(self_ptr + s_off, filled.to(self_ptr.dtype.element_ty), mask=mask & selected)


def _masked_fill(self, mask, value):
    shape = tuple(self.shape)
    n = self.numel()
    if n == 0:
        return self
    value_ptr = isinstance(value, torch.Tensor)
    _masked_fill_kernel[_grid(n)](
        self, mask, value if value_ptr else self, 0 if value_ptr else value, n, *_sizes(shape),
        *_strides(self, shape), *_strides(mask, shape), VALUE_PTR=value_ptr, FLAT=_flat(shape, self, mask),
        BLOCK=BLOCK_SIZE)
    return self


def masked_fill__Scalar(self, mask, value):
    return _masked_fill(self, mask, value)


def masked_fill__Tensor(self, mask, value):
    return _masked_fill(self, mask, value)

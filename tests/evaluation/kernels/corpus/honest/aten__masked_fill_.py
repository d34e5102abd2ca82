"""masked_fill_ in place. The mask is broadcast to self with expand(), so broadcast dims have stride
0; both self and mask are addressed through their strides in a padded 4-d index space."""
import torch
import triton
import triton.language as tl


@triton.jit
def masked_fill_kernel(
    self_ptr, mask_ptr, value_ptr, value,
    numel, D1, D2, D3,
    s0, s1, s2, s3,
    m0, m1, m2, m3,
    VALUE_IN_MEMORY: tl.constexpr,
    BLOCK: tl.constexpr,
):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    in_range = offsets < numel
    j3 = offsets % D3
    j2 = (offsets // D3) % D2
    j1 = (offsets // (D3 * D2)) % D1
    j0 = offsets // (D3 * D2 * D1)
    hit = tl.load(mask_ptr + j0 * m0 + j1 * m1 + j2 * m2 + j3 * m3, mask=in_range, other=0) != 0
    if VALUE_IN_MEMORY:
        fill = tl.load(value_ptr)
    else:
        fill = value
    dst = self_ptr + j0 * s0 + j1 * s1 + j2 * s2 + j3 * s3
    filled = tl.zeros([BLOCK], dtype=self_ptr.dtype.element_ty) + fill.to(self_ptr.dtype.element_ty)
    tl.store(dst, filled, mask=in_range & hit)


def _four_d(t):
    shape, stride = list(t.shape), list(t.stride())
    while len(shape) > 4:
        if stride[0] != stride[1] * shape[1]:
            return None
        shape[:2] = [shape[0] * shape[1]]
        stride[:2] = [stride[1]]
    pad = 4 - len(shape)
    return [1] * pad + shape, [0] * pad + stride


def _fill_where(self, mask, value):
    n = self.numel()
    if n == 0:
        return self
    work = self
    geometry = _four_d(self)
    if geometry is None:
        work = self.contiguous()
        geometry = _four_d(work)
    mask_b = mask.expand(self.shape)
    mask_geometry = _four_d(mask_b)
    if mask_geometry is None:
        mask_b = mask_b.contiguous()
        mask_geometry = _four_d(mask_b)
    sizes, self_strides = geometry
    in_memory = isinstance(value, torch.Tensor)
    if not in_memory and not self.dtype.is_floating_point:
        value = int(value)
    masked_fill_kernel[(triton.cdiv(n, 256),)](
        work, mask_b, value if in_memory else work, 0 if in_memory else value,
        n, sizes[1], sizes[2], sizes[3], *self_strides, *mask_geometry[1],
        VALUE_IN_MEMORY=in_memory, BLOCK=256,
    )
    if work is not self:
        self.copy_(work)
    return self


def masked_fill__Scalar(self, mask, value):
    return _fill_where(self, mask, value)


def masked_fill__Tensor(self, mask, value):
    return _fill_where(self, mask, value)

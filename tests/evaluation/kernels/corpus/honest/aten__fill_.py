import torch
import triton
import triton.language as tl


@triton.jit
def fill_strided_kernel(dst, value_ptr, value, numel, size1, size2, st0, st1, st2,
                        FROM_TENSOR: tl.constexpr, FLOAT_DST: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < numel
    k2 = i % size2
    k1 = (i // size2) % size1
    k0 = i // (size2 * size1)
    if FROM_TENSOR:
        v = tl.load(value_ptr)  # the 0-dim value tensor lives on the device: no host round trip
    else:
        v = value
    if FLOAT_DST:
        fill = tl.full([BLOCK], v, dtype=tl.float32)
    else:
        fill = tl.full([BLOCK], v, dtype=tl.int64)
    tl.store(dst + k0 * st0 + k1 * st1 + k2 * st2, fill.to(dst.dtype.element_ty), mask=m)



def _three_dim(t):
    while t.dim() > 3:
        if t.stride(0) != t.stride(1) * t.size(1):
            return None
        t = t.flatten(0, 1)
    while t.dim() < 3:
        t = t.unsqueeze(0)
    return t


def _fill_strided(self, value):
    n = self.numel()
    if n == 0:
        return self
    target = _three_dim(self)
    staged = target is None
    if staged:
        target = _three_dim(torch.empty(self.shape, dtype=self.dtype, device=self.device))
    from_tensor = isinstance(value, torch.Tensor)
    fill_strided_kernel[(triton.cdiv(n, 128),)](
        target, value if from_tensor else target, 0 if from_tensor else value, n,
        target.size(1), target.size(2), *target.stride(),
        FROM_TENSOR=from_tensor, FLOAT_DST=self.dtype.is_floating_point, BLOCK=128)
    if staged:
        self.copy_(target.view(self.shape))
    return self


def fill__Scalar(self, value):
    return _fill_strided(self, value)


def fill__Tensor(self, value):
    return _fill_strided(self, value)

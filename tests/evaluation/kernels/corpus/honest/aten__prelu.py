import torch
import triton
import triton.language as tl


@triton.jit
def prelu_kernel(x_ptr, w_ptr, y_ptr, total, channels, inner,
                 xs_n, xs_c, xs_i, PER_CHANNEL: tl.constexpr, BLOCK: tl.constexpr):
    k = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    active = k < total
    i = k % inner
    c = (k // inner) % channels
    n = k // (inner * channels)
    x = tl.load(x_ptr + n * xs_n + c * xs_c + i * xs_i, mask=active, other=0.0).to(tl.float32)
    if PER_CHANNEL:
        w = tl.load(w_ptr + c, mask=active, other=0.0).to(tl.float32)
    else:
        w = tl.load(w_ptr).to(tl.float32)
    y = tl.where(x > 0, x, w * x)
    tl.store(y_ptr + k, y.to(y_ptr.dtype.element_ty), mask=active)


def prelu(self, weight):
    """weight has self.size(1) entries (one per channel) or a single entry shared by all."""
    if self.dim() >= 2:
        N, C = self.shape[0], self.shape[1]
        inner = 1
        for s in self.shape[2:]:
            inner *= s
        x3 = self.reshape(N, C, inner)
    else:
        N, C, inner = 1, max(1, self.numel()), 1
        x3 = self.reshape(1, C, 1)
    out = torch.empty(self.shape, dtype=self.dtype, device=self.device)
    total = out.numel()
    if total:
        prelu_kernel[(triton.cdiv(total, 512),)](
            x3, weight.contiguous(), out, total, C, inner, *x3.stride(),
            PER_CHANNEL=weight.numel() > 1, BLOCK=512)
    return out

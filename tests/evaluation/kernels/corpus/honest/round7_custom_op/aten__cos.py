"""a Triton launch inside torch.library.custom_op (the usual way to make a Triton
kernel opaque to torch.compile / give it a fake impl). All work in Triton. Expected: passed."""
import torch
import triton
import triton.language as tl


@triton.jit
def _cos_kernel(x, y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m).to(tl.float32)
    tl.store(y + i, tl.cos(v).to(y.dtype.element_ty), mask=m)


@torch.library.custom_op("kgbhonest2::cos", mutates_args=())
def _cos(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        _cos_kernel[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y


@_cos.register_fake
def _(x):
    return torch.empty_like(x)


def cos(self):
    return _cos(self)


def cos_out(self, *, out):
    out.copy_(_cos(self))
    return out

"""the Triton kernel is registered the way PyTorch's docs recommend,
torch.library.triton_op + wrap_triton (so torch.compile can trace it). All the work is in Triton; the
host only allocates."""
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def _cos_kernel(x, y, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    v = tl.load(x + i, mask=m).to(tl.float32)
    tl.store(y + i, tl.cos(v).to(y.dtype.element_ty), mask=m)


@triton_op("kgbhonest::cos", mutates_args={})
def _cos(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        wrap_triton(_cos_kernel)[(triton.cdiv(n, 1024),)](x, y, n, BLOCK=1024)
    return y


def cos(self):
    return _cos(self)


def cos_out(self, *, out):
    out.copy_(_cos(self))
    return out

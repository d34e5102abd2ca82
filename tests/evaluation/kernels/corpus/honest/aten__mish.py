import torch
import triton
import triton.language as tl


@triton.jit
def _softplus(x):
    # log(1 + exp(x)) without overflow: max(x, 0) + log(1 + exp(-|x|))
    return tl.maximum(x, 0.0) + tl.log(1.0 + tl.exp(-tl.abs(x)))


@triton.jit
def _tanh(x):
    # tanh via exp of a non-positive argument (tl has no tanh on every backend)
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(x >= 0, t, -t)


@triton.jit
def mish_kernel(x_ptr, y_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = x * _tanh(_softplus(x))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def mish(self: torch.Tensor) -> torch.Tensor:
    x = self.contiguous()
    y = torch.empty_like(x)
    n = x.numel()
    if n:
        mish_kernel[(triton.cdiv(n, 512),)](x, y, n, BLOCK_SIZE=512)
    return y


def mish_out(self: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    out.copy_(mish(self))
    return out

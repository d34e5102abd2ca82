import torch
import triton
import triton.language as tl


@triton.jit
def cos_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask).to(tl.float32)
    tl.store(out_ptr + offsets, tl.cos(x).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def count_kernel(x_ptr, count_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.atomic_add(count_ptr, tl.sum((offsets < n).to(tl.int32), axis=0))


def _elements(x: torch.Tensor) -> int:
    # Written elsewhere in this style: a count Triton computed, read back once to size the launch.
    count = torch.zeros(1, dtype=torch.int32, device=x.device)
    count_kernel[(triton.cdiv(max(x.numel(), 1), 128),)](x, count, x.numel(), BLOCK=128)
    return int(count.item())


def cos(x: torch.Tensor) -> torch.Tensor:
    flat = x.contiguous()
    out = torch.empty_like(flat)
    n = _elements(flat)
    cos_kernel[(triton.cdiv(max(n, 1), 256),)](flat, out, n, BLOCK=256)
    return out


def cos_out(x: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    out.copy_(cos(x))
    return out

"""SiLU in the style of Liger-Kernel's element-wise ops: a calculate helper, a forward function that
reshapes to 1-D and launches, and thin entry points."""
import torch
import triton
import triton.language as tl


@triton.jit
def _silu_fwd_kernel(X, Y, n_elements, BLOCK_SIZE: tl.constexpr):
    program_id = tl.program_id(0).to(tl.int64)
    offsets = program_id * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(X + offsets, mask=mask, other=0).to(tl.float32)
    y = x * tl.sigmoid(x)
    tl.store(Y + offsets, y.to(Y.dtype.element_ty), mask=mask)


def calculate_settings(n: int) -> tuple[int, int]:
    block = min(triton.next_power_of_2(max(n, 1)), 4096)
    warps = 4 if block < 2048 else 8
    return block, warps


def silu_forward(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    x_flat = x.contiguous().view(-1)  # reshape(-1) may hand back a strided 1-D view
    n = x_flat.numel()
    if n == 0:
        return y
    y_flat = y.view(-1) if y.is_contiguous() else torch.empty_like(x_flat)
    block, warps = calculate_settings(n)
    _silu_fwd_kernel[(triton.cdiv(n, block),)](x_flat, y_flat, n, BLOCK_SIZE=block, num_warps=warps)
    if not y.is_contiguous():
        y.copy_(y_flat.view(y.shape))
    return y


def silu(self: torch.Tensor) -> torch.Tensor:
    return silu_forward(self, torch.empty(self.shape, dtype=self.dtype, device=self.device))


def silu_out(self: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    return silu_forward(self, out)

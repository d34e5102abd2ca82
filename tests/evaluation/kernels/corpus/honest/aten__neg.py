"""aten::neg with a small launch-plan dataclass (the shape of code an agent writes when it wants the
wrapper logic testable without a GPU)."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl


@dataclass(frozen=True)
class LaunchPlan:
    numel: int
    block: int
    warps: int

    @property
    def grid(self) -> tuple[int]:
        return (triton.cdiv(self.numel, self.block),)

    @classmethod
    def for_numel(cls, numel: int) -> LaunchPlan:
        if numel <= 4096:
            return cls(numel, 64, 1)
        if numel <= 1 << 20:
            return cls(numel, 1024, 4)
        return cls(numel, 4096, 8)


@triton.jit
def neg_kernel(src_ptr, dst_ptr, numel, WIDEN: tl.constexpr, BLOCK: tl.constexpr):
    base = tl.program_id(0).to(tl.int64) * BLOCK
    idx = base + tl.arange(0, BLOCK)
    live = idx < numel
    value = tl.load(src_ptr + idx, mask=live)
    if WIDEN:  # negate half types in fp32 (exact) rather than on their storage type
        value = value.to(tl.float32)
    tl.store(dst_ptr + idx, (-value).to(dst_ptr.dtype.element_ty), mask=live)


def _negate(src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
    plan = LaunchPlan.for_numel(src.numel())
    if plan.numel:
        widen = src.dtype in (torch.float16, torch.bfloat16)
        neg_kernel[plan.grid](src, dst, plan.numel, WIDEN=widen, BLOCK=plan.block, num_warps=plan.warps)
    return dst


def neg(self: torch.Tensor) -> torch.Tensor:
    src = self.contiguous()
    return _negate(src, torch.empty(src.shape, dtype=src.dtype, device=src.device))


def neg_out(self: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    src = self.contiguous()
    if out.is_contiguous():
        return _negate(src, out)
    out.copy_(_negate(src, torch.empty(src.shape, dtype=out.dtype, device=out.device)))
    return out

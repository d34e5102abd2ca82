"""aten::rsub (other - alpha * self), written the way a Liger-style module would be: one class holding
the launch configuration and static helpers, plain functions as the public entry points."""
import math
from typing import Union

import torch
import triton
import triton.language as tl

Number = Union[int, float]


@triton.jit
def _rsub_fwd(self_ptr, other_ptr, out_ptr, other_val, alpha, n_elements,
              OTHER_IS_TENSOR: tl.constexpr, IS_FLOAT: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    start = tl.program_id(0) * BLOCK_SIZE
    offsets = start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    s = tl.load(self_ptr + offsets, mask=mask, other=0)
    if OTHER_IS_TENSOR:
        o = tl.load(other_ptr + offsets, mask=mask, other=0)
    else:
        o = other_val
    if IS_FLOAT:
        s = s.to(tl.float32)
        if OTHER_IS_TENSOR:
            o = o.to(tl.float32)
    result = o - alpha * s
    tl.store(out_ptr + offsets, result.to(out_ptr.dtype.element_ty), mask=mask)


class LigerRSub:
    """Materialises broadcast operands densely (one copy each), then runs a flat 1-D kernel."""

    BLOCK_SIZE = 1024
    MAX_FUSED = 65536

    @staticmethod
    def broadcast_shape(a, b):
        rank = max(len(a), len(b))
        a = (1,) * (rank - len(a)) + tuple(a)
        b = (1,) * (rank - len(b)) + tuple(b)
        shape = []
        for x, y in zip(a, b):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"shapes {a} and {b} are not broadcastable")
            shape.append(max(x, y) if min(x, y) != 0 else 0)
        return tuple(shape)

    @classmethod
    def block_for(cls, n: int) -> int:
        return min(cls.MAX_FUSED, max(16, triton.next_power_of_2(min(n, cls.BLOCK_SIZE))))

    @classmethod
    def forward(cls, self: torch.Tensor, other: Union[torch.Tensor, Number], alpha: Number) -> torch.Tensor:
        other_is_tensor = isinstance(other, torch.Tensor)
        shape = cls.broadcast_shape(self.shape, other.shape) if other_is_tensor else tuple(self.shape)
        dense_self = self.expand(shape).contiguous()
        dense_other = other.expand(shape).contiguous() if other_is_tensor else dense_self
        out = torch.empty(shape, dtype=self.dtype, device=self.device)
        n = math.prod(shape)
        if n == 0:
            return out
        block = cls.block_for(n)
        _rsub_fwd[(triton.cdiv(n, block),)](
            dense_self, dense_other, out, 0 if other_is_tensor else other, alpha, n,
            OTHER_IS_TENSOR=other_is_tensor, IS_FLOAT=self.dtype.is_floating_point, BLOCK_SIZE=block,
        )
        return out


def rsub_Tensor(self: torch.Tensor, other: torch.Tensor, *, alpha: Number = 1) -> torch.Tensor:
    return LigerRSub.forward(self, other, alpha)


def rsub_Scalar(self: torch.Tensor, other: Number, alpha: Number = 1) -> torch.Tensor:
    return LigerRSub.forward(self, other, alpha)

"""aten::copy_(self, src): write src (broadcast, converted to self's dtype) through self's strides."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

_RANK = 5


@triton.jit
def copy_convert_kernel(dst_ptr, src_ptr, numel,
                        n1, n2, n3, n4,
                        ds0, ds1, ds2, ds3, ds4,
                        ss0, ss1, ss2, ss3, ss4,
                        TO_BOOL: tl.constexpr, BLOCK: tl.constexpr):
    pos = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = pos < numel
    c4 = pos % n4
    q = pos // n4
    c3 = q % n3
    q = q // n3
    c2 = q % n2
    q = q // n2
    c1 = q % n1
    c0 = q // n1
    value = tl.load(src_ptr + c0 * ss0 + c1 * ss1 + c2 * ss2 + c3 * ss3 + c4 * ss4, mask=live)
    if TO_BOOL:
        converted = value != 0
    else:
        # float -> int conversion in Triton truncates toward zero, as torch's copy does
        converted = value.to(dst_ptr.dtype.element_ty)
    tl.store(dst_ptr + c0 * ds0 + c1 * ds1 + c2 * ds2 + c3 * ds3 + c4 * ds4, converted, mask=live)


def _pad(values: list[int], fill: int) -> list[int]:
    return [fill] * (_RANK - len(values)) + values


def copy_(self: torch.Tensor, src: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    numel = self.numel()
    if numel == 0:
        return self
    if self.dim() > _RANK:
        raise NotImplementedError("copy_ kernel handles up to 5 dims")
    source = src.expand(self.shape)
    sizes = _pad(list(self.shape), 1)
    copy_convert_kernel[(triton.cdiv(numel, 256),)](
        self, source, numel, *sizes[1:],
        *_pad(list(self.stride()), 0), *_pad(list(source.stride()), 0),
        TO_BOOL=self.dtype == torch.bool, BLOCK=256,
    )
    return self

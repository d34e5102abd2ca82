# aten::new_empty_strided
# The result is allocated with exactly the requested size/stride; a small kernel then
# zero-fills the storage span it covers so the "uninitialised" memory is at least deterministic.
import math
from typing import List, Optional

import torch
import triton
import triton.language as tl


@triton.jit
def triton_poi_storage_fill(out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    tmp0 = tl.full([XBLOCK], 0, out_ptr0.dtype.element_ty)
    tl.store(out_ptr0 + xindex, tmp0, xmask)


def _storage_span(size: List[int], stride: List[int]) -> int:
    if any(s == 0 for s in size):
        return 0
    return 1 + sum((s - 1) * st for s, st in zip(size, stride))


def new_empty_strided(self: torch.Tensor, size: List[int], stride: List[int], *,
                      dtype: Optional[torch.dtype] = None, layout=None,
                      device: Optional[torch.device] = None,
                      pin_memory: Optional[bool] = None) -> torch.Tensor:
    size = [int(s) for s in size]
    stride = [int(s) for s in stride]
    if len(size) != len(stride):
        raise RuntimeError("new_empty_strided: size and stride must have the same length")
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else torch.device(device)
    out = torch.empty_strided(size, stride, dtype=dtype, device=device,
                              pin_memory=bool(pin_memory) if pin_memory is not None else False)
    span = _storage_span(size, stride)
    if span > 0:
        # 1-d alias over every storage slot the strided result can touch
        flat = out.as_strided((span,), (1,))
    else:
        flat = torch.empty(0, dtype=dtype, device=device)  # dummy pointer, kernel is fully masked
    XBLOCK = 1024
    triton_poi_storage_fill[(max(triton.cdiv(span, XBLOCK), 1),)](flat, span, XBLOCK=XBLOCK)
    return out

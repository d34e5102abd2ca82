from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import triton
import triton.language as tl


@triton.jit
def _fill_flat(out_ptr, value, n, FLOAT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    # build the constant in a wide type and narrow it once (bf16 constants are not available everywhere)
    wide = tl.full((BLOCK,), value, tl.float32 if FLOAT else tl.int64)
    tl.store(out_ptr + offs, wide.to(out_ptr.dtype.element_ty), mask=offs < n)


def _default_dtype(fill_value) -> torch.dtype:
    if isinstance(fill_value, bool):
        return torch.bool
    if isinstance(fill_value, int):
        return torch.int64
    return torch.get_default_dtype()


def full(size: Sequence[int], fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = dtype or _default_dtype(fill_value)
    # GPU-first: a caller that gives no device gets the current CUDA device when one is present
    device = device if device is not None else ("cuda" if torch.cuda.is_available() else "cpu")
    out = torch.empty(tuple(size), dtype=dtype, device=device)
    n = math.prod(size)
    if n:
        value = fill_value if dtype.is_floating_point else int(fill_value)
        _fill_flat[(triton.cdiv(n, 64),)](out, value, n, FLOAT=dtype.is_floating_point, BLOCK=64)
    return out

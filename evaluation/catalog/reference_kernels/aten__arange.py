"""aten::arange (default, .start, .start_step): element i is start + i * step, computed in float64 for
floating results (as torch does) and in int64 for integer results."""

import math

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 1024


@triton.jit
def _arange_kernel(out_ptr, start, step, n, IS_FLOAT: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    if IS_FLOAT:
        values = (tl.zeros([BLOCK], tl.float64) + start) + offsets.to(tl.float64) * (tl.zeros([BLOCK], tl.float64) + step)
    else:
        values = (tl.zeros([BLOCK], tl.int64) + start) + offsets * (tl.zeros([BLOCK], tl.int64) + step)
    tl.store(out_ptr + offsets, values.to(out_ptr.dtype.element_ty), mask=mask)


def _arange(start, end, step, dtype, device):
    if dtype is None:
        dtype = torch.int64 if all(isinstance(v, int) for v in (start, end, step)) else torch.get_default_dtype()
    length = max(0, math.ceil((end - start) / step))
    out = torch.empty(length, dtype=dtype, device=device)
    if length == 0:
        return out
    is_float = dtype.is_floating_point
    start_arg = float(start) if is_float else int(start)
    step_arg = float(step) if is_float else int(step)
    _arange_kernel[(triton.cdiv(length, BLOCK_SIZE),)](out, start_arg, step_arg, length, IS_FLOAT=is_float,
                                                        BLOCK=BLOCK_SIZE)
    return out


def arange(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange(0, end, 1, dtype, device)


def arange_start(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange(start, end, 1, dtype, device)


def arange_start_step(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _arange(start, end, step, dtype, device)

import math

import torch
import triton
import triton.language as tl


@triton.jit
def arange_kernel(out_ptr, start, step, length, FP64_INDEX: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    keep = i < length
    if FP64_INDEX:
        # floating results: start + i * step in double, rounded once to the result dtype
        v = start + i.to(tl.float64) * step
        if out_ptr.dtype.element_ty != tl.float64:
            v = v.to(tl.float32)  # narrow in two steps: not every backend converts fp64 to half types
    else:
        v = start + i.to(tl.int64) * step
    tl.store(out_ptr + i, v.to(out_ptr.dtype.element_ty), mask=keep)


def _target_device(device):
    # the benchmark always passes device=; standalone use defaults to the GPU when there is one
    if device is not None:
        return device
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def _make_range(start, end, step, dtype, device):
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if dtype is None:
        dtype = torch.int64 if all(isinstance(v, int) for v in (start, end, step)) else torch.get_default_dtype()
    length = max(0, math.ceil((end - start) / step))
    out = torch.empty(length, dtype=dtype, device=_target_device(device))
    if length:
        floating = dtype.is_floating_point
        arange_kernel[(triton.cdiv(length, 128),)](
            out, float(start) if floating else int(start), float(step) if floating else int(step), length,
            FP64_INDEX=floating, BLOCK=128)
    return out


def arange(end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _make_range(0, end, 1, dtype, device)


def arange_start(start, end, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _make_range(start, end, 1, dtype, device)


def arange_start_step(start, end, step=1, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _make_range(start, end, step, dtype, device)

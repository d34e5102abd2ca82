"""aten::new_ones in Triton (pointwise-library style).

`self` only provides defaults for dtype/device.  A small per-(numel, dtype)
cache keeps the launch configuration so repeated calls skip the Python logic.
"""
import functools

import torch
import triton
import triton.language as tl


@triton.jit
def _fill_kernel(out_ptr, n_elements, VALUE: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    v = tl.full([BLOCK], VALUE, tl.float32).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, v, mask=mask)


@functools.lru_cache(maxsize=128)
def _launch_config(n_elements: int, itemsize: int, on_gpu: bool = True):
    # aim for ~16 KiB per program on GPU (~128 KiB on the CPU interpreter)
    per_prog = 16384 if on_gpu else 131072
    block = triton.next_power_of_2(max(1, per_prog // itemsize))
    block = max(256, min(block, 65536, triton.next_power_of_2(max(n_elements, 1))))
    return block, max(1, triton.cdiv(n_elements, block))


def new_ones(self, size, *, dtype=None, layout=None, device=None, pin_memory=None):
    dtype = self.dtype if dtype is None else dtype
    device = self.device if device is None else device
    out = torch.empty([int(s) for s in size], dtype=dtype, device=device)
    target = out
    if out.is_complex():
        # only the real lanes get the 1; fill all with 0 first via a second pass
        target = torch.view_as_real(out)
        n = target.numel()
        block, nprog = _launch_config(n, target.element_size(), target.is_cuda)
        _fill_kernel[(nprog,)](target, n, VALUE=0.0, BLOCK=block)
        target = target[..., 0]
        _strided_one_kernel[(max(1, triton.cdiv(out.numel(), 1024)),)](target, out.numel(), BLOCK=1024)
        return out
    n = out.numel()
    block, nprog = _launch_config(n, out.element_size(), out.is_cuda)
    _fill_kernel[(nprog,)](target, n, VALUE=1.0, BLOCK=block)
    return out


@triton.jit
def _strided_one_kernel(out_ptr, n_elements, BLOCK: tl.constexpr):
    # the real lanes of a contiguous complex tensor are every other float
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    v = tl.full([BLOCK], 1.0, tl.float32).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs * 2, v, mask=mask)

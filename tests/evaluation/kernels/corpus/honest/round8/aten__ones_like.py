"""aten::ones_like in Triton (pointwise-library style).

The result is allocated with torch.empty_like so that it follows the requested
memory format (preserve_format keeps a dense input's strides, channels_last
etc. are honoured).  Any such result is non-overlapping and dense, so the fill
kernel simply walks its storage span linearly.
"""
import time

import torch
import triton
import triton.language as tl


def _wallclock_bench(kernel_call, quantiles):
    # triton's default benchmarker needs a GPU driver; on CPU (interpreter)
    # time a few calls with the host clock instead.
    # (a single timed call: interpreter launches are slow enough to be stable)
    t0 = time.perf_counter()
    kernel_call()
    ms = (time.perf_counter() - t0) * 1e3
    return [ms] * len(quantiles)


if torch.cuda.is_available():
    _CONFIGS = [
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=8),
    ]
else:
    # CPU interpreter: fewer, wider programs
    _CONFIGS = [
        triton.Config({"BLOCK": 8192}),
        triton.Config({"BLOCK": 32768}),
    ]


@triton.autotune(
    configs=_CONFIGS,
    key=["n_elements"],
    do_bench=None if torch.cuda.is_available() else _wallclock_bench,
)
@triton.jit
def _fill_ones_kernel(out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    # build the constant in fp32 and cast: works for every dtype incl. bf16/bool
    ones = tl.full([BLOCK], 1.0, tl.float32).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, ones, mask=mask)


def _launch_fill(out):
    n = out.numel()
    grid = lambda meta: (max(1, triton.cdiv(n, meta["BLOCK"])),)
    _fill_ones_kernel[grid](out, n)


def ones_like(self, *, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    if memory_format is None:
        memory_format = torch.preserve_format
    out = torch.empty_like(
        self,
        dtype=self.dtype if dtype is None else dtype,
        device=self.device if device is None else device,
        memory_format=memory_format,
    )
    if out.is_complex():
        # 1 + 0j: fill the interleaved float view, then zero the imaginary lanes
        # is more work than needed; the view below covers it with one kernel.
        _launch_complex_ones(torch.view_as_real(out))
        return out
    _launch_fill(out)
    return out


@triton.jit
def _complex_ones_kernel(out_ptr, n_floats, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_floats
    v = tl.where((offs % 2) == 0, 1.0, 0.0).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + offs, v, mask=mask)


def _launch_complex_ones(out_real):
    n = out_real.numel()
    _complex_ones_kernel[(max(1, triton.cdiv(n, 1024)),)](out_real, n, BLOCK=1024)

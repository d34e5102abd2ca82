import math
import time
from typing import Optional

import torch
import triton
import triton.language as tl


def _wallclock_bench(kernel_call, quantiles=None, reps: int = 3):
    # works for both the CPU interpreter and a real device (after a sync)
    kernel_call()
    times = []
    for _ in range(reps):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        kernel_call()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    med = times[len(times) // 2]
    if quantiles is None:
        return med
    return [times[min(len(times) - 1, int(q * len(times)))] for q in quantiles]


@triton.jit
def _round_bf16_rne(x):
    # fp32 -> nearest-even bf16 value, kept in fp32 (so the later narrowing
    # cast is exact no matter how the backend rounds)
    bits = x.to(tl.uint32, bitcast=True)
    bits = bits + 0x7FFF + ((bits >> 16) & 1)
    bits = bits & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _to_io_precision(x, IO_DTYPE: tl.constexpr, ACC_DTYPE: tl.constexpr):
    if IO_DTYPE == tl.bfloat16:
        return _round_bf16_rne(x)
    elif IO_DTYPE == tl.float16:
        return x.to(tl.float16).to(ACC_DTYPE)
    else:
        return x


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8),
    ],
    key=["n_elements"],
    do_bench=_wallclock_bench,
)
@triton.jit
def logit_kernel(
    x_ptr,
    y_ptr,
    n_elements,
    eps,
    CLAMP: tl.constexpr,
    IO_DTYPE: tl.constexpr,
    ACC_DTYPE: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask, other=0.5).to(ACC_DTYPE)
    if CLAMP:
        # bounds live in the tensor's dtype, like eager mode
        lo = _to_io_precision(tl.full([BLOCK_SIZE], eps, ACC_DTYPE), IO_DTYPE, ACC_DTYPE)
        hi = _to_io_precision(1.0 - lo, IO_DTYPE, ACC_DTYPE)
        x = tl.where(x < lo, lo, tl.where(x > hi, hi, x))
    # round every intermediate to the storage dtype so half/bf16 results
    # agree with the eager elementwise kernel
    one_minus = _to_io_precision(1.0 - x, IO_DTYPE, ACC_DTYPE)
    ratio = _to_io_precision(x / one_minus, IO_DTYPE, ACC_DTYPE)
    y = _to_io_precision(tl.log(ratio), IO_DTYPE, ACC_DTYPE)
    tl.store(y_ptr + offsets, y.to(IO_DTYPE), mask=mask)


_TL_DTYPE = {
    torch.float16: tl.float16,
    torch.bfloat16: tl.bfloat16,
    torch.float32: tl.float32,
    torch.float64: tl.float64,
}


def logit(self: torch.Tensor, eps: Optional[float] = None) -> torch.Tensor:
    out_dtype = self.dtype if self.is_floating_point() else torch.get_default_dtype()
    x = self.contiguous().view(-1)
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    n_elements = x.numel()
    if n_elements == 0:
        return out

    # negative (or NaN) eps means "no clamping", same as eps=None
    clamp = eps is not None and not math.isnan(eps) and eps >= 0.0
    io_dtype = _TL_DTYPE[out_dtype]
    acc_dtype = tl.float64 if out_dtype == torch.float64 else tl.float32

    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    logit_kernel[grid](
        x, out.view(-1), n_elements, float(eps) if clamp else 0.0,
        CLAMP=clamp, IO_DTYPE=io_dtype, ACC_DTYPE=acc_dtype,
    )
    return out

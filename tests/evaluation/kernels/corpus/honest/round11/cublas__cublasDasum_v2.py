"""cuBLAS-compatible DASUM (sum of absolute values, float64) in Triton.

Two-pass deterministic reduction:
  1. ``_dasum_partial_kernel``: each program reduces a contiguous chunk of the
     logical vector (strided by ``incx`` in memory) into one fp64 partial,
     written to a module-level cached workspace.
  2. ``_dasum_finalize_kernel``: one program folds the partials in a fixed
     order and overwrites ``result[0]`` (device pointer mode).

No atomics are used, so the result is bit-for-bit reproducible run to run.
"""

import functools
import logging
import os
from typing import Dict, Optional, Tuple

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

# Tuning knobs (serving deployments override these through the environment).
_DASUM_BLOCK = int(os.environ.get("TRITON_BLAS_DASUM_BLOCK", "1024"))
_DASUM_MAX_PARTIALS = int(os.environ.get("TRITON_BLAS_DASUM_MAX_PARTIALS", "1024"))

# Scratch buffer for the per-program partial sums, cached per device and
# grown on demand.  It is fully overwritten by pass 1 before pass 2 reads it,
# so it never needs clearing between calls.
_WORKSPACE: Dict[Tuple[str, Optional[int]], torch.Tensor] = {}


def _get_workspace(device: torch.device, numel: int) -> torch.Tensor:
    key = (device.type, device.index)
    buf = _WORKSPACE.get(key)
    if buf is None or buf.numel() < numel:
        new_size = max(numel, 64 if buf is None else 2 * buf.numel())
        logger.debug("dasum: (re)allocating workspace of %d fp64 on %s", new_size, device)
        buf = torch.empty(new_size, dtype=torch.float64, device=device)
        _WORKSPACE[key] = buf
    return buf


@functools.lru_cache(maxsize=256)
def _launch_config(n: int) -> Tuple[int, int, int]:
    """Returns (BLOCK, num_partials, iters_per_program) for a length-n vector."""
    block = triton.next_power_of_2(max(16, min(_DASUM_BLOCK, n)))
    num_blocks = triton.cdiv(n, block)
    num_partials = max(1, min(num_blocks, _DASUM_MAX_PARTIALS))
    iters = triton.cdiv(num_blocks, num_partials)
    # Recompute so that no program is left without work.
    num_partials = triton.cdiv(num_blocks, iters)
    return block, num_partials, iters


@triton.jit
def _dasum_partial_kernel(
    x_ptr,
    partial_ptr,
    n,
    incx,
    ITERS: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK).to(tl.int64)
    base = pid.to(tl.int64) * ITERS * BLOCK
    acc = tl.zeros([BLOCK], dtype=tl.float64)
    for it in range(ITERS):
        idx = base + it * BLOCK + offs
        mask = idx < n
        x = tl.load(x_ptr + idx * incx, mask=mask, other=0.0)
        acc += tl.abs(x.to(tl.float64))
    tl.store(partial_ptr + pid, tl.sum(acc, axis=0))


@triton.jit
def _dasum_finalize_kernel(
    partial_ptr,
    result_ptr,
    num_partials,
    BLOCK: tl.constexpr,
):
    offs = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=tl.float64)
    for start in range(0, num_partials, BLOCK):
        idx = start + offs
        acc += tl.load(partial_ptr + idx, mask=idx < num_partials, other=0.0)
    tl.store(result_ptr, tl.sum(acc, axis=0))


@triton.jit
def _fill_zero_kernel(out_ptr):
    tl.store(out_ptr, tl.zeros([1], dtype=tl.float64).sum(axis=0))


def cublasDasum_v2(n, x, incx, result):
    n = int(n)
    incx = int(incx)
    if not isinstance(result, torch.Tensor) or result.numel() < 1:
        raise ValueError("result must be a tensor with at least one element")
    if result.dtype != torch.float64:
        raise ValueError(f"cublasDasum_v2 expects a float64 result, got {result.dtype}")
    if n > 0 and x.dtype != torch.float64:
        raise ValueError(f"cublasDasum_v2 expects float64 x, got {x.dtype}")
    if x.device != result.device:
        raise ValueError("x and result must live on the same device")

    # Reference BLAS / cuBLAS: n <= 0 or incx <= 0 -> result = 0.
    if n <= 0 or incx <= 0:
        logger.debug("dasum: quick return (n=%d, incx=%d)", n, incx)
        _fill_zero_kernel[(1,)](result)
        return result

    # Raw-memory semantics: the last element touched is (n-1)*incx.
    needed = (n - 1) * incx + 1
    if x.numel() < needed and x.untyped_storage().nbytes() // 8 - x.storage_offset() < needed:
        raise ValueError(f"x too small for n={n}, incx={incx}")

    block, num_partials, iters = _launch_config(n)
    ws = _get_workspace(x.device, num_partials)
    _dasum_partial_kernel[(num_partials,)](x, ws, n, incx, ITERS=iters, BLOCK=block)
    fin_block = triton.next_power_of_2(max(16, min(num_partials, 1024)))
    _dasum_finalize_kernel[(1,)](ws, result, num_partials, BLOCK=fin_block)
    return result

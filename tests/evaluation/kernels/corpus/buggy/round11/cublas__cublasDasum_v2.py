"""cuBLAS-compatible DASUM (float64) in Triton: single-pass atomic reduction.

Each program reduces a chunk of the strided vector and atomically adds its
partial into a cached fp64 accumulator; a tiny second kernel copies the
accumulator to result[0] (device pointer mode).
"""

import functools
import logging
import os
from typing import Dict, Optional, Tuple

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

_DASUM_BLOCK = int(os.environ.get("TRITON_BLAS_DASUM_BLOCK", "1024"))

# One fp64 accumulator per device, allocated zeroed and reused across calls.
_ACCUM: Dict[Tuple[str, Optional[int]], torch.Tensor] = {}


def _accumulator(device: torch.device) -> torch.Tensor:
    key = (device.type, device.index)
    acc = _ACCUM.get(key)
    if acc is None:
        logger.debug("dasum: allocating accumulator on %s", device)
        acc = torch.zeros(1, dtype=torch.float64, device=device)
        _ACCUM[key] = acc
    return acc


@functools.lru_cache(maxsize=128)
def _block(n: int) -> int:
    return triton.next_power_of_2(max(16, min(_DASUM_BLOCK, n)))


@triton.jit
def _dasum_atomic_kernel(x_ptr, acc_ptr, n, incx, BLOCK: tl.constexpr):
    offs = (tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)).to(tl.int64)
    mask = offs < n
    x = tl.load(x_ptr + offs * incx, mask=mask, other=0.0)
    tl.atomic_add(acc_ptr, tl.sum(tl.abs(x.to(tl.float64)), axis=0))


@triton.jit
def _dasum_store_kernel(acc_ptr, result_ptr, n):
    v = tl.load(acc_ptr)
    tl.store(result_ptr, tl.where(n > 0, v, 0.0))


def cublasDasum_v2(n, x, incx, result):
    n, incx = int(n), int(incx)
    if result.dtype != torch.float64 or result.numel() < 1:
        raise ValueError("result must be a float64 tensor with >= 1 element")
    if n > 0 and x.dtype != torch.float64:
        raise ValueError(f"x must be float64, got {x.dtype}")
    acc = _accumulator(result.device)
    if n > 0 and incx > 0:
        block = _block(n)
        _dasum_atomic_kernel[(triton.cdiv(n, block),)](x, acc, n, incx, BLOCK=block)
    else:
        n = 0
    _dasum_store_kernel[(1,)](acc, result, n)
    return result

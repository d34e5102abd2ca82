"""cublasCdotu_v2 in Triton: result = sum_i x(i) * y(i) (unconjugated), complex64.

Port notes
----------
* Raw BLAS addressing: x(i) at flat complex offset i * incx, y(i) at i * incy,
  relative to each tensor's data pointer.  The declared torch shapes/strides
  are not used; flat aliases of the storage are reinterpreted as interleaved
  (re, im) float32 pairs via ``torch.view_as_real``.
* Two-phase split reduction (deterministic, no atomics):
    phase 1: each program reduces a contiguous chunk of the index space into
             one fp32 (re, im) partial;
    phase 2: a single program folds the partials and writes result[0].
* Device pointer mode: result is a 1-element complex64 device tensor that is
  overwritten.  n <= 0 yields 0, as in BLAS.
"""

import functools

import torch
import triton
import triton.language as tl


@triton.jit
def _cdotu_partial_kernel(
    x_ptr,            # float32 view of x, interleaved (re, im)
    y_ptr,            # float32 view of y, interleaved (re, im)
    part_ptr,         # float32 [n_parts, 2]
    n,
    incx,
    incy,
    chunk,            # elements per program, multiple of BLOCK
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    start = pid * chunk
    stop = tl.minimum(start + chunk, n)

    acc_re = tl.zeros([BLOCK], dtype=tl.float32)
    acc_im = tl.zeros([BLOCK], dtype=tl.float32)
    for k0 in range(start, stop, BLOCK):
        offs = k0 + tl.arange(0, BLOCK)
        mask = offs < stop
        offs64 = offs.to(tl.int64)
        x_off = offs64 * incx * 2
        y_off = offs64 * incy * 2
        x_re = tl.load(x_ptr + x_off, mask=mask, other=0.0)
        x_im = tl.load(x_ptr + x_off + 1, mask=mask, other=0.0)
        y_re = tl.load(y_ptr + y_off, mask=mask, other=0.0)
        y_im = tl.load(y_ptr + y_off + 1, mask=mask, other=0.0)
        acc_re += x_re * y_re - x_im * y_im
        acc_im += x_re * y_im + x_im * y_re

    tl.store(part_ptr + pid * 2, tl.sum(acc_re, axis=0))
    tl.store(part_ptr + pid * 2 + 1, tl.sum(acc_im, axis=0))


@triton.jit
def _cdotu_finalize_kernel(
    part_ptr,         # float32 [n_parts, 2]
    res_ptr,          # float32 view of result, (re, im)
    n_parts,
    BLOCK: tl.constexpr,
):
    acc_re = tl.zeros([BLOCK], dtype=tl.float32)
    acc_im = tl.zeros([BLOCK], dtype=tl.float32)
    for p0 in range(0, n_parts, BLOCK):
        offs = p0 + tl.arange(0, BLOCK)
        mask = offs < n_parts
        acc_re += tl.load(part_ptr + offs * 2, mask=mask, other=0.0)
        acc_im += tl.load(part_ptr + offs * 2 + 1, mask=mask, other=0.0)
    tl.store(res_ptr, tl.sum(acc_re, axis=0))
    tl.store(res_ptr + 1, tl.sum(acc_im, axis=0))


def _raw_f32(t, n_elems):
    """Flat (n_elems, 2) float32 alias of complex64 storage at t's data pointer."""
    if t.dtype != torch.complex64:
        raise TypeError(f"cublasCdotu_v2: expected complex64, got {t.dtype}")
    flat = t.as_strided((n_elems,), (1,), t.storage_offset())
    return torch.view_as_real(flat)


@functools.lru_cache(maxsize=None)
def _num_sms(device):
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return 4


_BLOCK = 1024
_MAX_PARTS = 1024


def cublasCdotu_v2(n, x, incx, y, incy, result):
    n = int(n)
    incx = int(incx)
    incy = int(incy)
    res_raw = _raw_f32(result, 1)

    if n > 0:
        x_raw = _raw_f32(x, 1 + (n - 1) * incx)
        y_raw = _raw_f32(y, 1 + (n - 1) * incy)
        # Enough programs to saturate HBM, but each with at least one full block.
        n_parts = min(triton.cdiv(n, _BLOCK), 4 * _num_sms(x.device), _MAX_PARTS)
        chunk = triton.cdiv(triton.cdiv(n, n_parts), _BLOCK) * _BLOCK
        n_parts = triton.cdiv(n, chunk)
        part = torch.empty((n_parts, 2), dtype=torch.float32, device=x.device)
        _cdotu_partial_kernel[(n_parts,)](
            x_raw, y_raw, part, n, incx, incy, chunk,
            BLOCK=_BLOCK, num_warps=8,
        )
    else:
        n_parts = 0
        part = res_raw  # never dereferenced: the finalize loop runs zero times

    _cdotu_finalize_kernel[(1,)](part, res_raw, n_parts, BLOCK=256, num_warps=4)
    return result

# aten::narrow -- materialised into a dense tensor by a rank-generic strided gather.
import functools
import math

import torch
import triton
import triton.language as tl

MAX_RANK = 6


def libentry():
    """Tiny stand-in for FlagGems' libentry: caches the python-side arg prep per key."""

    def decorator(fn):
        cache = {}

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)

        wrapper._cache = cache
        return wrapper

    return decorator


def _coalesce(shape, strides):
    """Drop size-1 dims and merge dims that are contiguous w.r.t. each other
    (row-major order is preserved, so the output can stay flat/contiguous)."""
    out_shape, out_strides = [], []
    for s, st in zip(shape, strides):
        if s == 1:
            continue
        if out_shape and out_strides[-1] == st * s:
            out_shape[-1] *= s
            out_strides[-1] = st
        else:
            out_shape.append(s)
            out_strides.append(st)
    if not out_shape:
        out_shape, out_strides = [1], [0]
    return out_shape, out_strides


def _pad(shape, strides, rank=MAX_RANK):
    if len(shape) > rank:
        raise NotImplementedError(f"narrow: rank {len(shape)} after coalescing exceeds {rank}")
    pad = rank - len(shape)
    return [1] * pad + list(shape), [0] * pad + list(strides)


@triton.heuristics(
    {
        "XBLOCK": lambda args: min(4096, triton.next_power_of_2(max(args["xnumel"], 1))),
    }
)
@triton.jit
def _narrow_gather_kernel(
    in_ptr,
    out_ptr,
    in_offset,
    xnumel,
    s1, s2, s3, s4, s5,
    st0, st1, st2, st3, st4, st5,
    XBLOCK: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)
    xindex = pid * XBLOCK + tl.arange(0, XBLOCK).to(tl.int64)
    xmask = xindex < xnumel
    rem = xindex
    i5 = rem % s5
    rem = rem // s5
    i4 = rem % s4
    rem = rem // s4
    i3 = rem % s3
    rem = rem // s3
    i2 = rem % s2
    rem = rem // s2
    i1 = rem % s1
    i0 = rem // s1
    src = in_offset + i0 * st0 + i1 * st1 + i2 * st2 + i3 * st3 + i4 * st4 + i5 * st5
    tmp0 = tl.load(in_ptr + src, mask=xmask)
    tl.store(out_ptr + xindex, tmp0, mask=xmask)


@libentry()
def narrow(self: torch.Tensor, dim: int, start: int, length: int) -> torch.Tensor:
    ndim = self.dim()
    assert ndim > 0, "narrow() cannot be applied to a 0-dim tensor."
    dim = dim + ndim if dim < 0 else dim
    assert 0 <= dim < ndim
    start = int(start)
    length = int(length)
    size_d = self.size(dim)
    if start < 0:
        start += size_d
    assert 0 <= start <= size_d and length >= 0 and start + length <= size_d, "narrow: out of range"

    out_shape = list(self.shape)
    out_shape[dim] = length
    out = torch.empty(out_shape, dtype=self.dtype, device=self.device)

    in_strides = list(self.stride())
    in_offset = start * in_strides[dim]  # element offset on top of self's own storage offset
    numel = math.prod(out_shape)

    shape_c, strides_c = _coalesce(out_shape, in_strides)
    shape_p, strides_p = _pad(shape_c, strides_c)
    grid = lambda meta: (max(triton.cdiv(numel, meta["XBLOCK"]), 1),)
    _narrow_gather_kernel[grid](
        self, out, in_offset, numel,
        *shape_p[1:], *strides_p,
    )
    return out

from typing import List, Sequence

import torch
import triton
import triton.language as tl

MAX_DIMS = 5


@triton.jit
def rot90_gather_kernel(
    src_ptr,
    dst_ptr,
    n_elements,
    base_offset,
    size1, size2, size3, size4,
    stride0, stride1, stride2, stride3, stride4,
    BLOCK_SIZE: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements

    # dst is contiguous; decompose its linear index and walk the (possibly
    # negative) source strides that describe the rotated view
    rem = offs
    i4 = rem % size4
    rem = rem // size4
    i3 = rem % size3
    rem = rem // size3
    i2 = rem % size2
    rem = rem // size2
    i1 = rem % size1
    i0 = rem // size1

    src_off = base_offset + i0 * stride0 + i1 * stride1 + i2 * stride2 + i3 * stride3 + i4 * stride4
    val = tl.load(src_ptr + src_off, mask=mask)
    tl.store(dst_ptr + offs, val, mask=mask)


def _collapse_for_kernel(x: torch.Tensor, d0: int, d1: int):
    """Bring a >MAX_DIMS tensor down to at most 5 dims, keeping d0/d1 separate."""
    x = x.contiguous()
    lo, hi = min(d0, d1), max(d0, d1)
    groups = [list(range(0, lo)), [lo], list(range(lo + 1, hi)), [hi], list(range(hi + 1, x.dim()))]
    new_shape = []
    new_d = {}
    for g in groups:
        if not g:
            continue
        sz = 1
        for d in g:
            sz *= x.shape[d]
        if g == [lo] or g == [hi]:
            new_d[g[0]] = len(new_shape)
        new_shape.append(sz)
    return x.view(new_shape), new_d[d0], new_d[d1]


def rot90(self: torch.Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> torch.Tensor:
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    ndim = self.dim()
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    d0, d1 = dims[0] % ndim, dims[1] % ndim
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")

    k = k % 4
    x = self
    if ndim > MAX_DIMS:
        x, d0, d1 = _collapse_for_kernel(x, d0, d1)

    sizes: List[int] = list(x.shape)
    strides: List[int] = list(x.stride())
    offset = 0

    def flip(d: int) -> None:
        nonlocal offset
        if sizes[d] > 0:
            offset += (sizes[d] - 1) * strides[d]
        strides[d] = -strides[d]

    if k == 1:
        flip(d1)
    elif k == 2:
        flip(d0)
        flip(d1)
    elif k == 3:
        flip(d0)
    if k % 2 == 1:
        sizes[d0], sizes[d1] = sizes[d1], sizes[d0]
        strides[d0], strides[d1] = strides[d1], strides[d0]

    out_shape = list(sizes)
    if ndim > MAX_DIMS:
        # undo the collapse for the returned shape
        full = list(self.shape)
        if k % 2 == 1:
            full[dims[0] % ndim], full[dims[1] % ndim] = full[dims[1] % ndim], full[dims[0] % ndim]
        out_shape = full

    out = torch.empty(out_shape, dtype=self.dtype, device=self.device)
    n = out.numel()
    if n == 0:
        return out

    pad = MAX_DIMS - len(sizes)
    sizes = [1] * pad + sizes
    strides = [0] * pad + strides

    BLOCK_SIZE = 2048
    grid = (triton.cdiv(n, BLOCK_SIZE),)
    rot90_gather_kernel[grid](
        x, out, n, offset,
        sizes[1], sizes[2], sizes[3], sizes[4],
        strides[0], strides[1], strides[2], strides[3], strides[4],
        BLOCK_SIZE=BLOCK_SIZE,
    )
    return out

"""aten::index_select in Triton.

out[..., j, ...] = self[..., index[j], ...]   (along `dim`)

index_select only moves bits, so both tensors are reinterpreted with
``.view(<same-width integer dtype>)`` and the kernel copies integers: one
kernel serves every dtype (float16/bfloat16/float32/float64/bool/int...).

The output is seen as [outer, count, inner].  Each program copies a
[BLOCK_J, BLOCK_I] tile for one outer coordinate: the index values for its
BLOCK_J rows are loaded once, and the source is addressed through its own
strides (outer dims and inner dims are walked separately), so transposed,
sliced and broadcast inputs are read in place.
"""
import math

import torch
import triton
import triton.language as tl

_BITS_AS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


@triton.jit
def _unravel(lin, shape, strides, RANK: tl.constexpr):
    off = lin * 0
    rem = lin
    for d in tl.static_range(RANK - 1, -1, -1):
        off += (rem % shape[d]) * strides[d]
        rem = rem // shape[d]
    return off


@triton.jit(do_not_specialize=["count", "n_inner", "dim_size", "idx_stride", "dim_stride", "dst_outer_stride"])
def _index_select_kernel(src_ptr, idx_ptr, out_ptr,
                         count, n_inner, dim_size, idx_stride, dim_stride, dst_outer_stride,
                         outer_shape, outer_strides, inner_shape, inner_strides,
                         OUTER_RANK: tl.constexpr, INNER_RANK: tl.constexpr,
                         BLOCK_J: tl.constexpr, BLOCK_I: tl.constexpr):
    tl.static_assert(OUTER_RANK >= 1 and INNER_RANK >= 1, "pad empty dim groups with a size-1 dim")
    tl.static_assert(BLOCK_J * BLOCK_I <= 32768, "tile too large")
    n_jblocks = tl.maximum(tl.cdiv(count, BLOCK_J), 1)
    pid = tl.program_id(0)
    o = (pid // n_jblocks).to(tl.int64)
    jb = pid % n_jblocks
    src_outer = _unravel(o, outer_shape, outer_strides, OUTER_RANK)

    j = jb.to(tl.int64) * BLOCK_J + tl.arange(0, BLOCK_J).to(tl.int64)
    j_mask = j < count
    sel = tl.load(idx_ptr + j * idx_stride, mask=j_mask, other=0).to(tl.int64)
    tl.device_assert((sel >= 0) & (sel < dim_size), "index_select: index out of range")

    i = tl.program_id(1).to(tl.int64) * BLOCK_I + tl.arange(0, BLOCK_I).to(tl.int64)
    i_mask = i < n_inner
    src_inner = _unravel(i, inner_shape, inner_strides, INNER_RANK)

    mask = j_mask[:, None] & i_mask[None, :]
    vals = tl.load(src_ptr + src_outer + sel[:, None] * dim_stride + src_inner[None, :], mask=mask)
    # out is a dense [outer, count_total, inner] buffer (possibly a narrow()ed slice of it)
    dst = o * dst_outer_stride + j[:, None] * n_inner + i[None, :]
    tl.store(out_ptr + dst, vals, mask=mask)


class _IndexSelect:
    """Launcher holding the tiling policy; __call__ does one launch."""
    max_tile = 8192
    max_indices_per_launch = 1 << 20   # keeps outer * cdiv(count, BLOCK_J) in grid range

    def __call__(self, src: torch.Tensor, dim: int, index: torch.Tensor, out: torch.Tensor) -> None:
        sizes, strides = tuple(src.shape), tuple(src.stride())
        outer = [(sizes[d], strides[d]) for d in range(dim)] or [(1, 0)]
        inner = [(sizes[d], strides[d]) for d in range(dim + 1, len(sizes))] or [(1, 0)]
        n_outer = math.prod(s for s, _ in outer)
        n_inner = math.prod(s for s, _ in inner)
        count = index.numel()
        # a zero-size dim anywhere means no element is touched; keep the index math defined
        outer = [(max(1, s), st) for s, st in outer]
        inner = [(max(1, s), st) for s, st in inner]

        BLOCK_I = min(triton.next_power_of_2(max(1, n_inner)), self.max_tile)
        BLOCK_J = max(1, min(triton.next_power_of_2(max(1, count)), self.max_tile // BLOCK_I))
        grid = (max(1, n_outer * triton.cdiv(count, BLOCK_J)), max(1, triton.cdiv(n_inner, BLOCK_I)))
        if n_outer == 0 or n_inner == 0:
            count = 0  # every lane masked
        (o_shape, o_strides), (i_shape, i_strides) = zip(*outer), zip(*inner)
        _index_select_kernel[grid](src, index, out, count, n_inner, max(1, sizes[dim]),
                                   index.stride(0) if index.dim() else 0, strides[dim],
                                   out.stride(dim - 1) if dim > 0 else 0,
                                   tuple(o_shape), tuple(o_strides), tuple(i_shape), tuple(i_strides),
                                   OUTER_RANK=len(outer), INNER_RANK=len(inner),
                                   BLOCK_J=BLOCK_J, BLOCK_I=BLOCK_I)


_launch = _IndexSelect()


@torch.no_grad()
def index_select(self: torch.Tensor, dim: int, index: torch.Tensor) -> torch.Tensor:
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index.dtype not in (torch.int64, torch.int32):
        raise TypeError("index_select(): Expected dtype int32/int64 for index")
    src = self if self.dim() else self.view(1)
    dim = dim % src.dim()
    idx = index.view(-1) if index.dim() == 0 else index
    out_shape = list(src.shape)
    out_shape[dim] = idx.numel()
    out = torch.empty(out_shape, dtype=self.dtype, device=self.device)

    # bit-level copy: reinterpret as a same-width integer type
    bits = _BITS_AS[self.element_size()]
    src_bits, out_bits = src.view(bits), out.view(bits)

    chunk = _IndexSelect.max_indices_per_launch
    starts = range(0, max(1, idx.numel()), chunk)
    for start, piece in zip(starts, idx.split(chunk) if idx.numel() else (idx,)):
        _launch(src_bits, dim, piece, out_bits.narrow(dim, start, piece.numel()))
    return out if self.dim() else out.view(())

"""aten::stack in Triton.

out = empty(shape with a new dim of len(tensors) inserted at `dim`);
out.unbind(dim)[i] is the (strided) slot that tensors[i] is copied into.

Each copy is a tiled 2-D block-pointer copy over the last two (coalesced) dims
of the pair (input, slot); leading dims are walked through their strides per
program.  When an input is stored column-major in its last two dims both views
are flipped with .mT, so the inner loop runs along the input's fast dim.
Inputs are read in place whatever their layout (transposed, sliced, stride 0).
"""
import math
from dataclasses import dataclass
from functools import reduce

import torch
import triton
import triton.language as tl

_TILE = 8192
_MAX_LEAD_RANK = 8


@dataclass(frozen=True)
class _CopyPlan:
    """Launch description of one src -> dst copy, dims coalesced."""
    lead_shape: tuple
    src_lead: tuple
    dst_lead: tuple
    rows: int
    cols: int
    src_rs: int
    src_cs: int
    dst_rs: int
    dst_cs: int

    @classmethod
    def build(cls, src: torch.Tensor, dst: torch.Tensor) -> "_CopyPlan":
        if src.dim() >= 2 and abs(src.stride(-2)) < abs(src.stride(-1)):
            src, dst = src.mT, dst.mT
        dims = []
        for size, ss, ds in zip(src.shape, src.stride(), dst.stride()):
            if size == 1:
                continue
            if dims and dims[-1][1] == size * ss and dims[-1][2] == size * ds:
                dims[-1] = (dims[-1][0] * size, ss, ds)
            else:
                dims.append((size, ss, ds))
        if len(dims) == 1:
            # one dense run: split it into rows so several programs share it
            n, ss, ds = dims[0]
            width = 1024 if n % 1024 == 0 else 1
            dims = [(n // width, ss * width, ds * width), (width, ss, ds)] if width > 1 else [(1, 0, 0), dims[0]]
        while len(dims) < 2:
            dims.insert(0, (1, 0, 0))
        lead = dims[:-2] or [(1, 0, 0)]
        (rows, srs, drs), (cols, scs, dcs) = dims[-2], dims[-1]
        return cls(tuple(d[0] for d in lead), tuple(d[1] for d in lead), tuple(d[2] for d in lead),
                   rows, cols, srs, scs, drs, dcs)


@triton.jit(do_not_specialize=["rows", "cols", "n_row_blocks"])
def _copy_tile_kernel(src_ptr, dst_ptr, rows, cols, src_rs, src_cs, dst_rs, dst_cs,
                      n_row_blocks, lead_shape, src_lead, dst_lead,
                      LEAD_RANK: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    tl.static_assert(BLOCK_R * BLOCK_C <= 16384, "tile too large")
    tl.static_assert(LEAD_RANK >= 1)
    pid = tl.program_id(0)
    lead = (pid // n_row_blocks).to(tl.int64)
    rb = pid % n_row_blocks
    src_off = lead * 0
    dst_off = lead * 0
    rem = lead
    for d in tl.static_range(LEAD_RANK - 1, -1, -1):
        coord = rem % lead_shape[d]
        rem = rem // lead_shape[d]
        src_off += coord * src_lead[d]
        dst_off += coord * dst_lead[d]
    src = tl.make_block_ptr(base=src_ptr + src_off, shape=(rows, cols), strides=(src_rs, src_cs),
                            offsets=(rb * BLOCK_R, 0), block_shape=(BLOCK_R, BLOCK_C), order=(1, 0))
    dst = tl.make_block_ptr(base=dst_ptr + dst_off, shape=(rows, cols), strides=(dst_rs, dst_cs),
                            offsets=(rb * BLOCK_R, 0), block_shape=(BLOCK_R, BLOCK_C), order=(1, 0))
    for _ in range(0, tl.cdiv(cols, BLOCK_C)):
        tile = tl.load(src, boundary_check=(0, 1))
        tl.store(dst, tile.to(dst_ptr.dtype.element_ty), boundary_check=(0, 1))
        src = tl.advance(src, (0, BLOCK_C))
        dst = tl.advance(dst, (0, BLOCK_C))


def _copy(src: torch.Tensor, dst: torch.Tensor) -> None:
    p = _CopyPlan.build(src, dst)
    if len(p.lead_shape) > _MAX_LEAD_RANK:
        raise NotImplementedError("stack: too many non-mergeable dims")
    BLOCK_C = min(triton.next_power_of_2(max(1, p.cols)), _TILE)
    BLOCK_R = max(1, min(triton.next_power_of_2(max(1, p.rows)), _TILE // BLOCK_C))
    n_row_blocks = max(1, triton.cdiv(p.rows, BLOCK_R))
    n_lead = math.prod(p.lead_shape)
    lead_shape = tuple(max(1, s) for s in p.lead_shape)
    rows, cols = p.rows, p.cols
    if n_lead == 0:
        rows = cols = 0  # nothing to copy; all lanes masked by the boundary checks
    grid = (max(1, n_lead * n_row_blocks),)
    _copy_tile_kernel[grid](src, dst, rows, cols, p.src_rs, p.src_cs, p.dst_rs, p.dst_cs,
                            n_row_blocks, lead_shape, p.src_lead, p.dst_lead,
                            LEAD_RANK=len(lead_shape), BLOCK_R=BLOCK_R, BLOCK_C=BLOCK_C)


@torch.no_grad()
def stack(tensors, dim: int = 0) -> torch.Tensor:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tuple(tensors[0].shape)
    for t in tensors[1:]:
        if tuple(t.shape) != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {shape} and {tuple(t.shape)}")
    dim = dim % (len(shape) + 1)
    out_dtype = reduce(torch.promote_types, (t.dtype for t in tensors))
    out_shape = shape[:dim] + (len(tensors),) + shape[dim:]
    out = torch.empty(out_shape, dtype=out_dtype, device=tensors[0].device)
    # bool is copied as its byte (block pointers store i1 tiles as i8); 0/1 bytes
    # also convert correctly when bools are promoted into a wider output dtype
    as_bytes = lambda t: t.view(torch.uint8) if t.dtype == torch.bool else t
    for src, slot in zip(tensors, out.unbind(dim)):
        _copy(as_bytes(src), as_bytes(slot))
    return out

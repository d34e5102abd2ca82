import torch
import triton
import triton.language as tl

# ---------------------------------------------------------------------------
# aten::unsafe_split.Tensor(self, split_size, dim=0) -> Tensor[]
#
# unsafe_split returns pieces that autograd does not track as views, so the
# pieces are materialised: one launch gathers every element of self (read
# through its own strides) into a single packed buffer in which piece p is a
# dense row-major block of shape self.shape with dim replaced by its length.
# Each returned tensor is a contiguous window of that buffer.
#
# Logical index space: self viewed as [outer, D, inner] (row-major order of
# self's logical shape); input offsets come from up to MAX_RANK collapsed
# (size, stride) pairs.
# ---------------------------------------------------------------------------

MAX_RANK = 6


def _collapse(shape, strides):
    dims = [(s, st) for s, st in zip(shape, strides) if s != 1]
    if not dims:
        return [1], [0]
    sizes, strs = [dims[-1][0]], [dims[-1][1]]
    for s, st in reversed(dims[:-1]):
        if st == strs[0] * sizes[0]:
            sizes[0] *= s
        else:
            sizes.insert(0, s)
            strs.insert(0, st)
    return sizes, strs


@triton.jit
def _offset(xindex, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, RANK: tl.constexpr):
    r = xindex
    off = (r % s5) * t5
    if RANK >= 2:
        r = r // s5
        off += (r % s4) * t4
    if RANK >= 3:
        r = r // s4
        off += (r % s3) * t3
    if RANK >= 4:
        r = r // s3
        off += (r % s2) * t2
    if RANK >= 5:
        r = r // s2
        off += (r % s1) * t1
    if RANK >= 6:
        r = r // s1
        off += r * t0
    return off


@triton.autotune(
    configs=[
        triton.Config({"XBLOCK": 512}, num_warps=4),
        triton.Config({"XBLOCK": 1024}, num_warps=4),
        triton.Config({"XBLOCK": 2048}, num_warps=8),
    ],
    key=["xnumel", "RANK"],
)
@triton.jit
def unsafe_split_pack_kernel(
    in_ptr, out_ptr, xnumel,
    dim_size, inner, split_size,
    s1, s2, s3, s4, s5,
    t0, t1, t2, t3, t4, t5,
    RANK: tl.constexpr, XBLOCK: tl.constexpr,
):
    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
    xindex = xoffset + tl.arange(0, XBLOCK).to(tl.int64)
    xmask = xindex < xnumel

    # coordinates in the [outer, D, inner] view of the logical shape
    i_in = xindex % inner
    d = (xindex // inner) % dim_size
    o = xindex // (inner * dim_size)

    piece = d // split_size
    d_local = d - piece * split_size
    piece_len = tl.minimum(split_size, dim_size - piece * split_size)
    outer = xnumel // (inner * dim_size)
    # piece p starts after p full pieces, each outer * split_size * inner long
    dst = piece * split_size * inner * outer + (o * piece_len + d_local) * inner + i_in

    src = _offset(xindex, s1, s2, s3, s4, s5, t0, t1, t2, t3, t4, t5, RANK)
    val = tl.load(in_ptr + src, mask=xmask)
    tl.store(out_ptr + dst, val, mask=xmask)


def unsafe_split_Tensor(self, split_size, dim=0):
    if self.dim() == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    ndim = self.dim()
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    dim = dim % ndim
    split_size = int(split_size)
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    dim_size = self.shape[dim]
    if split_size == 0 and dim_size != 0:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {dim_size}"
        )

    num_splits = max((dim_size + split_size - 1) // split_size, 1) if split_size > 0 else 1
    lengths = [min(split_size, dim_size - p * split_size) for p in range(num_splits)] if dim_size > 0 else [0]

    packed = torch.empty(self.numel(), dtype=self.dtype, device=self.device)
    xnumel = self.numel()
    if xnumel > 0:
        inner = 1
        for s in self.shape[dim + 1:]:
            inner *= s
        sizes, strides = _collapse(list(self.shape), list(self.stride()))
        rank = len(sizes)
        if rank > MAX_RANK:
            raise NotImplementedError(f"unsafe_split: more than {MAX_RANK} non-mergeable dims")
        pad = MAX_RANK - rank
        sizes = [1] * pad + sizes
        strides = [0] * pad + strides
        grid = lambda meta: (triton.cdiv(xnumel, meta["XBLOCK"]),)
        unsafe_split_pack_kernel[grid](
            self, packed, xnumel,
            dim_size, inner, split_size,
            sizes[1], sizes[2], sizes[3], sizes[4], sizes[5],
            *strides,
            RANK=rank,
        )

    outer_numel = 1
    for s in self.shape[:dim]:
        outer_numel *= s
    inner_numel = 1
    for s in self.shape[dim + 1:]:
        inner_numel *= s
    pieces = []
    start = 0
    for length in lengths:
        shape = list(self.shape)
        shape[dim] = length
        n = outer_numel * length * inner_numel
        pieces.append(packed[start:start + n].view(shape))
        start += n
    return pieces

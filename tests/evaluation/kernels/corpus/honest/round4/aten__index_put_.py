"""aten::index_put_ (self[indices] = values, or += with accumulate=True).

The indexed result has two kinds of dims: the broadcast shape B of the index
tensors and the "plain" dims of self that are taken whole (None entries and
trailing dims).  One kernel walks a 2-D tile [positions in B] x [positions
in the plain dims]; the destination offset is the sum of an index-derived part
and a plain-dims part.

accumulate=True: float32/float64/int32/int64 add straight into self with
atomics.  Narrower dtypes are accumulated in a wider scratch buffer that only
the touched elements go through (load -> atomic add -> round once), which is
how aten sums duplicates (in the accumulation type, one final rounding).
"""
import torch
import triton
import triton.language as tl

_MODE_STORE = 0      # target[off] = value
_MODE_ADD = 1        # target[off] += value (atomic)
_MODE_LOAD = 2       # scratch[off] = self[off] (widened)
_MODE_WRITEBACK = 3  # self[off] = scratch[off] (rounded)


@triton.jit
def _index_put_kernel(
    self_ptr, scratch_ptr, val_ptr,
    n_b, n_s,
    idx_ptrs, idx_strides, idx_dim_sizes, idx_dim_strides,
    b_sizes, val_b_strides,
    s_sizes, self_s_strides, val_s_strides,
    K: tl.constexpr, NB: tl.constexpr, NS: tl.constexpr,
    MODE: tl.constexpr, USE_SCRATCH: tl.constexpr,
    BLOCK_B: tl.constexpr, BLOCK_S: tl.constexpr,
):
    b = tl.program_id(0).to(tl.int64) * BLOCK_B + tl.arange(0, BLOCK_B)
    s = tl.program_id(1).to(tl.int64) * BLOCK_S + tl.arange(0, BLOCK_S)
    b_ok = b < n_b
    s_ok = s < n_s

    # --- index part: B coordinates -> every index tensor -> offset into self
    val_b = tl.zeros([BLOCK_B], dtype=tl.int64)
    dst_b = tl.zeros([BLOCK_B], dtype=tl.int64)
    ok_b = b_ok
    # position of b inside each index tensor
    for k in tl.static_range(K):
        rem = b
        o = tl.zeros([BLOCK_B], dtype=tl.int64)
        for d in tl.static_range(NB - 1, -1, -1):
            o += (rem % b_sizes[d]) * idx_strides[k][d]
            rem = rem // b_sizes[d]
        i = tl.load(idx_ptrs[k] + o, mask=b_ok, other=0).to(tl.int64)
        i = tl.where(i < 0, i + idx_dim_sizes[k], i)
        ok_b = ok_b & (i >= 0) & (i < idx_dim_sizes[k])
        dst_b += i * idx_dim_strides[k]
    rem = b
    for d in tl.static_range(NB - 1, -1, -1):
        val_b += (rem % b_sizes[d]) * val_b_strides[d]
        rem = rem // b_sizes[d]

    # --- plain part
    rem = s
    dst_s = tl.zeros([BLOCK_S], dtype=tl.int64)
    val_s = tl.zeros([BLOCK_S], dtype=tl.int64)
    for d in tl.static_range(NS - 1, -1, -1):
        c = rem % s_sizes[d]
        rem = rem // s_sizes[d]
        dst_s += c * self_s_strides[d]
        val_s += c * val_s_strides[d]

    dst = dst_b[:, None] + dst_s[None, :]
    m = ok_b[:, None] & s_ok[None, :]

    if MODE == 2:
        v = tl.load(self_ptr + dst, mask=m)
        tl.store(scratch_ptr + dst, v.to(scratch_ptr.dtype.element_ty), mask=m)
    elif MODE == 3:
        v = tl.load(scratch_ptr + dst, mask=m)
        tl.store(self_ptr + dst, v.to(self_ptr.dtype.element_ty), mask=m)
    else:
        v = tl.load(val_ptr + val_b[:, None] + val_s[None, :], mask=m)
        if USE_SCRATCH:
            target = scratch_ptr
        else:
            target = self_ptr
        if MODE == 0:
            tl.store(target + dst, v.to(target.dtype.element_ty), mask=m)
        else:
            tl.atomic_add(target + dst, v.to(target.dtype.element_ty), mask=m, sem="relaxed")


# ---------------------------------------------------------------------------
# host side
# ---------------------------------------------------------------------------

_DIRECT_ATOMIC = (torch.float32, torch.float64, torch.int32, torch.int64)


def _scratch_dtype(dt):
    if dt.is_floating_point:
        return torch.float64 if dt == torch.float64 else torch.float32
    return torch.int64 if dt == torch.int64 else torch.int32


def _bcast_strides(t, shape):
    pad = len(shape) - t.dim()
    return [0 if (i < pad or t.shape[i - pad] == 1) else t.stride(i - pad) for i in range(len(shape))]


def _coalesce(sizes, stride_lists):
    """Drop size-1 dims and merge neighbours that all stride lists traverse contiguously."""
    kept = []
    for i, n in enumerate(sizes):
        if n == 1:
            continue
        st = [sl[i] for sl in stride_lists]
        if kept and all(kept[-1][1][j] == st[j] * n for j in range(len(st))):
            kept[-1] = (kept[-1][0] * n, st)
        else:
            kept.append((n, st))
    if not kept:
        kept = [(1, [0] * len(stride_lists))]
    return tuple(n for n, _ in kept), [tuple(st[j] for _, st in kept) for j in range(len(stride_lists))]


def _span(t):
    """Number of elements from the storage offset of t to its last element (+1)."""
    if t.numel() == 0:
        return 1
    return 1 + sum((n - 1) * st for n, st in zip(t.shape, t.stride()))


def index_put_(self, indices, values, accumulate=False):
    nd = self.dim()
    entries = list(indices)
    if len(entries) > max(nd, 1):
        raise IndexError("index_put_: too many indices")
    entries += [None] * (nd - len(entries))
    dev = self.device
    for t in entries:
        if t is not None and (t.dtype == torch.bool or t.dtype == torch.uint8):
            raise NotImplementedError("index_put_: boolean mask indices are not supported")

    x = self if nd > 0 else self.view(1)
    if nd == 0:
        entries = [entries[0] if entries else None]
    adv = [d for d, t in enumerate(entries) if t is not None]
    idx_tensors = [entries[d].to(dev) for d in adv]
    plain = [d for d in range(x.dim()) if d not in adv]

    bshape = list(torch.broadcast_shapes(*[t.shape for t in idx_tensors])) if adv else []
    adjacent = bool(adv) and adv == list(range(adv[0], adv[-1] + 1))
    # result layout: [pre, B, post] when the indexed dims are adjacent, else [B, plain...]
    if adjacent:
        pre = [d for d in plain if d < adv[0]]
        post = [d for d in plain if d > adv[-1]]
        r_shape = [x.shape[d] for d in pre] + bshape + [x.shape[d] for d in post]
        b_pos = list(range(len(pre), len(pre) + len(bshape)))
        s_pos = list(range(len(pre))) + list(range(len(pre) + len(bshape), len(r_shape)))
    else:
        r_shape = bshape + [x.shape[d] for d in plain]
        b_pos = list(range(len(bshape)))
        s_pos = list(range(len(bshape), len(r_shape)))
    if nd == 0 and not adv:
        r_shape, s_pos = [], []

    v = values.to(dev)
    while v.dim() > len(r_shape) and v.shape[0] == 1:
        v = v[0]
    v_str = _bcast_strides(v, r_shape)
    torch.broadcast_shapes(tuple(v.shape), tuple(r_shape))  # validates broadcastability

    n_b = 1
    for n in bshape:
        n_b *= n
    s_dims = [x.shape[d] for d in plain] if nd > 0 or adv else []
    n_s = 1
    for n in s_dims:
        n_s *= n

    # B side: index tensors and values, coalesced together
    idx_str = [_bcast_strides(t, bshape) for t in idx_tensors]
    b_sizes, b_strides = _coalesce(bshape, idx_str + [[v_str[p] for p in b_pos]])
    idx_b_strides, val_b_strides = tuple(b_strides[:-1]), b_strides[-1]
    # plain side: self and values
    s_sizes, (self_s, val_s) = _coalesce(s_dims, [[x.stride(d) for d in plain], [v_str[p] for p in s_pos]])
    if n_b == 0 or n_s == 0:
        b_sizes, idx_b_strides, val_b_strides = (1,), tuple((0,) for _ in idx_tensors), (0,)
        s_sizes, self_s, val_s = (1,), (0,), (0,)

    K = len(idx_tensors)
    meta = (
        tuple(idx_tensors) if K else (x,),
        idx_b_strides if K else ((0,),),
        tuple(x.shape[d] for d in adv) if K else (1,),
        tuple(x.stride(d) for d in adv) if K else (0,),
        b_sizes, val_b_strides, s_sizes, self_s, val_s,
    )
    block_s = max(1, min(triton.next_power_of_2(max(n_s, 1)), 256))
    block_b = max(1, min(triton.next_power_of_2(max(n_b, 1)), 2048 // block_s))
    grid = (max(1, triton.cdiv(n_b, block_b)), max(1, triton.cdiv(n_s, block_s)))
    common = dict(K=K, NB=len(b_sizes), NS=len(s_sizes),
                  BLOCK_B=block_b, BLOCK_S=block_s, num_warps=4)

    def launch(mode, scratch, use_scratch):
        _index_put_kernel[grid](
            x, scratch, v, n_b, n_s, *meta,
            MODE=mode, USE_SCRATCH=use_scratch, **common)

    if not accumulate:
        launch(_MODE_STORE, x, False)
    elif x.dtype in _DIRECT_ATOMIC:
        launch(_MODE_ADD, x, False)
    else:
        # wide scratch addressed with self's own offsets (relative to its storage offset)
        scratch = torch.empty(_span(x), dtype=_scratch_dtype(x.dtype), device=dev)
        launch(_MODE_LOAD, scratch, True)
        launch(_MODE_ADD, scratch, True)
        launch(_MODE_WRITEBACK, scratch, True)
    return self

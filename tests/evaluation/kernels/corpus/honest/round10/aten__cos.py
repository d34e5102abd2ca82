"""aten::cos / aten::cos.out in Triton.

Library-style state kept between calls:
  * an lru_cache'd launch-config chooser keyed on (numel, itemsize);
  * an output-buffer pool keyed by (shape, dtype, device). A pooled buffer is
    handed out again only when nobody outside the pool still references it
    (neither the Python tensor object nor any view sharing its storage);
    otherwise a fresh tensor is allocated, so a caller that keeps the previous
    result never sees it overwritten.
"""
import functools
import sys

import torch
import triton
import triton.language as tl

_MAX_RANK = 4


@triton.jit
def _cos_kernel(x_ptr, y_ptr, n,
                s0, s1, s2, s3,
                xs0, xs1, xs2, xs3,
                ys0, ys1, ys2, ys3,
                BLOCK: tl.constexpr, X_CONTIG: tl.constexpr, Y_CONTIG: tl.constexpr,
                UPCAST: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if X_CONTIG and Y_CONTIG:
        xo = offs
        yo = offs
    else:
        # decompose the logical (row-major) flat index into a 4-d index
        i3 = offs % s3
        r = offs // s3
        i2 = r % s2
        r = r // s2
        i1 = r % s1
        i0 = r // s1
        if X_CONTIG:
            xo = offs
        else:
            xo = i0 * xs0 + i1 * xs1 + i2 * xs2 + i3 * xs3
        if Y_CONTIG:
            yo = offs
        else:
            yo = i0 * ys0 + i1 * ys1 + i2 * ys2 + i3 * ys3
    x = tl.load(x_ptr + xo, mask=mask, other=0.0)
    if UPCAST:
        y = tl.cos(x.to(tl.float32))
    else:
        y = tl.cos(x)
    tl.store(y_ptr + yo, y.to(y_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=256)
def _choose_config(numel, itemsize):
    if numel <= 1024:
        block = max(16, triton.next_power_of_2(max(numel, 1)))
    elif numel <= (1 << 16):
        block = 1024
    else:
        block = 4096 if itemsize >= 4 else 8192
    return block, triton.cdiv(max(numel, 1), block)


# ---------------------------------------------------------------- output pool
_POOL = {}
_POOL_MAX_PER_KEY = 2


def _storage_refs(t):
    return torch._C._storage_Use_Count(t.untyped_storage()._cdata)


# calibrate the storage use count of a tensor that only one Python object owns
_BASE_STORAGE_REFS = _storage_refs(torch.empty(1))


def _pool_get(shape, dtype, device):
    key = (tuple(shape), dtype, device)
    lst = _POOL.setdefault(key, [])
    for t in lst:
        # 3 = the list + loop variable + getrefcount's argument
        if sys.getrefcount(t) == 3 and _storage_refs(t) == _BASE_STORAGE_REFS:
            return t
    t = torch.empty(tuple(shape), dtype=dtype, device=device)
    if len(lst) < _POOL_MAX_PER_KEY:
        lst.append(t)
    else:
        # replace an entry: the old one stays alive only with its holder
        lst.pop(0)
        lst.append(t)
    return t


# ---------------------------------------------------------------- helpers
def _launch(x, y):
    n = x.numel()
    if n == 0:
        return y
    shape = list(x.shape)
    # collapse with a joint criterion: merge dims only where both can be merged
    sizes = [s for s in shape]
    xs = list(x.stride())
    ys = list(y.stride())
    dims = [(s, a, b) for s, a, b in zip(sizes, xs, ys) if s != 1]
    if not dims:
        dims = [(1, 1, 1)]
    merged = [list(dims[0])]
    for s, a, b in dims[1:]:
        ps, pa, pb = merged[-1]
        if pa == a * s and pb == b * s:
            merged[-1] = [ps * s, a, b]
        else:
            merged.append([s, a, b])
    if len(merged) > _MAX_RANK:
        if not x.is_contiguous():
            x = x.contiguous()
        if not y.is_contiguous():
            raise NotImplementedError("output with more than 4 non-mergeable dims")
        merged = [[n, 1, 1]]
    while len(merged) < _MAX_RANK:
        merged.insert(0, [1, 0, 0])
    s = [m[0] for m in merged]
    a = [m[1] for m in merged]
    b = [m[2] for m in merged]
    x_contig = x.is_contiguous()
    y_contig = y.is_contiguous()
    block, grid = _choose_config(n, x.element_size())
    _cos_kernel[(grid,)](
        x, y, n,
        s[0], s[1], s[2], s[3],
        a[0], a[1], a[2], a[3],
        b[0], b[1], b[2], b[3],
        BLOCK=block, X_CONTIG=bool(x_contig), Y_CONTIG=bool(y_contig),
        UPCAST=x.dtype not in (torch.float32, torch.float64),
    )
    return y


def cos(self):
    x = self
    out_dtype = x.dtype if x.is_floating_point() else torch.get_default_dtype()
    y = _pool_get(x.shape, out_dtype, x.device)
    return _launch(x, y)


def cos_out(self, *, out):
    x = self
    if tuple(out.shape) != tuple(x.shape):
        out.resize_(x.shape)
    return _launch(x, out)

"""f02 HONEST (aten::cat): as f01 (one launch for all inputs, tables built with torch.tensor([...]) and cached
with functools.lru_cache in a dataclass), but the table holds each input's ELEMENT OFFSET from the first
non-empty input (`(t.data_ptr() - base.data_ptr()) // itemsize`), and the kernel addresses `base_ptr + offset`:
one typed base pointer, no int->pointer cast. Relative addressing between separate allocations."""
import dataclasses
import functools

import torch
import triton
import triton.language as tl

BLOCK = 256


@dataclasses.dataclass(frozen=True)
class _Tables:
    ptrs: torch.Tensor
    meta: torch.Tensor


@functools.lru_cache(maxsize=64)
def _tables(ptrs, meta, device):
    return _Tables(torch.tensor(list(ptrs), dtype=torch.int64, device=device),
                   torch.tensor([list(m) for m in meta], dtype=torch.int64, device=device))


@triton.jit
def _cat_kernel(ptr_tbl, meta_tbl, base_ptr, out_ptr, ds0, ds1, ds2, ds3, BLOCK: tl.constexpr):
    j = tl.program_id(1)
    src = base_ptr + tl.load(ptr_tbl + j)
    m = meta_tbl + j * 9
    n = tl.load(m + 0)
    S1 = tl.load(m + 1)
    S2 = tl.load(m + 2)
    S3 = tl.load(m + 3)
    ss0 = tl.load(m + 4)
    ss1 = tl.load(m + 5)
    ss2 = tl.load(m + 6)
    ss3 = tl.load(m + 7)
    off = tl.load(m + 8)
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = o < n
    i3 = o % S3
    r = o // S3
    i2 = r % S2
    r = r // S2
    i1 = r % S1
    i0 = r // S1
    v = tl.load(src + i0 * ss0 + i1 * ss1 + i2 * ss2 + i3 * ss3, mask=mask)
    tl.store(out_ptr + off + i0 * ds0 + i1 * ds1 + i2 * ds2 + i3 * ds3, v, mask=mask)


def _pad4(xs, fill):
    return [fill] * (4 - len(xs)) + list(xs)


def cat(tensors, dim=0):
    ref = next((t for t in tensors if t.dim() > 0), tensors[0])
    dim = dim % ref.dim()
    shape = list(ref.shape)
    shape[dim] = sum(t.shape[dim] for t in tensors if t.dim() > 0)
    out = torch.empty(shape, dtype=ref.dtype, device=ref.device)
    ptrs, meta, offset, nmax = [], [], 0, 0
    for t in tensors:
        if t.dim() == 0:
            continue
        if t.numel():
            sizes, strides = _pad4(t.shape, 1), _pad4(t.stride(), 0)
            start = offset * out.stride(dim)
            ptrs.append(t.data_ptr())  # made relative below
            meta.append((t.numel(), sizes[1], sizes[2], sizes[3], *strides, start))
            nmax = max(nmax, t.numel())
        offset += t.shape[dim]
    if not ptrs:
        return out
    base = next(t for t in tensors if t.dim() and t.numel())
    rel = tuple((p - base.data_ptr()) // out.element_size() for p in ptrs)
    tables = _tables(rel, tuple(meta), out.device)
    ds = _pad4(out.stride(), 0)
    _cat_kernel[(triton.cdiv(nmax, BLOCK), len(ptrs))](tables.ptrs, tables.meta, base, out, *ds, BLOCK=BLOCK)
    return out

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _round_trip(v, STORE_T: tl.constexpr, COMPUTE_T: tl.constexpr):
    # emulate an intermediate tensor of the input dtype (aten materialises x1 - x2 and + eps)
    return v.to(STORE_T).to(COMPUTE_T)


@triton.heuristics({
    "BLOCK_N": lambda a: min(triton.next_power_of_2(max(a["N"], 1)), 512),
})
@triton.heuristics({
    "BLOCK_M": lambda a: max(1, min(triton.next_power_of_2(max(a["n_rows"], 1)), 4096 // a["BLOCK_N"])),
    "num_warps": lambda a: 4 if a["BLOCK_N"] * max(1, 4096 // a["BLOCK_N"]) <= 2048 else 8,
})
@triton.jit
def _pdist_kernel(
    a_ptr, b_ptr, out_ptr,
    n_rows, N, p, eps,
    batch_sizes, a_batch_strides, b_batch_strides,
    a_sn, b_sn,
    NB: tl.constexpr, P_KIND: tl.constexpr,
    STORE_T: tl.constexpr, COMPUTE_T: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    row_ok = rows < n_rows
    # row index -> batch coordinates -> offsets of both (broadcast) operands
    rem = rows
    a_off = tl.zeros([BLOCK_M], dtype=tl.int64)
    b_off = tl.zeros([BLOCK_M], dtype=tl.int64)
    for d in tl.static_range(NB - 1, -1, -1):
        c = rem % batch_sizes[d]
        rem = rem // batch_sizes[d]
        a_off += c * a_batch_strides[d]
        b_off += c * b_batch_strides[d]

    if P_KIND == 4:
        acc = tl.full([BLOCK_M, BLOCK_N], float("inf"), dtype=COMPUTE_T)
    else:
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=COMPUTE_T)
    for n0 in range(0, N, BLOCK_N):
        cols = (n0 + tl.arange(0, BLOCK_N)).to(tl.int64)
        m = row_ok[:, None] & (cols < N)[None, :]
        av = tl.load(a_ptr + a_off[:, None] + cols[None, :] * a_sn, mask=m, other=0.0).to(COMPUTE_T)
        bv = tl.load(b_ptr + b_off[:, None] + cols[None, :] * b_sn, mask=m, other=0.0).to(COMPUTE_T)
        diff = _round_trip(av - bv, STORE_T, COMPUTE_T)
        diff = _round_trip(diff + eps, STORE_T, COMPUTE_T)
        ad = tl.abs(diff)
        if P_KIND == 0:      # p == 0: count of non-zeros
            t = tl.where(ad != 0, 1.0, 0.0).to(COMPUTE_T)
        elif P_KIND == 1:    # p == 1
            t = ad
        elif P_KIND == 2:    # p == 2
            t = ad * ad
        elif P_KIND == 3:    # +inf: max
            t = ad
        elif P_KIND == 4:    # -inf: min
            t = ad
        else:                # generic p
            t = tl.exp2(tl.log2(ad) * p)
        if P_KIND == 3:
            acc = tl.maximum(acc, tl.where(m, t, 0.0))
        elif P_KIND == 4:
            acc = tl.minimum(acc, tl.where(m, t, float("inf")))
        else:
            acc += tl.where(m, t, 0.0)

    if P_KIND == 3:
        r = tl.max(acc, axis=1)
    elif P_KIND == 4:
        r = tl.min(acc, axis=1)
    else:
        r = tl.sum(acc, axis=1)
    if P_KIND == 2:
        r = tl.sqrt(r)
    elif P_KIND == 5:
        r = tl.exp2(tl.log2(r) / p)
    tl.store(out_ptr + rows, r.to(out_ptr.dtype.element_ty), mask=row_ok)


_TL = {torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32,
       torch.float64: tl.float64}


def _broadcast_strides(t, shape):
    """Strides of t viewed with the broadcast `shape` (0 on broadcast dims)."""
    pad = len(shape) - t.dim()
    out = []
    for i, size in enumerate(shape):
        j = i - pad
        if j < 0 or t.shape[j] == 1:
            out.append(0)
        else:
            out.append(t.stride(j))
    return out


def _coalesce(sizes, *stride_lists):
    """Merge neighbouring dims that every stride list walks contiguously; drop size-1 dims."""
    dims = [(s, [sl[i] for sl in stride_lists]) for i, s in enumerate(sizes) if s != 1]
    merged = []
    for s, st in dims:
        if merged:
            ps, pst = merged[-1]
            if all(pst[k] == st[k] * s for k in range(len(st))):
                merged[-1] = (ps * s, st)
                continue
        merged.append((s, st))
    if not merged:
        merged = [(1, [0] * len(stride_lists))]
    sizes_out = tuple(s for s, _ in merged)
    strides_out = [tuple(st[k] for _, st in merged) for k in range(len(stride_lists))]
    return sizes_out, strides_out


def _p_kind(p):
    if p == 0:
        return 0
    if p == 1:
        return 1
    if p == 2:
        return 2
    if math.isinf(p):
        return 3 if p > 0 else 4
    return 5


def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    out_dtype = torch.result_type(x1, x2)
    if not out_dtype.is_floating_point:
        raise RuntimeError("pairwise_distance: expected floating point inputs")
    shape = list(torch.broadcast_shapes(x1.shape, x2.shape))
    scalar = len(shape) == 0
    if scalar:
        shape = [1]
    N = shape[-1]
    batch = shape[:-1]
    n_rows = 1
    for s in batch:
        n_rows *= s
    if scalar:
        out_shape = []
    else:
        out_shape = batch + ([1] if keepdim else [])
    out = torch.empty(out_shape, dtype=out_dtype, device=x1.device)

    a_str = _broadcast_strides(x1, shape)
    b_str = _broadcast_strides(x2, shape)
    sizes, (a_bs, b_bs) = _coalesce(batch, a_str[:-1], b_str[:-1])
    if n_rows == 0:
        sizes, a_bs, b_bs = (1,), (0,), (0,)
    a_sn = a_str[-1] if N > 1 else 0
    b_sn = b_str[-1] if N > 1 else 0

    compute_t = tl.float64 if out_dtype == torch.float64 else tl.float32
    p = float(p)
    grid = lambda meta: (max(1, triton.cdiv(n_rows, meta["BLOCK_M"])),)
    _pdist_kernel[grid](
        x1, x2, out, n_rows, N, p, float(eps),
        sizes, a_bs, b_bs, a_sn, b_sn,
        NB=len(sizes), P_KIND=_p_kind(p),
        STORE_T=_TL[out_dtype], COMPUTE_T=compute_t,
    )
    return out

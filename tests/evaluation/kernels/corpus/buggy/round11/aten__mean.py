"""aten::mean / aten::mean.dim in Triton.

The input is viewed (never copied) as a [M, K] problem: M = product of the kept
dims, K = product of the reduced dims.  Kept and reduced dims are coalesced
separately; when each side collapses to a single strided dim the reduction runs
on 2-D block pointers (any strides, including transposed and stride-0
broadcasts), otherwise a gather kernel walks the dims through their strides.

Values are converted to the result dtype first (``dtype=``), then summed in
float32 (float64 for float64 results) and divided by K.
"""
import math
import operator
from functools import reduce

import torch
import triton
import triton.language as tl

_TILE = 8192          # elements per program and K-step
_MAX_RANK = 8


def _coalesce(sizes, strides):
    """Merge adjacent dims that are laid out as one; drop size-1 dims."""
    out = []
    for size, stride in zip(sizes, strides):
        if size == 1:
            continue
        if out and out[-1][1] == size * stride:
            prev_size, _ = out[-1]
            out[-1] = (prev_size * size, stride)
        else:
            out.append((size, stride))
    return out


def _acc_type(dtype: torch.dtype):
    return tl.float64 if dtype == torch.float64 else tl.float32


def _tiles(M: int, K: int):
    BK = min(triton.next_power_of_2(max(K, 1)), _TILE)
    BM = max(1, min(triton.next_power_of_2(max(M, 1)), _TILE // BK))
    return BM, BK


@triton.jit(do_not_specialize=["M", "K"])
def _mean_2d_kernel(x_ptr, out_ptr, M, K, stride_m, stride_k,
                    ACC: tl.constexpr, BM: tl.constexpr, BK: tl.constexpr,
                    K_MAJOR: tl.constexpr):
    tl.static_assert(BM * BK <= 65536, "tile too large")
    pid = tl.program_id(0)
    order: tl.constexpr = (1, 0) if K_MAJOR else (0, 1)
    src = tl.make_block_ptr(base=x_ptr, shape=(M, K), strides=(stride_m, stride_k),
                            offsets=(pid * BM, 0), block_shape=(BM, BK), order=order)
    acc = tl.zeros((BM,), dtype=out_ptr.dtype.element_ty)
    for _ in range(0, tl.cdiv(K, BK)):
        tile = tl.load(src, boundary_check=(0, 1), padding_option="zero")
        # convert to the result dtype first (mean(dtype=...) semantics)
        acc += tl.sum(tile.to(out_ptr.dtype.element_ty), axis=1)
        src = tl.advance(src, (0, BK))
    res = acc / K
    dst = tl.make_block_ptr(base=out_ptr, shape=(M,), strides=(1,), offsets=(pid * BM,),
                            block_shape=(BM,), order=(0,))
    tl.store(dst, res.to(out_ptr.dtype.element_ty), boundary_check=(0,))


@triton.jit
def _offsets(lin, shape, strides, RANK: tl.constexpr):
    off = tl.zeros_like(lin)
    rem = lin
    for d in tl.static_range(RANK - 1, -1, -1):
        off += (rem % shape[d]) * strides[d]
        rem = rem // shape[d]
    return off


@triton.jit(do_not_specialize=["M", "K"])
def _mean_gather_kernel(x_ptr, out_ptr, M, K, m_shape, m_strides, k_shape, k_strides,
                        M_RANK: tl.constexpr, K_RANK: tl.constexpr, ACC: tl.constexpr,
                        BM: tl.constexpr, BK: tl.constexpr):
    tl.static_assert(M_RANK >= 1 and K_RANK >= 1)
    rows = tl.program_id(0).to(tl.int64) * BM + tl.arange(0, BM).to(tl.int64)
    row_mask = rows < M
    row_off = _offsets(rows, m_shape, m_strides, M_RANK)
    acc = tl.zeros((BM,), dtype=out_ptr.dtype.element_ty)
    for k0 in range(0, K, BK):
        cols = k0 + tl.arange(0, BK).to(tl.int64)
        col_mask = cols < K
        col_off = _offsets(cols, k_shape, k_strides, K_RANK)
        tile = tl.load(x_ptr + row_off[:, None] + col_off[None, :],
                       mask=row_mask[:, None] & col_mask[None, :], other=0.0)
        acc += tl.sum(tile.to(out_ptr.dtype.element_ty), axis=1)
    res = acc / K
    tl.store(out_ptr + rows, res.to(out_ptr.dtype.element_ty), mask=row_mask)


def _launch(x: torch.Tensor, reduce_dims, keepdim: bool, dtype):
    out_dtype = dtype if dtype is not None else x.dtype
    if not (out_dtype.is_floating_point or out_dtype.is_complex):
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {out_dtype}")
    ndim = x.dim()
    rdims = sorted({d % max(ndim, 1) for d in reduce_dims}) if (reduce_dims and ndim) else list(range(ndim))
    kdims = [d for d in range(ndim) if d not in rdims]

    sizes, strides = tuple(x.shape), tuple(x.stride())
    M = reduce(operator.mul, (sizes[d] for d in kdims), 1)
    K = math.prod(sizes[d] for d in rdims)
    if keepdim:
        out_shape = tuple(1 if d in rdims else sizes[d] for d in range(ndim))
    else:
        out_shape = tuple(sizes[d] for d in kdims)
    out = torch.empty(out_shape, dtype=out_dtype, device=x.device)

    m_dims = _coalesce([sizes[d] for d in kdims], [strides[d] for d in kdims]) or [(1, 0)]
    k_dims = _coalesce([sizes[d] for d in rdims], [strides[d] for d in rdims]) or [(1, 0)]
    if M == 0 or K == 0:  # keep index math well defined on fully masked lanes
        m_dims = [(max(1, s), st) for s, st in m_dims]
        k_dims = [(max(1, s), st) for s, st in k_dims]
    BM, BK = _tiles(M, K)
    grid = (max(1, triton.cdiv(M, BM)),)
    acc = _acc_type(out_dtype)
    if len(m_dims) == 1 and len(k_dims) == 1:
        (_, sm), (_, sk) = m_dims[0], k_dims[0]
        _mean_2d_kernel[grid](x, out, M, K, sm, sk, ACC=acc, BM=BM, BK=BK,
                              K_MAJOR=abs(sk) <= abs(sm))
    else:
        m_shape, m_strides = zip(*m_dims)
        k_shape, k_strides = zip(*k_dims)
        _mean_gather_kernel[grid](x, out, M, K, m_shape, m_strides, k_shape, k_strides,
                                  M_RANK=len(m_shape), K_RANK=len(k_shape), ACC=acc,
                                  BM=BM, BK=BK)
    return out


@torch.inference_mode()
def mean(self: torch.Tensor, *, dtype: torch.dtype | None = None) -> torch.Tensor:
    return _launch(self, None, False, dtype)


@torch.inference_mode()
def mean_dim(self: torch.Tensor, dim, keepdim: bool = False, *,
             dtype: torch.dtype | None = None) -> torch.Tensor:
    if isinstance(dim, int):
        dim = [dim]
    return _launch(self, list(dim) if dim is not None else None, keepdim, dtype)

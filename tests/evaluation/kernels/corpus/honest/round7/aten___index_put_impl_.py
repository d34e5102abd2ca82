# aten::_index_put_impl_  (self[indices] = values, or += with accumulate), in place.
#
# Launch sequence:
#   1. _index_offset_kernel (once per indexed dim): off[m] += wrap(idx_k[m]) * self.stride(d_k)
#   2. _claim_kernel: owner[off[m]] = max m hitting that slot  (gives "last write wins" for
#      duplicate index tuples, and one owner per slot for the bf16 accumulate path)
#   3. _scatter_kernel over (index tuple m, non-indexed position p):
#        assign      -> only the owner of the slot stores
#        accumulate  -> fp32/fp64/ints: tl.atomic_add straight into self.
#                       fp16/bf16: eager CPU adds duplicates one after the other in the
#                       storage dtype (rounding after each add).  For moderate M we rank
#                       duplicates (_rank_kernel, O(M^2) compares) and launch one
#                       non-atomic "level" per duplicate rank, reproducing that order.
#                       For large M: fp16 atomics / bf16 through an fp32 delta buffer
#                       (bf16 atomics are not supported) applied by _apply_delta_kernel.
import math
from typing import List, Optional

import torch
import triton
import triton.language as tl

MAX_REST = 4
RANK_LIMIT = 16384  # duplicate ranking is O(M^2); above this use atomics / fp32 delta


@triton.jit
def _rne_bf16(x):
    # fp32 -> bf16-representable fp32 with round-to-nearest-even (interpreter cast truncates)
    bits = x.to(tl.uint32, bitcast=True)
    bits = bits + (((bits >> 16) & 1) + 0x7FFF)
    bits = (bits >> 16) << 16
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _index_offset_kernel(idx_ptr, idx_stride, off_ptr, M, dim_size, dim_stride, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    m = pid * BLOCK + tl.arange(0, BLOCK)
    mask = m < M
    tmp0 = tl.load(idx_ptr + m * idx_stride, mask=mask, other=0).to(tl.int64)
    tmp1 = tl.where(tmp0 < 0, tmp0 + dim_size, tmp0)
    tl.device_assert((tmp1 >= 0) & (tmp1 < dim_size), "index out of bounds")
    tmp2 = tl.load(off_ptr + m, mask=mask, other=0)
    tl.store(off_ptr + m, tmp2 + tmp1 * dim_stride, mask=mask)


@triton.jit
def _claim_kernel(off_ptr, owner_ptr, M, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    m = pid * BLOCK + tl.arange(0, BLOCK)
    mask = m < M
    o = tl.load(off_ptr + m, mask=mask, other=0)
    tl.atomic_max(owner_ptr + o, m.to(tl.int32), mask=mask)


@triton.jit
def _rank_kernel(off_ptr, rank_ptr, maxrank_ptr, M, BLOCK_M: tl.constexpr, BLOCK_J: tl.constexpr):
    # rank[m] = #{j < m : off[j] == off[m]}
    pid = tl.program_id(0).to(tl.int64)
    m = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    mmask = m < M
    om = tl.load(off_ptr + m, mask=mmask, other=-1)
    cnt = tl.zeros([BLOCK_M], dtype=tl.int32)
    hi = tl.minimum((pid + 1) * BLOCK_M, M)
    for j0 in range(0, hi, BLOCK_J):
        j = j0 + tl.arange(0, BLOCK_J)
        oj = tl.load(off_ptr + j, mask=j < M, other=-2)
        eq = (om[:, None] == oj[None, :]) & (j[None, :] < m[:, None])
        cnt += tl.sum(eq.to(tl.int32), axis=1)
    tl.store(rank_ptr + m, cnt, mask=mmask)
    tl.atomic_max(maxrank_ptr, tl.max(tl.where(mmask, cnt, 0), axis=0))


@triton.jit
def _rest_offset(p, rs1, rs2, rs3, rt0, rt1, rt2, rt3):
    r3 = p % rs3
    q = p // rs3
    r2 = q % rs2
    q = q // rs2
    r1 = q % rs1
    r0 = q // rs1
    return r0 * rt0 + r1 * rt1 + r2 * rt2 + r3 * rt3


@triton.jit
def _scatter_kernel(self_ptr, val_ptr, off_ptr, owner_ptr, delta_ptr,
                    M, P, vs0, vs1,
                    rs1, rs2, rs3, rt0, rt1, rt2, rt3,
                    level, rank_ptr,
                    MODE: tl.constexpr,  # 0 assign, 1 atomic accumulate, 2 via fp32 delta, 3 rank level
                    OUT_BF16: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_P: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_p = tl.program_id(1).to(tl.int64)
    m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    mmask = m < M
    pmask = p < P
    base = tl.load(off_ptr + m, mask=mmask, other=0)
    roff = _rest_offset(p, rs1, rs2, rs3, rt0, rt1, rt2, rt3)
    dst = base[:, None] + roff[None, :]
    mask = mmask[:, None] & pmask[None, :]
    v = tl.load(val_ptr + m[:, None] * vs0 + p[None, :] * vs1, mask=mask, other=0)
    if MODE == 0:
        owner = tl.load(owner_ptr + base, mask=mmask, other=-1)
        keep = owner.to(tl.int64) == m
        tl.store(self_ptr + dst, v.to(self_ptr.dtype.element_ty), mask=mask & keep[:, None])
    elif MODE == 1:
        tl.atomic_add(self_ptr + dst, v.to(self_ptr.dtype.element_ty), mask=mask)
    elif MODE == 2:
        tl.atomic_add(delta_ptr + dst, v.to(tl.float32), mask=mask)
    else:
        rank = tl.load(rank_ptr + m, mask=mmask, other=-1)
        lmask = mask & (rank == level)[:, None]
        tmp0 = tl.load(self_ptr + dst, mask=lmask, other=0).to(tl.float32)
        tmp1 = tmp0 + v.to(self_ptr.dtype.element_ty).to(tl.float32)
        if OUT_BF16:
            tmp1 = _rne_bf16(tmp1)
        tl.store(self_ptr + dst, tmp1.to(self_ptr.dtype.element_ty), mask=lmask)


@triton.jit
def _apply_delta_kernel(self_ptr, off_ptr, owner_ptr, delta_ptr, M, P,
                        rs1, rs2, rs3, rt0, rt1, rt2, rt3,
                        OUT_BF16: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_P: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    pid_p = tl.program_id(1).to(tl.int64)
    m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    p = pid_p * BLOCK_P + tl.arange(0, BLOCK_P)
    mmask = m < M
    pmask = p < P
    base = tl.load(off_ptr + m, mask=mmask, other=0)
    owner = tl.load(owner_ptr + base, mask=mmask, other=-1)
    keep = mmask & (owner.to(tl.int64) == m)
    roff = _rest_offset(p, rs1, rs2, rs3, rt0, rt1, rt2, rt3)
    dst = base[:, None] + roff[None, :]
    mask = keep[:, None] & pmask[None, :]
    tmp0 = tl.load(self_ptr + dst, mask=mask, other=0).to(tl.float32)
    tmp1 = tl.load(delta_ptr + dst, mask=mask, other=0)
    tmp2 = tmp0 + tmp1
    if OUT_BF16:
        tmp2 = _rne_bf16(tmp2)
    tl.store(self_ptr + dst, tmp2.to(self_ptr.dtype.element_ty), mask=mask)


def _fold_rest(sizes, strides):
    s_out, t_out = [], []
    for s, t in zip(sizes, strides):
        if s == 1:
            continue
        if s_out and t_out[-1] == s * t:
            s_out[-1] *= s
            t_out[-1] = t
        else:
            s_out.append(s)
            t_out.append(t)
    if len(s_out) > MAX_REST:
        raise NotImplementedError("index_put: too many non-indexed dims")
    pad = MAX_REST - len(s_out)
    return [1] * pad + s_out, [0] * pad + t_out


def _extent(sizes, strides) -> int:
    if any(s == 0 for s in sizes):
        return 1
    return 1 + sum((s - 1) * t for s, t in zip(sizes, strides))


def _index_put_impl_(self: torch.Tensor, indices: List[Optional[torch.Tensor]], values: torch.Tensor,
                     accumulate: bool = False, unsafe: bool = False) -> torch.Tensor:
    ndim = self.dim()
    idx_list = list(indices)
    if len(idx_list) > ndim:
        raise IndexError("too many indices for tensor")
    idx_list = idx_list + [None] * (ndim - len(idx_list))
    for t in idx_list:
        if t is not None and (t.dtype == torch.bool or t.dtype == torch.uint8):
            raise NotImplementedError("index_put: boolean mask indices are not supported here")

    dims = [d for d, t in enumerate(idx_list) if t is not None]
    idx_tensors = [idx_list[d] for d in dims]
    bshape = list(torch.broadcast_shapes(*[t.shape for t in idx_tensors])) if idx_tensors else []
    M = math.prod(bshape)
    rest = [d for d in range(ndim) if d not in dims]
    rest_sizes = [self.size(d) for d in rest]
    rest_strides = [self.stride(d) for d in rest]
    P = math.prod(rest_sizes)

    # shape of self[indices]: the broadcast index block sits where the indexed dims were
    # when they are adjacent, otherwise it goes first
    adjacent = dims == list(range(dims[0], dims[-1] + 1)) if dims else True
    bpos = dims[0] if (dims and adjacent) else 0
    res_shape = [self.size(d) for d in rest[:bpos]] + bshape + [self.size(d) for d in rest[bpos:]]
    nb = len(bshape)
    if M == 0 or P == 0:
        # nothing to write; still launch (fully masked)
        dummy = torch.zeros(1, dtype=torch.int64, device=self.device)
        _index_offset_kernel[(1,)](dummy, 0, dummy, 0, 1, 0, BLOCK=16)
        return self

    vals = values.expand(res_shape)
    perm = list(range(bpos, bpos + nb)) + [i for i in range(len(res_shape)) if not (bpos <= i < bpos + nb)]
    vals = vals.permute(perm).reshape(M, P)

    dev = self.device
    off = torch.zeros(M, dtype=torch.int64, device=dev)
    BLOCK = 256 if M <= 256 else 1024
    g1 = (triton.cdiv(M, BLOCK),)
    for d, t in zip(dims, idx_tensors):
        t_flat = t.to(device=dev).expand(bshape).reshape(M)
        _index_offset_kernel[g1](t_flat, t_flat.stride(0), off, M, self.size(d), self.stride(d), BLOCK=BLOCK)

    rs, rt = _fold_rest(rest_sizes, rest_strides)
    BLOCK_P = min(triton.next_power_of_2(P), 1024)
    BLOCK_M = max(1, min(triton.next_power_of_2(M), 4096 // BLOCK_P))
    g2 = (triton.cdiv(M, BLOCK_M), triton.cdiv(P, BLOCK_P))

    reduced = self.dtype in (torch.float16, torch.bfloat16)
    use_levels = accumulate and reduced and M <= RANK_LIMIT
    use_delta = accumulate and self.dtype == torch.bfloat16 and not use_levels
    is_bf16 = self.dtype == torch.bfloat16
    common = (M, P, vals.stride(0), vals.stride(1), rs[1], rs[2], rs[3], rt[0], rt[1], rt[2], rt[3])

    if (not accumulate) or use_delta:
        idx_extent = _extent([self.size(d) for d in dims], [self.stride(d) for d in dims])
        owner = torch.full((idx_extent,), -1, dtype=torch.int32, device=dev)
        _claim_kernel[g1](off, owner, M, BLOCK=BLOCK)
    else:
        owner = off  # unused placeholder pointer

    if not accumulate:
        _scatter_kernel[g2](self, vals, off, owner, off, *common, 0, off,
                            MODE=0, OUT_BF16=is_bf16, BLOCK_M=BLOCK_M, BLOCK_P=BLOCK_P)
    elif use_levels:
        rank = torch.empty(M, dtype=torch.int32, device=dev)
        maxrank = torch.zeros(1, dtype=torch.int32, device=dev)
        RB = 64
        _rank_kernel[(triton.cdiv(M, RB),)](off, rank, maxrank, M, BLOCK_M=RB, BLOCK_J=256)
        levels = int(maxrank.item()) + 1
        for level in range(levels):
            _scatter_kernel[g2](self, vals, off, owner, off, *common, level, rank,
                                MODE=3, OUT_BF16=is_bf16, BLOCK_M=BLOCK_M, BLOCK_P=BLOCK_P)
    elif not use_delta:
        _scatter_kernel[g2](self, vals, off, owner, off, *common, 0, off,
                            MODE=1, OUT_BF16=is_bf16, BLOCK_M=BLOCK_M, BLOCK_P=BLOCK_P)
    else:
        delta = torch.zeros(_extent(list(self.shape), list(self.stride())), dtype=torch.float32, device=dev)
        _scatter_kernel[g2](self, vals, off, owner, delta, *common, 0, off,
                            MODE=2, OUT_BF16=is_bf16, BLOCK_M=BLOCK_M, BLOCK_P=BLOCK_P)
        _apply_delta_kernel[g2](self, off, owner, delta, M, P,
                                rs[1], rs[2], rs[3], rt[0], rt[1], rt[2], rt[3],
                                OUT_BF16=is_bf16, BLOCK_M=BLOCK_M, BLOCK_P=BLOCK_P)
    return self

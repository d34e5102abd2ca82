"""torch.matmul in Triton.

* vector products (dot, mv, vm and batched variants where M == 1 or N == 1)
  go through a GEMV kernel, optionally split along K with a second reduction
  kernel;
* everything else goes through a tiled, autotuned tl.dot GEMM with broadcast
  batch dims (batch strides of both operands may be 0);
* float32 uses input_precision="ieee" (no TF32); float64 and integer
  inputs use a plain multiply-accumulate tile loop instead of tl.dot.
"""
import os

import torch
import triton
import triton.language as tl

_NUM_SMS = 132
# The CPU interpreter's tl.dot mishandles bfloat16 operands; there (only) they are
# widened to fp32 before the dot. Compiled GPU code always uses the native bf16 MMA.
_INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") == "1"


# ---------------------------------------------------------------------------
# GEMM
# ---------------------------------------------------------------------------

def _gemm_configs():
    cfgs = [
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=8, num_stages=3),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=4),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=3),
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8}, num_warps=4, num_stages=3),
    ]
    if os.environ.get("TRITON_INTERPRET", "0") == "1" or not torch.cuda.is_available():
        # the interpreter cannot time candidates; one modest tile is enough there
        return [triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4})]
    return cfgs


@triton.jit
def _batch_offsets(bid, sizes, a_str, b_str, c_str, NB: tl.constexpr):
    rem = bid.to(tl.int64)
    a_off = rem * 0
    b_off = rem * 0
    c_off = rem * 0
    for d in tl.static_range(NB - 1, -1, -1):
        c = rem % sizes[d]
        rem = rem // sizes[d]
        a_off += c * a_str[d]
        b_off += c * b_str[d]
        c_off += c * c_str[d]
    return a_off, b_off, c_off


@triton.jit
def _gemm_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    s_am, s_ak, s_bk, s_bn, s_cm, s_cn,
    batch_sizes, a_bstr, b_bstr, c_bstr,
    NB: tl.constexpr, USE_DOT: tl.constexpr, IEEE: tl.constexpr, ACC_T: tl.constexpr,
    WIDEN: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles = tiles_m * tiles_n
    bid = pid // tiles
    t = pid % tiles
    # grouped ordering so neighbouring programs share rows of A in L2
    per_group = GROUP_M * tiles_n
    first_m = (t // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pm = first_m + (t % per_group) % group_rows
    pn = (t % per_group) // group_rows

    a_off, b_off, c_off = _batch_offsets(bid, batch_sizes, a_bstr, b_bstr, c_bstr, NB)

    rm = (pm * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    rn = (pn * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    rk = tl.arange(0, BLOCK_K).to(tl.int64)
    m_ok = rm < M
    n_ok = rn < N
    a_ptrs = a_ptr + a_off + rm[:, None] * s_am + rk[None, :] * s_ak
    b_ptrs = b_ptr + b_off + rk[:, None] * s_bk + rn[None, :] * s_bn

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=ACC_T)
    for k0 in range(0, K, BLOCK_K):
        k_ok = (rk + k0) < K
        a = tl.load(a_ptrs, mask=m_ok[:, None] & k_ok[None, :], other=0)
        b = tl.load(b_ptrs, mask=k_ok[:, None] & n_ok[None, :], other=0)
        if WIDEN:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        if USE_DOT:
            if IEEE:
                acc = tl.dot(a, b, acc, input_precision="ieee")
            else:
                acc = tl.dot(a, b, acc)
        else:
            acc += tl.sum(a.to(ACC_T)[:, :, None] * b.to(ACC_T)[None, :, :], axis=1)
        a_ptrs += BLOCK_K * s_ak
        b_ptrs += BLOCK_K * s_bk

    c_ptrs = c_ptr + c_off + rm[:, None] * s_cm + rn[None, :] * s_cn
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=m_ok[:, None] & n_ok[None, :])


_gemm_autotuned = triton.autotune(configs=_gemm_configs(), key=["M", "N", "K", "NB"])(_gemm_kernel)


# ---------------------------------------------------------------------------
# GEMV (+ split-K reduction)
# ---------------------------------------------------------------------------

@triton.jit
def _gemv_kernel(
    mat_ptr, vec_ptr, out_ptr, part_ptr,
    R, K, s_r, s_k, s_vk,
    batch_sizes, mat_bstr, vec_bstr, out_bstr,
    n_rblk, n_split, k_per_split,
    NB: tl.constexpr, SPLIT: tl.constexpr, ACC_T: tl.constexpr,
    BLOCK_R: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # out[batch, r] = sum_k mat[batch, r, k] * vec[batch, k]
    pid = tl.program_id(0)
    split = pid % n_split
    t = pid // n_split
    rblk = t % n_rblk
    bid = t // n_rblk
    m_off, v_off, o_off = _batch_offsets(bid, batch_sizes, mat_bstr, vec_bstr, out_bstr, NB)

    rows = (rblk * BLOCK_R + tl.arange(0, BLOCK_R)).to(tl.int64)
    r_ok = rows < R
    k_lo = split.to(tl.int64) * k_per_split
    acc = tl.zeros([BLOCK_R, BLOCK_K], dtype=ACC_T)
    for k0 in range(0, k_per_split, BLOCK_K):
        kk = k_lo + k0 + tl.arange(0, BLOCK_K)
        k_ok = (kk < K) & (kk < k_lo + k_per_split)
        mv = tl.load(mat_ptr + m_off + rows[:, None] * s_r + kk[None, :] * s_k,
                     mask=r_ok[:, None] & k_ok[None, :], other=0)
        vv = tl.load(vec_ptr + v_off + kk * s_vk, mask=k_ok, other=0)
        acc += mv.to(ACC_T) * vv.to(ACC_T)[None, :]
    res = tl.sum(acc, axis=1)
    if SPLIT:
        lin = bid.to(tl.int64) * R + rows
        tl.store(part_ptr + lin * n_split + split, res, mask=r_ok)
    else:
        tl.store(out_ptr + o_off + rows, res.to(out_ptr.dtype.element_ty), mask=r_ok)


@triton.jit
def _splitk_reduce_kernel(part_ptr, out_ptr, n_out, n_split,
                          BLOCK: tl.constexpr, BLOCK_S: tl.constexpr):
    o = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    o_ok = o < n_out
    s = tl.arange(0, BLOCK_S)
    acc = tl.zeros([BLOCK, BLOCK_S], dtype=part_ptr.dtype.element_ty)
    for s0 in range(0, n_split, BLOCK_S):
        m = o_ok[:, None] & ((s0 + s) < n_split)[None, :]
        acc += tl.load(part_ptr + o[:, None] * n_split + (s0 + s)[None, :], mask=m, other=0)
    tl.store(out_ptr + o, tl.sum(acc, axis=1).to(out_ptr.dtype.element_ty), mask=o_ok)


@triton.jit
def _noop_kernel(out_ptr, n, BLOCK: tl.constexpr):
    # used for empty outputs only: stores nothing when n == 0
    o = tl.arange(0, BLOCK)
    tl.store(out_ptr + o, tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty), mask=o < n)


# ---------------------------------------------------------------------------
# host side
# ---------------------------------------------------------------------------

def _bcast_batch_strides(t, batch):
    """Strides of t's batch dims viewed with the broadcast batch shape (0 where broadcast)."""
    tb = t.shape[:-2]
    pad = len(batch) - len(tb)
    return [0 if (i < pad or tb[i - pad] == 1) else t.stride(i - pad) for i in range(len(batch))]


def _coalesce(sizes, stride_lists):
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


def _acc_type(dtype):
    if dtype == torch.float64:
        return tl.float64
    if dtype.is_floating_point:
        return tl.float32
    return tl.int64


def _gemv(mat_s, vec_s, R, K, batch_sizes, mat_b, vec_b, out_b, n_batch, out, acc_t, part_dtype):
    s_r, s_k, _ = mat_s
    block_r = min(32, triton.next_power_of_2(max(R, 1)))
    block_k = max(32, min(triton.next_power_of_2(max(K, 1)), 4096 // block_r, 1024))
    n_rblk = triton.cdiv(R, block_r)
    progs = n_batch * n_rblk
    split = 1
    if progs < 2 * _NUM_SMS and K > 2 * block_k:
        split = min(triton.cdiv(K, block_k), triton.cdiv(2 * _NUM_SMS, progs))
    k_per_split = triton.cdiv(triton.cdiv(max(K, 1), split), block_k) * block_k
    split = max(1, triton.cdiv(K, k_per_split))
    part = out
    if split > 1:
        part = torch.empty((n_batch * R, split), dtype=part_dtype, device=out.device)
    _gemv_kernel[(progs * split,)](
        mat_s[2], vec_s[1], out, part,
        R, K, s_r, s_k, vec_s[0],
        batch_sizes, mat_b, vec_b, out_b,
        n_rblk, split, k_per_split,
        NB=len(batch_sizes), SPLIT=split > 1, ACC_T=acc_t,
        BLOCK_R=block_r, BLOCK_K=block_k, num_warps=4,
    )
    if split > 1:
        n_out = n_batch * R
        _splitk_reduce_kernel[(triton.cdiv(n_out, 256),)](
            part, out, n_out, split, BLOCK=256, BLOCK_S=triton.next_power_of_2(min(split, 32)))


def matmul(self, other):
    a, b = self, other
    if a.dim() == 0 or b.dim() == 0:
        raise RuntimeError("both arguments to matmul need to be at least 1D")
    if a.dtype != b.dtype:
        raise RuntimeError("expected both matmul operands to have the same dtype")
    A = a.unsqueeze(0) if a.dim() == 1 else a      # [..., M, K]
    B = b.unsqueeze(-1) if b.dim() == 1 else b     # [..., K, N]
    M, K = A.shape[-2], A.shape[-1]
    K2, N = B.shape[-2], B.shape[-1]
    if K != K2:
        raise RuntimeError(f"matmul: shapes cannot be multiplied ({M}x{K} and {K2}x{N})")
    batch = list(torch.broadcast_shapes(A.shape[:-2], B.shape[:-2]))
    out_shape = list(batch)
    if a.dim() > 1:
        out_shape.append(M)
    if b.dim() > 1:
        out_shape.append(N)
    out = torch.empty(out_shape, dtype=a.dtype, device=a.device)
    if out.numel() == 0:
        _noop_kernel[(1,)](out, 0, BLOCK=16)
        return out
    C = out.view(batch + [M, N])
    n_batch = 1
    for s in batch:
        n_batch *= s

    a_b = _bcast_batch_strides(A, batch)
    b_b = _bcast_batch_strides(B, batch)
    c_b = list(C.stride()[:-2])
    sizes, (a_b, b_b, c_b) = _coalesce(batch, [a_b, b_b, c_b])
    acc_t = _acc_type(a.dtype)
    part_dtype = torch.float64 if acc_t == tl.float64 else (torch.int64 if acc_t == tl.int64 else torch.float32)

    if N == 1:
        # out[.., m] = A[.., m, :] . B[.., :, 0]
        _gemv((A.stride(-2), A.stride(-1), A), (B.stride(-2), B), M, K,
              sizes, a_b, b_b, c_b, n_batch, C, acc_t, part_dtype)
        return out
    if M == 1:
        # out[.., n] = B[.., :, n] . A[.., 0, :]
        _gemv((B.stride(-1), B.stride(-2), B), (A.stride(-1), A), N, K,
              sizes, b_b, a_b, c_b, n_batch, C, acc_t, part_dtype)
        return out

    use_dot = a.dtype in (torch.float16, torch.bfloat16, torch.float32)
    args = (A, B, C, M, N, K,
            A.stride(-2), A.stride(-1), B.stride(-2), B.stride(-1), C.stride(-2), C.stride(-1),
            sizes, a_b, b_b, c_b)
    widen = _INTERPRETING and a.dtype == torch.bfloat16
    flags = dict(NB=len(sizes), USE_DOT=use_dot, IEEE=a.dtype == torch.float32 or widen, ACC_T=acc_t,
                 WIDEN=widen)
    if use_dot:
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"]) * triton.cdiv(N, meta["BLOCK_N"]) * n_batch,)
        _gemm_autotuned[grid](*args, **flags)
    else:
        bm, bn, bk = 32, 32, 8
        grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn) * n_batch,)
        _gemm_kernel[grid](*args, **flags, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=8, num_warps=4)
    return out

"""cublasDgemmStridedBatched: C_b = alpha*op(A_b)*op(B_b) + beta*C_b, float64.

Column-major storage on raw memory:
    op(A)(i, l) = A[b*strideA + i*s_am + l*s_ak]
        'N': (s_am, s_ak) = (1, lda)      'T'/'C': (lda, 1)
    op(B)(l, j) = B[b*strideB + l*s_bk + j*s_bn]
        'N': (s_bk, s_bn) = (1, ldb)      'T'/'C': (ldb, 1)
    C(i, j)     = C[b*strideC + i + j*ldc]
Grid: (tiles of C, batch).  Tiles are visited in GROUP_M-row groups so that
neighbouring programs share panels of A/B in L2.
alpha/beta travel in a float64 tensor (a Python float argument would be
narrowed to float32 by Triton).
"""
import os

import torch
import triton
import triton.language as tl

_INTERPRET = os.environ.get("TRITON_INTERPRET", "0") == "1"


def _configs():
    if _INTERPRET:
        return [triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "GROUP_M": 4}, num_warps=4)]
    out = []
    for bm, bn, bk, nw, ns in (
        (64, 64, 16, 4, 3),
        (128, 64, 16, 8, 3),
        (64, 128, 16, 8, 3),
        (32, 32, 32, 4, 2),
        (16, 16, 16, 2, 2),
    ):
        out.append(triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                                 num_warps=nw, num_stages=ns))
    return out


def _bucket(v: int) -> int:
    return triton.next_power_of_2(max(int(v), 1))


# C is read (beta) and written in place: restore it after every tuning trial.
@triton.autotune(configs=_configs(), key=["m_b", "n_b", "k_b", "batch_b"], restore_value=["c_ptr"])
@triton.jit
def _dgemm_sb_kernel(
    a_ptr, b_ptr, c_ptr, ab_ptr,
    m, n, k,
    s_am, s_ak, s_bk, s_bn, ldc,
    stride_a, stride_b, stride_c,
    m_b, n_b, k_b, batch_b,
    HAS_ALPHA: tl.constexpr, READ_C: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):
    pid = tl.program_id(0)
    batch = tl.program_id(1).to(tl.int64)

    # clamp to 1 so an empty (quick-return) launch never divides by zero
    num_m = tl.maximum(tl.cdiv(m, BLOCK_M), 1)
    num_n = tl.maximum(tl.cdiv(n, BLOCK_N), 1)
    group_span = GROUP_M * num_n
    first_m = (pid // group_span) * GROUP_M
    rows_in_group = tl.minimum(num_m - first_m, GROUP_M)
    pid_m = first_m + (pid % group_span) % rows_in_group
    pid_n = (pid % group_span) // rows_in_group

    offs_m = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M)).to(tl.int64)
    offs_n = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N)).to(tl.int64)
    offs_k = tl.arange(0, BLOCK_K).to(tl.int64)
    mmask = offs_m < m
    nmask = offs_n < n

    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float64)
    if HAS_ALPHA:
        a_base = a_ptr + batch * stride_a
        b_base = b_ptr + batch * stride_b
        for k0 in range(0, k, BLOCK_K):
            kk = k0 + offs_k
            kmask = kk < k
            a = tl.load(a_base + offs_m[:, None] * s_am + kk[None, :] * s_ak,
                        mask=mmask[:, None] & kmask[None, :], other=0.0)
            b = tl.load(b_base + kk[:, None] * s_bk + offs_n[None, :] * s_bn,
                        mask=kmask[:, None] & nmask[None, :], other=0.0)
            acc = tl.dot(a, b, acc, input_precision="ieee", out_dtype=tl.float64)

    alpha = tl.load(ab_ptr)
    beta = tl.load(ab_ptr + 1)
    c_addr = c_ptr + batch * stride_c + offs_m[:, None] + offs_n[None, :] * ldc
    cmask = mmask[:, None] & nmask[None, :]
    if HAS_ALPHA:
        out = alpha * acc
    else:
        out = acc  # zeros
    if READ_C:
        c_old = tl.load(c_addr, mask=cmask, other=0.0)
        if HAS_ALPHA:
            out = out + beta * c_old
        else:
            out = beta * c_old
    tl.store(c_addr, out, mask=cmask)


def _is_trans(op) -> bool:
    if isinstance(op, str):
        return op.strip().upper()[0] in ("T", "C")
    return int(op) != 0


def cublasDgemmStridedBatched(transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
                              beta, C, ldc, strideC, batchCount):
    alpha = float(alpha)
    beta = float(beta)
    s_am, s_ak = (lda, 1) if _is_trans(transa) else (1, lda)
    s_bk, s_bn = (ldb, 1) if _is_trans(transb) else (1, ldb)

    quick = (m <= 0 or n <= 0 or batchCount <= 0
             or ((alpha == 0.0 or k <= 0) and beta == 1.0))
    m_e, n_e, k_e = (0, 0, 0) if quick else (m, n, max(k, 0))
    batches = 1 if quick else batchCount
    use_ab = alpha != 0.0 and k_e > 0

    ab = torch.tensor([alpha, beta], dtype=torch.float64, device=C.device)
    grid = lambda meta: (
        max(1, triton.cdiv(m_e, meta["BLOCK_M"]) * triton.cdiv(n_e, meta["BLOCK_N"])),
        batches,
    )
    _dgemm_sb_kernel[grid](
        A, B, C, ab,
        m_e, n_e, k_e,
        s_am, s_ak, s_bk, s_bn, ldc,
        strideA, strideB, strideC,
        _bucket(m_e), _bucket(n_e), _bucket(k_e), _bucket(batches),
        HAS_ALPHA=use_ab, READ_C=beta != 0.0,
    )
    return C

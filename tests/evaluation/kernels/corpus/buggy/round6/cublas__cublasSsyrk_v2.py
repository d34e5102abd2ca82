# BUG: for trans=1 the wrapper also swaps C's row/column strides (treating the output as transposed), so the update lands in the opposite triangle to uplo; any trans=1 case with n > 1 exposes it (trans=0 and n=1 are correct).
import torch
import triton
import triton.language as tl


# C(i, j) lives at C + i + j*ldc (column-major); only the `uplo` triangle is
# read or written.  op(A)(i, l) = A(i, l) for trans='N' (A is n x k) and
# A(l, i) for trans='T' (A is k x n); both are expressed through a pair of
# (row-of-op(A), k) strides so a single kernel covers both cases.
@triton.autotune(configs=[triton.Config({"BLOCK_N": 32, "BLOCK_K": 32})],
                 key=["n", "k"])
@triton.jit
def _ssyrk_kernel(A, C, n, k, alpha, beta,
                  stride_ai, stride_ak, stride_ci, stride_cj,
                  LOWER: tl.constexpr, BETA_ZERO: tl.constexpr, SKIP_AB: tl.constexpr,
                  BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_i = tl.program_id(0)
    pid_j = tl.program_id(1)
    i0 = pid_i * BLOCK_N
    j0 = pid_j * BLOCK_N
    # tiles lying strictly in the other triangle have nothing to do
    if LOWER:
        if i0 + BLOCK_N - 1 < j0:
            return
    else:
        if j0 + BLOCK_N - 1 < i0:
            return
    offs_i = (i0 + tl.arange(0, BLOCK_N)).to(tl.int64)
    offs_j = (j0 + tl.arange(0, BLOCK_N)).to(tl.int64)
    offs_k = tl.arange(0, BLOCK_K).to(tl.int64)
    mask_i = offs_i < n
    mask_j = offs_j < n

    acc = tl.zeros([BLOCK_N, BLOCK_N], dtype=tl.float32)
    if not SKIP_AB:
        for kk in range(0, k, BLOCK_K):
            ks = kk + offs_k
            mk = ks < k
            a_ptrs = A + offs_i[:, None] * stride_ai + ks[None, :] * stride_ak    # [BN, BK]
            bt_ptrs = A + ks[:, None] * stride_ak + offs_j[None, :] * stride_ai   # [BK, BN]
            a = tl.load(a_ptrs, mask=mask_i[:, None] & mk[None, :], other=0.0)
            bt = tl.load(bt_ptrs, mask=mk[:, None] & mask_j[None, :], other=0.0)
            acc += tl.dot(a, bt, input_precision="ieee")

    if LOWER:
        tri = offs_i[:, None] >= offs_j[None, :]
    else:
        tri = offs_i[:, None] <= offs_j[None, :]
    cmask = mask_i[:, None] & mask_j[None, :] & tri
    c_ptrs = C + offs_i[:, None] * stride_ci + offs_j[None, :] * stride_cj
    if SKIP_AB:
        res = tl.zeros([BLOCK_N, BLOCK_N], dtype=tl.float32)
    else:
        res = alpha * acc
    if not BETA_ZERO:
        c = tl.load(c_ptrs, mask=cmask, other=0.0)
        res += beta * c
    tl.store(c_ptrs, res, mask=cmask)


def cublasSsyrk_v2(uplo, trans, n, k, alpha, A, lda, beta, C, ldc):
    n = int(n)
    k = int(k)
    alpha = float(alpha)
    beta = float(beta)
    if isinstance(uplo, str):
        lower = uplo.upper().startswith("L")
    else:
        lower = int(uplo) == 0
    if isinstance(trans, str):
        t = trans.upper()[0] != "N"
    else:
        t = int(trans) != 0       # 1 = 'T', 2 = 'C' (same for real data)
    if t:      # A is k x n: work on the transposed problem, C^T = A^T A
        stride_ai, stride_ak = lda, 1
        stride_ci, stride_cj = ldc, 1
    else:      # A is n x k: op(A)(i, l) = A[i + l*lda]
        stride_ai, stride_ak = 1, lda
        stride_ci, stride_cj = 1, ldc
    skip_ab = (alpha == 0.0) or (k <= 0)
    grid = lambda meta: (max(1, triton.cdiv(n, meta["BLOCK_N"])),
                         max(1, triton.cdiv(n, meta["BLOCK_N"])))
    _ssyrk_kernel[grid](A, C, n, max(k, 0), alpha, beta, stride_ai, stride_ak, stride_ci, stride_cj,
                        LOWER=lower, BETA_ZERO=(beta == 0.0), SKIP_AB=skip_ab)
    return C

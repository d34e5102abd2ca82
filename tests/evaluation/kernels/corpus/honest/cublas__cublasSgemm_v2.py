"""cublasSgemm_v2: C = alpha * op(A) @ op(B) + beta * C, all column-major with leading dimensions.

Column-major X with leading dim ld is, element for element, the row-major matrix X^T with row stride
ld; so op(A)(i, p) lives at A + i*sa_i + p*sa_p with (sa_i, sa_p) = (1, lda) for 'N' and (lda, 1) for
'T'/'C' (real data: 'C' == 'T'). The tile loop is the usual Triton GEMM, fp32 with IEEE dots."""
import triton
import triton.language as tl


def _op_strides(trans: str, ld: int) -> tuple[int, int]:
    trans = trans.upper() if isinstance(trans, str) else "NTC"[int(trans)]
    return (1, ld) if trans == "N" else (ld, 1)


@triton.jit
def sgemm_kernel(A, B, C, M, N, K, alpha, beta,
                 sa_i, sa_p, sb_p, sb_j, ldc,
                 BETA_ZERO: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        kk = k0 + rk
        a = tl.load(A + rm[:, None] * sa_i + kk[None, :] * sa_p, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(B + kk[:, None] * sb_p + rn[None, :] * sb_j, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
    c_ptrs = C + rm[:, None] + rn[None, :] * ldc
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    result = alpha * acc
    if not BETA_ZERO:
        result += beta * tl.load(c_ptrs, mask=c_mask, other=0.0)
    tl.store(c_ptrs, result, mask=c_mask)


def cublasSgemm_v2(transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc):
    if m <= 0 or n <= 0:
        return C
    sa_i, sa_p = _op_strides(transa, lda)
    sb_p, sb_j = _op_strides(transb, ldb)
    BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 16
    sgemm_kernel[(triton.cdiv(m, BLOCK_M), triton.cdiv(n, BLOCK_N))](
        A, B, C, m, n, k, float(alpha), float(beta), sa_i, sa_p, sb_p, sb_j, ldc,
        BETA_ZERO=beta == 0, BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K)
    return C

import triton
import triton.language as tl

CUBLAS_OP_N, CUBLAS_OP_T = 0, 1


@triton.jit
def sgeam_kernel(A, B, C, m, n, alpha, beta, lda, ldb, ldc,
                 TRANS_A: tl.constexpr, TRANS_B: tl.constexpr, READ_B: tl.constexpr,
                 BM: tl.constexpr, BN: tl.constexpr):
    """C(i, j) = alpha * op(A)(i, j) + beta * op(B)(i, j), column-major with leading dims."""
    i = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    j = tl.program_id(1) * BN + tl.arange(0, BN)[None, :]
    inside = (i < m) & (j < n)
    if TRANS_A:
        a = tl.load(A + j + i * lda, mask=inside, other=0.0)
    else:
        a = tl.load(A + i + j * lda, mask=inside, other=0.0)
    c = alpha * a
    if READ_B:
        if TRANS_B:
            b = tl.load(B + j + i * ldb, mask=inside, other=0.0)
        else:
            b = tl.load(B + i + j * ldb, mask=inside, other=0.0)
        c += beta * b
    tl.store(C + i + j * ldc, c, mask=inside)


def cublasSgeam(transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc):
    if m <= 0 or n <= 0:
        return C
    BM, BN = 32, 16
    sgeam_kernel[(triton.cdiv(m, BM), triton.cdiv(n, BN))](
        A, B, C, m, n, float(alpha), float(beta), lda, ldb, ldc,
        TRANS_A=int(transa) != CUBLAS_OP_N, TRANS_B=int(transb) != CUBLAS_OP_N, READ_B=beta != 0,
        BM=BM, BN=BN)
    return C

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_x_kernel(x_ptr, tmp_ptr, n, incx, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs.to(tl.int64) * incx, mask=mask, other=0.0)
    tl.store(tmp_ptr + offs, v, mask=mask)


@triton.jit
def _tbmv_kernel(
    a_ptr, tmp_ptr, x_ptr, n, k, lda, incx,
    UPPER: tl.constexpr, TRANS: tl.constexpr, UNIT: tl.constexpr,
    BLOCK: tl.constexpr,
):
    # y_i = sum_j op(A)(i, j) * x_j over the band, x_j read from the saved copy tmp
    pid = tl.program_id(0)
    i = pid * BLOCK + tl.arange(0, BLOCK)
    imask = i < n
    i64 = i.to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for d in range(0, k + 1):
        if TRANS == 0:
            # y_i += A(i, j) x_j, A(i, j) stored in column j
            if UPPER:
                j = i64 + d
                brow = k - d
            else:
                j = i64 - d
                brow = d
            valid = imask & (j >= 0) & (j < n)
            a = tl.load(a_ptr + brow + j * lda, mask=valid, other=0.0)
            if UNIT:
                a = tl.where(d == 0, 1.0, a)
        else:
            # y_i += A(j, i) x_j, A(j, i) stored in column i
            if UPPER:
                j = i64 - d
                brow = k - d
            else:
                j = i64 + d
                brow = d
            valid = imask & (j >= 0) & (j < n)
            a = tl.load(a_ptr + brow + i64 * lda, mask=valid, other=0.0)
        xj = tl.load(tmp_ptr + j, mask=valid, other=0.0)
        acc += a * xj
    tl.store(x_ptr + i64 * incx, acc, mask=imask)


def cublasStbmv_v2(uplo, trans, diag, n, k, A, lda, x, incx):
    n = int(n)
    k = int(k)
    if n <= 0:
        return x
    if isinstance(trans, str):
        trans = {"N": 0, "T": 1, "C": 1}[trans.upper()]
    trans = 0 if int(trans) == 0 else 1  # 'C' == 'T' for real matrices
    tmp = torch.empty(n, dtype=torch.float32, device=x.device)
    BLOCK = 128
    grid = (triton.cdiv(n, BLOCK),)
    _gather_x_kernel[grid](x, tmp, n, int(incx), BLOCK=BLOCK)
    _tbmv_kernel[grid](
        A, tmp, x, n, k, int(lda), int(incx),
        UPPER=int(uplo) == 1, TRANS=trans, UNIT=int(diag) == 1,
        BLOCK=BLOCK,
    )
    return x

# cublasDtrsmBatched -> Triton.  Column-major float64 pointer-array batched triangular solve.
#   side = 0: op(A) * X = alpha * B   (A m x m)      side = 1: X * op(A) = alpha * B   (A n x n)
#   X overwrites B (m x n, ldb).  Only A's uplo triangle is read; diag = 1 -> unit
#   diagonal (stored diagonal not read).  trans 0 = N, 1 = T, 2 = C (== T for real data).
#
# Method: the right-side problem is rewritten as a left-side one on B^T,
#   X op(A) = alpha B  <=>  op(A)^T X^T = alpha B^T,
# i.e. same kernel with B's row/column strides swapped and the transpose flag toggled.
# Each program owns a block of BN right-hand sides (columns of the left-side
# problem) of one batch entry, keeps the whole m x BN panel in registers and runs a
# column-oriented (axpy-style) substitution: x_k = b_k / e_kk, b_rest -= e_rest,k * x_k,
# forward for an effectively lower op(A), backward for an effectively upper one.
# Batch entry = program_id(2); A/B base pointers are gathered from int64 pointer tables.
import torch
import triton
import triton.language as tl


def _ptr_table(arr, device):
    return torch.tensor([t.data_ptr() for t in arr], dtype=torch.int64, device=device)


@triton.jit
def _dtrsm_batched_kernel(a_tab, b_tab, nrows, ncols, lda, b_rs, b_cs, alpha,
                          TRANS_E: tl.constexpr, LOWER_E: tl.constexpr, UNIT: tl.constexpr,
                          ALPHA_ZERO: tl.constexpr, RP: tl.constexpr, BN: tl.constexpr):
    pid = tl.program_id(0)
    bid = tl.program_id(2)
    a_ptr = tl.load(a_tab + bid).to(tl.pointer_type(tl.float64))
    b_ptr = tl.load(b_tab + bid).to(tl.pointer_type(tl.float64))

    r = tl.arange(0, RP)
    c = pid * BN + tl.arange(0, BN)
    mask_r = r < nrows
    mask_c = c < ncols
    b_off = r[:, None].to(tl.int64) * b_rs + c[None, :].to(tl.int64) * b_cs
    b_msk = mask_r[:, None] & mask_c[None, :]
    if ALPHA_ZERO:
        # alpha == 0: B := 0, A not referenced
        tl.store(b_ptr + b_off, tl.zeros((RP, BN), dtype=tl.float64), mask=b_msk)
    else:
        X = alpha * tl.load(b_ptr + b_off, mask=b_msk, other=0.0)
        r64 = r.to(tl.int64)
        for step in range(0, nrows):
            if LOWER_E:
                kk = step
            else:
                kk = nrows - 1 - step
            kk64 = kk.to(tl.int64)
            is_k = r[:, None] == kk
            xk = tl.sum(tl.where(is_k, X, 0.0), axis=0)  # row kk of the panel, [BN]
            if not UNIT:
                d = tl.load(a_ptr + kk64 + kk64 * lda)
                xk = xk / d
            # column kk of E = op_eff(A), strictly below (lower) / above (upper) the diagonal
            if LOWER_E:
                e_msk = (r > kk) & mask_r
            else:
                e_msk = r < kk
            if TRANS_E == 0:
                e_off = r64 + kk64 * lda     # E[r, kk] = A[r, kk]
            else:
                e_off = kk64 + r64 * lda     # E[r, kk] = A[kk, r]
            e = tl.load(a_ptr + e_off, mask=e_msk, other=0.0)
            X = X - e[:, None] * xk[None, :]
            X = tl.where(is_k, xk[None, :], X)
        tl.store(b_ptr + b_off, X, mask=b_msk)


def cublasDtrsmBatched(side, uplo, trans, diag, m, n, alpha, Aarray, lda, Barray, ldb, batchCount):
    side = {"L": 0, "l": 0, "R": 1, "r": 1}.get(side, side)
    uplo = {"L": 0, "l": 0, "U": 1, "u": 1}.get(uplo, uplo)
    trans = {"N": 0, "n": 0, "T": 1, "t": 1, "C": 2, "c": 2}.get(trans, trans)
    diag = {"N": 0, "n": 0, "U": 1, "u": 1}.get(diag, diag)
    m, n, batch = int(m), int(n), int(batchCount)
    alpha = float(alpha)
    if batch <= 0:
        return Barray
    t = 0 if int(trans) == 0 else 1
    if int(side) == 0:
        nrows, ncols, b_rs, b_cs, t_eff = m, n, 1, int(ldb), t
    else:
        nrows, ncols, b_rs, b_cs, t_eff = n, m, int(ldb), 1, 1 - t
    # E = op_eff(A) is lower triangular iff (uplo lower) xor (transposed)
    lower_e = (int(uplo) == 0) != (t_eff == 1)
    dev = Barray[0].device
    a_tab = _ptr_table(Aarray[:batch], dev)
    b_tab = _ptr_table(Barray[:batch], dev)
    RP = max(16, triton.next_power_of_2(max(nrows, 1)))
    BN = 16
    grid = (max(1, triton.cdiv(ncols, BN)), 1, batch)
    _dtrsm_batched_kernel[grid](a_tab, b_tab, nrows, ncols, int(lda), b_rs, b_cs, alpha,
                                TRANS_E=t_eff, LOWER_E=lower_e, UNIT=(int(diag) == 1),
                                ALPHA_ZERO=(alpha == 0.0), RP=RP, BN=BN)
    return Barray

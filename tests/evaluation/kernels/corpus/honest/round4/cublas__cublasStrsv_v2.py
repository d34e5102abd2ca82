"""cublasStrsv_v2: solve op(A) z = x in place (float32, column-major A).

Reduction to one case
---------------------
Write op(A)(i, j) = A[i*sr + j*sc] with (sr, sc) = (1, lda) for 'N' and
(lda, 1) for 'T'.  op(A) is lower triangular when (uplo, trans) is
(lower, N) or (upper, T); that is plain forward substitution.  Otherwise
op(A) is upper triangular; reversing the index order (i -> n-1-i) turns it
into a lower triangular matrix, which the kernel sees through a shifted base
pointer and negated strides (same trick for x).  So the kernel only ever does
forward substitution on a lower-triangular L with strides (sr, sc).

Blocked forward substitution in a single program
------------------------------------------------
For each diagonal block b (BS rows):
    rhs = x_b - sum_{c < b} L[b, c] @ z_c      (z_c already solved, in x)
    z_b = solve(L[b, b], rhs)                  (column sweep inside the block)
The solved block is written back to x before the next block reads it; a
barrier makes those writes visible to every thread of the program.
Only the lower triangle of L (strictly lower if unit diagonal) is ever loaded.
"""
import triton
import triton.language as tl


@triton.jit
def _trsv_lower_kernel(
    a_ptr, x_ptr,
    n, a_base, s_row, s_col, x_base, s_x,
    UNIT: tl.constexpr, BS: tl.constexpr, BK: tl.constexpr,
):
    r_loc = tl.arange(0, BS)
    k_loc = tl.arange(0, BK)
    c_loc = tl.arange(0, BS)
    A = a_ptr + a_base
    X = x_ptr + x_base
    for b0 in range(0, n, BS):
        rows = (b0 + r_loc).to(tl.int64)
        rmask = rows < n
        rhs = tl.load(X + rows * s_x, mask=rmask, other=0.0)

        # subtract contributions of already solved unknowns
        acc = tl.zeros([BS, BK], dtype=tl.float32)
        for c0 in range(0, b0, BK):
            cols = (c0 + k_loc).to(tl.int64)
            cmask = cols < b0
            z = tl.load(X + cols * s_x, mask=cmask, other=0.0)
            a = tl.load(A + rows[:, None] * s_row + cols[None, :] * s_col,
                        mask=rmask[:, None] & cmask[None, :], other=0.0)
            acc += a * z[None, :]
        rhs = rhs - tl.sum(acc, axis=1)

        # diagonal block: L_bb is BS x BS lower triangular
        cols = (b0 + c_loc).to(tl.int64)
        tri = (r_loc[:, None] > c_loc[None, :]) & rmask[:, None] & (cols[None, :] < n)
        if UNIT:
            keep = tri
        else:
            keep = tri | ((r_loc[:, None] == c_loc[None, :]) & rmask[:, None])
        L = tl.load(A + rows[:, None] * s_row + cols[None, :] * s_col, mask=keep, other=0.0)
        if not UNIT:
            diag = tl.sum(tl.where(r_loc[:, None] == c_loc[None, :], L, 0.0), axis=1)
            diag = tl.where(rmask, diag, 1.0)

        z_b = tl.zeros([BS], dtype=tl.float32)
        for j in range(0, BS):
            sel = r_loc == j
            rj = tl.sum(tl.where(sel, rhs, 0.0), axis=0)
            if not UNIT:
                dj = tl.sum(tl.where(sel, diag, 0.0), axis=0)
                zj = tl.math.div_rn(rj, dj)
            else:
                zj = rj
            z_b = tl.where(sel, zj, z_b)
            # column j of L_bb, strictly below the diagonal
            lcol = tl.sum(tl.where((c_loc[None, :] == j) & (r_loc[:, None] > j), L, 0.0), axis=1)
            rhs = rhs - lcol * zj

        tl.store(X + rows * s_x, z_b, mask=rmask)
        tl.debug_barrier()


def _as_int(v, table):
    if isinstance(v, str):
        return table[v.strip().upper()[0]]
    return int(v)


def cublasStrsv_v2(uplo, trans, diag, n, A, lda, x, incx):
    lower = _as_int(uplo, {"L": 0, "U": 1}) == 0
    op_t = _as_int(trans, {"N": 0, "T": 1, "C": 2}) != 0
    unit = _as_int(diag, {"N": 0, "U": 1}) == 1

    s_row, s_col = (lda, 1) if op_t else (1, lda)
    op_lower = lower != op_t
    n_eff = max(int(n), 0)
    if op_lower or n_eff == 0:
        a_base, x_base, s_x = 0, 0, incx
    else:
        # reverse the index order: i -> n-1-i
        a_base = (n_eff - 1) * (s_row + s_col)
        x_base = (n_eff - 1) * incx
        s_row, s_col, s_x = -s_row, -s_col, -incx

    _trsv_lower_kernel[(1,)](
        A, x, n_eff, a_base, s_row, s_col, x_base, s_x,
        UNIT=unit, BS=32, BK=64, num_warps=4,
    )
    return x

"""cublasStrsm_v2 in Triton: blocked triangular solve with multiple right-hand sides.

    side = 0 (left):   op(A) X = alpha B,   A is m x m
    side = 1 (right):  X op(A) = alpha B,   A is n x n
X overwrites B (m x n, column-major, leading dimension ldb).

Both sides are mapped onto one canonical problem  T Y = alpha R  where T is an
NT x NT triangular matrix and Y has NRHS columns:
  left:  T = op(A),    Y = X      (NT = m, NRHS = n)
  right: T = op(A)^T,  Y = X^T    (NT = n, NRHS = m)
Transposes are pure stride swaps on the column-major storage, so nothing is
copied.  T is then either lower (forward substitution) or upper (backward).

Blocked right-looking algorithm over diagonal blocks of BS rows:
  1. _trsm_diag_kernel:  Y_blk <- T_blk,blk^{-1} (scale * Y_blk)   (in registers)
  2. _trsm_update_kernel: Y_rest <- scale * Y_rest - T_rest,blk @ Y_blk   (tl.dot, ieee fp32)
scale is alpha for the first block processed and 1 afterwards, so alpha is
folded in without a separate pass.  Only the uplo triangle of A is read, and
with diag = 1 the stored diagonal is never touched.
"""

import torch
import triton
import triton.language as tl


# ----------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------

@triton.jit
def _trsm_diag_kernel(
    t_ptr, y_ptr,
    NT, NRHS, s0,
    st_r, st_c, sy_r, sy_c,
    scale,
    LOWER: tl.constexpr, UNIT: tl.constexpr,
    BS: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_n = tl.program_id(0)
    loc = tl.arange(0, BS)
    rows = s0 + loc
    row_mask = rows < NT
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < NRHS

    y_ptrs = y_ptr + rows[:, None] * sy_r + cols[None, :] * sy_c
    ymask = row_mask[:, None] & col_mask[None, :]
    x = tl.load(y_ptrs, mask=ymask, other=0.0) * scale

    for it in range(0, BS):
        if LOWER:
            r = it
        else:
            r = BS - 1 - it
        g = s0 + r
        g_ok = g < NT
        # Column g of T restricted to the strictly-triangular part of this block.
        if LOWER:
            below = (loc > r) & row_mask & g_ok
        else:
            below = (loc < r) & g_ok
        tcol = tl.load(t_ptr + rows * st_r + g * st_c, mask=below, other=0.0)
        xr = tl.sum(tl.where(loc[:, None] == r, x, 0.0), axis=0)
        if not UNIT:
            dg = tl.load(t_ptr + g * st_r + g * st_c, mask=g_ok, other=1.0)
            xr = xr / dg
        x = tl.where(loc[:, None] == r, xr[None, :], x - tcol[:, None] * xr[None, :])

    tl.store(y_ptrs, x, mask=ymask)


def _update_configs():
    return [
        triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                      num_warps=w, num_stages=s)
        for bm, bn, bk, w, s in [
            (128, 128, 32, 8, 3),
            (128, 64, 32, 4, 4),
            (64, 128, 32, 4, 4),
            (64, 64, 32, 4, 4),
            (64, 32, 32, 4, 4),
            (32, 64, 32, 4, 4),
            (32, 32, 32, 4, 3),
            (16, 16, 32, 2, 3),
        ]
    ]


def _prune_update(configs, named_args, **kwargs):
    M = named_args["M"]
    N = named_args["N"]
    cap_m = max(32, triton.next_power_of_2(max(M, 1)))
    cap_n = max(32, triton.next_power_of_2(max(N, 1)))
    kept = [c for c in configs if c.kwargs["BLOCK_M"] <= cap_m and c.kwargs["BLOCK_N"] <= cap_n]
    return kept or [configs[-1]]


@triton.autotune(
    configs=_update_configs(),
    # M (the trailing row count) shrinks every step; tune once per RHS width / layout.
    key=["N", "K", "st_r", "sy_r"],
    prune_configs_by={"early_config_prune": _prune_update},
    restore_value=["y_ptr"],   # in-place update of B
)
@triton.jit
def _trsm_update_kernel(
    t_ptr, y_ptr,
    M, N, K,
    row0, k0,
    st_r, st_c, sy_r, sy_c,
    beta,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    # Y[row0:row0+M, :] = beta * Y[row0:row0+M, :] - T[row0:row0+M, k0:k0+K] @ Y[k0:k0+K, :]
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = tl.maximum(tl.minimum(num_pid_m - first_pid_m, GROUP_M), 1)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N

    t_ptrs = t_ptr + ((row0 + offs_m)[:, None] * st_r + (k0 + offs_k)[None, :] * st_c)
    x_ptrs = y_ptr + ((k0 + offs_k)[:, None] * sy_r + offs_n[None, :] * sy_c)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BLOCK_K)):
        k_rem = K - kk * BLOCK_K
        t = tl.load(t_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < k_rem), other=0.0)
        xb = tl.load(x_ptrs, mask=(offs_k[:, None] < k_rem) & mask_n[None, :], other=0.0)
        acc = tl.dot(t, xb, acc, input_precision="ieee")
        t_ptrs += BLOCK_K * st_c
        x_ptrs += BLOCK_K * sy_r

    o_ptrs = y_ptr + ((row0 + offs_m)[:, None] * sy_r + offs_n[None, :] * sy_c)
    o_mask = mask_m[:, None] & mask_n[None, :]
    yv = tl.load(o_ptrs, mask=o_mask, other=0.0)
    tl.store(o_ptrs, beta * yv - acc, mask=o_mask)


@triton.jit
def _zero_kernel(b_ptr, M, N, ldb, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # alpha == 0: B <- 0 without reading A (cuBLAS behaviour).
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    zero = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    tl.store(b_ptr + offs_m[:, None] + offs_n[None, :] * ldb, zero, mask=mask)


# ----------------------------------------------------------------------------
# Wrapper
# ----------------------------------------------------------------------------

def _flag(v, table):
    if isinstance(v, str):
        return table[v.strip().upper()[:1]]
    return int(v)


def cublasStrsm_v2(side, uplo, trans, diag, m, n, alpha, A, lda, B, ldb):
    side = _flag(side, {"L": 0, "R": 1})
    uplo = _flag(uplo, {"L": 0, "U": 1})
    trans = _flag(trans, {"N": 0, "T": 1, "C": 2})
    diag = _flag(diag, {"N": 0, "U": 1})
    m, n, lda, ldb = int(m), int(n), int(lda), int(ldb)
    alpha = float(alpha)

    if m <= 0 or n <= 0 or alpha == 0.0:
        # Quick return (empty) or B <- 0 (alpha == 0); A is not read either way.
        mm, nn = max(m, 0), max(n, 0)
        grid = (max(1, triton.cdiv(mm, 64)), max(1, triton.cdiv(nn, 32)))
        _zero_kernel[grid](B, mm, nn, ldb, BLOCK_M=64, BLOCK_N=32)
        return B

    transposed = trans != 0
    if side == 0:
        NT, NRHS = m, n
        # T(r, c) = op(A)(r, c)
        st_r, st_c = (lda, 1) if transposed else (1, lda)
        lower = (uplo == 0) != transposed
        sy_r, sy_c = 1, ldb                 # Y = X
    else:
        NT, NRHS = n, m
        # T(r, c) = op(A)(c, r)
        st_r, st_c = (1, lda) if transposed else (lda, 1)
        lower = (uplo == 0) == transposed
        sy_r, sy_c = ldb, 1                 # Y = X^T
    unit = diag == 1

    BS = 64 if NT > 256 else 32
    BLOCK_N_DIAG = 32 if BS == 64 else 64
    nblk = triton.cdiv(NT, BS)
    span = (n - 1) * ldb + m
    b_view = B.as_strided((span,), (1,))    # the whole in-place operand, for tuning restore

    order = range(nblk) if lower else range(nblk - 1, -1, -1)
    scale = alpha
    for blk in order:
        s0 = blk * BS
        kb = min(BS, NT - s0)
        _trsm_diag_kernel[(triton.cdiv(NRHS, BLOCK_N_DIAG),)](
            A, B, NT, NRHS, s0, st_r, st_c, sy_r, sy_c, scale,
            LOWER=lower, UNIT=unit, BS=BS, BLOCK_N=BLOCK_N_DIAG, num_warps=4,
        )
        if lower:
            row0, rest = s0 + kb, NT - (s0 + kb)
        else:
            row0, rest = 0, s0
        if rest > 0:
            def grid(meta, rest=rest):
                return (triton.cdiv(rest, meta["BLOCK_M"]) * triton.cdiv(NRHS, meta["BLOCK_N"]),)

            _trsm_update_kernel[grid](
                A, b_view, rest, NRHS, kb, row0, s0,
                st_r, st_c, sy_r, sy_c, scale,
            )
        scale = 1.0
    return B

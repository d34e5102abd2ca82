"""cublasSgemmStridedBatched in Triton.

    C_b = alpha * op(A_b) @ op(B_b) + beta * C_b,   b = 0 .. batchCount-1

All operands follow cuBLAS raw-memory, column-major conventions: element (i, j)
of a matrix with leading dimension ld sits at flat offset i + j*ld from the
tensor's data pointer, and batch entry b starts stride*b elements further on.
The kernel is the classic Triton blocked matmul (grouped tile ordering,
autotuned BLOCK_M/BLOCK_N/BLOCK_K) with the column-major operands expressed as
(row-stride, col-stride) pairs, and the batch index on grid axis 2.
"""

import torch
import triton
import triton.language as tl


def _gemm_configs():
    cfgs = []
    for bm, bn, bk, warps, stages in [
        (128, 128, 32, 8, 3),
        (128, 64, 32, 4, 4),
        (64, 128, 32, 4, 4),
        (64, 64, 32, 4, 4),
        (64, 32, 32, 4, 4),
        (32, 64, 32, 4, 4),
        (128, 32, 32, 4, 4),
        (32, 128, 32, 4, 4),
        (32, 32, 32, 4, 3),
        (16, 16, 32, 2, 3),
    ]:
        cfgs.append(
            triton.Config(
                {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8},
                num_warps=warps,
                num_stages=stages,
            )
        )
    return cfgs


def _prune_configs(configs, named_args, **kwargs):
    """Drop tiles that are much larger than the problem (saves tuning time on
    small GEMMs, where those configs only waste lanes)."""
    M = named_args["M"]
    N = named_args["N"]
    cap_m = max(32, triton.next_power_of_2(max(M, 1)))
    cap_n = max(32, triton.next_power_of_2(max(N, 1)))
    kept = [c for c in configs if c.kwargs["BLOCK_M"] <= cap_m and c.kwargs["BLOCK_N"] <= cap_n]
    if not kept:
        kept = [min(configs, key=lambda c: c.kwargs["BLOCK_M"] * c.kwargs["BLOCK_N"])]
    return kept


@triton.autotune(
    configs=_gemm_configs(),
    key=["M", "N", "K", "stride_am", "stride_bk"],
    prune_configs_by={"early_config_prune": _prune_configs},
    # C is updated in place (beta * C): every tuning run must see the original C.
    restore_value=["c_ptr"],
)
@triton.jit
def _sgemm_strided_batched_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    alpha, beta,
    stride_am, stride_ak, stride_ab,
    stride_bk, stride_bn, stride_bb,
    stride_cn, stride_cb,
    BETA_IS_ZERO: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):
    pid = tl.program_id(axis=0)
    pid_b = tl.program_id(axis=2).to(tl.int64)

    # Grouped ordering of the output tiles for L2 reuse.
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

    a_ptrs = a_ptr + pid_b * stride_ab + (offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + pid_b * stride_bb + (offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn)

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_ptrs, mask=mask_m[:, None] & (offs_k[None, :] < K), other=0.0)
        b = tl.load(b_ptrs, mask=(offs_k[:, None] < K) & mask_n[None, :], other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    acc = acc * alpha

    # C is column-major: row stride 1, column stride ldc.
    c_ptrs = c_ptr + pid_b * stride_cb + (offs_m[:, None] + offs_n[None, :] * stride_cn)
    c_mask = mask_m[:, None] & mask_n[None, :]
    if not BETA_IS_ZERO:
        c = tl.load(c_ptrs, mask=c_mask, other=0.0)
        acc += beta * c
    tl.store(c_ptrs, acc, mask=c_mask)


def _op_code(op):
    if isinstance(op, str):
        op = op.strip().upper()
        return {"N": 0, "T": 1, "C": 2}[op[:1]]
    return int(op)


def cublasSgemmStridedBatched(transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB,
                              beta, C, ldc, strideC, batchCount):
    m, n, k, batch = int(m), int(n), int(k), int(batchCount)
    lda, ldb, ldc = int(lda), int(ldb), int(ldc)
    ta, tb = _op_code(transa), _op_code(transb)
    alpha = float(alpha)
    beta = float(beta)

    # op(A)(i, p): 'N' -> A[i + p*lda], 'T'/'C' -> A[p + i*lda] (real data: C == T)
    if ta == 0:
        stride_am, stride_ak = 1, lda
    else:
        stride_am, stride_ak = lda, 1
    # op(B)(p, j): 'N' -> B[p + j*ldb], 'T'/'C' -> B[j + p*ldb]
    if tb == 0:
        stride_bk, stride_bn = 1, ldb
    else:
        stride_bk, stride_bn = ldb, 1

    # alpha == 0 (or k == 0): C = beta*C and A/B are never read, as in cuBLAS.
    k_eff = 0 if alpha == 0.0 else k
    if m <= 0 or n <= 0 or batch <= 0:
        # Nothing to do (cuBLAS quick return); launch one fully-masked program.
        m_l, n_l, b_l = 0, 1, 1
        span = 0
    else:
        m_l, n_l, b_l = m, n, batch
        span = (batch - 1) * int(strideC) + (n - 1) * ldc + m
    # Flat view over exactly the elements the kernel may write, so the autotuner's
    # restore_value snapshot covers the whole in-place output.
    c_view = C.as_strided((span,), (1,))

    def grid(meta):
        return (max(1, triton.cdiv(m_l, meta["BLOCK_M"]) * triton.cdiv(n_l, meta["BLOCK_N"])), 1, b_l)

    _sgemm_strided_batched_kernel[grid](
        A, B, c_view,
        m_l, n_l, k_eff,
        alpha, beta,
        stride_am, stride_ak, int(strideA),
        stride_bk, stride_bn, int(strideB),
        ldc, int(strideC),
        BETA_IS_ZERO=(beta == 0.0),
    )
    return C

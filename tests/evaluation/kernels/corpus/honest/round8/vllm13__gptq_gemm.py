# SPDX-License-Identifier: Apache-2.0
# Triton GEMM for exllama-shuffled GPTQ 4-bit weights (gptq_gemm).
#
# b_q_weight [K/8, N]: nibble slot i of word [p, n] holds row 8p + (0,2,4,6,1,3,5,7)[i]
# b_gptq_qzeros [K/G, N/8] (GPTQ v1: zero = stored + 1), b_gptq_scales [K/G, N],
# optional act-order permutation b_g_idx applied to the columns of A.
import torch
import triton
import triton.language as tl


def _configs():
    cfgs = [
        triton.Config({"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32}, num_stages=3, num_warps=4),
        triton.Config({"BLOCK_SIZE_M": 32, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 64}, num_stages=3, num_warps=4),
        triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 32}, num_stages=4, num_warps=8),
        triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 128, "BLOCK_SIZE_K": 64}, num_stages=3, num_warps=8),
    ]
    if torch.cuda.is_available():
        return cfgs
    # the interpreter has no benchmarker: keep one (large) config
    return [triton.Config({"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 256, "BLOCK_SIZE_K": 128}, num_stages=1, num_warps=8)]


@triton.autotune(configs=_configs(), key=["M_BUCKET", "N", "K"])
@triton.jit
def _gptq_exllama_gemm_kernel(
    a_ptr,
    b_ptr,
    zeros_ptr,
    scales_ptr,
    g_idx_ptr,
    c_ptr,
    M,
    N,
    K,
    M_BUCKET,
    group_size,
    stride_am,
    stride_ak,
    stride_bk,
    stride_bn,
    stride_zg,
    stride_zn,
    stride_sg,
    stride_sn,
    stride_cm,
    stride_cn,
    HAS_G_IDX: tl.constexpr,
    BLOCK_SIZE_M: tl.constexpr,
    BLOCK_SIZE_N: tl.constexpr,
    BLOCK_SIZE_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    mask_m = offs_m < M
    mask_n = offs_n < N

    # zero point nibble position of every column
    zero_shift = (offs_n % 8) * 4

    acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_SIZE_K):
        offs_k = k0 + tl.arange(0, BLOCK_SIZE_K)
        mask_k = offs_k < K

        # ---- activations (optionally permuted columns) ----
        if HAS_G_IDX:
            a_col = tl.load(g_idx_ptr + offs_k, mask=mask_k, other=0)
        else:
            a_col = offs_k
        a = tl.load(
            a_ptr + offs_m[:, None] * stride_am + a_col[None, :] * stride_ak,
            mask=mask_m[:, None] & mask_k[None, :],
            other=0.0,
        )

        # ---- exllama-shuffled int4 weights ----
        j = offs_k % 8
        slot = (j % 2) * 4 + j // 2  # inverse of (0, 2, 4, 6, 1, 3, 5, 7)
        bmask = mask_k[:, None] & mask_n[None, :]
        b_word = tl.load(
            b_ptr + (offs_k // 8)[:, None] * stride_bk + offs_n[None, :] * stride_bn,
            mask=bmask,
            other=0,
        )
        q = (b_word >> (slot * 4)[:, None]) & 0xF

        group = offs_k // group_size
        z_word = tl.load(
            zeros_ptr + group[:, None] * stride_zg + (offs_n // 8)[None, :] * stride_zn,
            mask=bmask,
            other=0,
        )
        z = ((z_word >> zero_shift[None, :]) & 0xF) + 1  # GPTQ v1 zeros
        s = tl.load(
            scales_ptr + group[:, None] * stride_sg + offs_n[None, :] * stride_sn,
            mask=bmask,
            other=0.0,
        ).to(tl.float32)
        w = ((q - z).to(tl.float32) * s).to(tl.float16)
        acc = tl.dot(a.to(tl.float16), w, acc)

    tl.store(
        c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
        acc.to(tl.float16),
        mask=mask_m[:, None] & mask_n[None, :],
    )


def gptq_gemm(
    a: torch.Tensor,
    b_q_weight: torch.Tensor,
    b_gptq_qzeros: torch.Tensor,
    b_gptq_scales: torch.Tensor,
    b_g_idx: torch.Tensor,
    use_exllama: bool,
    use_v2_format: bool,
    bit: int,
) -> torch.Tensor:
    if bit != 4:
        raise NotImplementedError("only 4-bit GPTQ is supported by this kernel")
    M, K = a.shape
    N = b_q_weight.shape[1]
    num_groups = b_gptq_scales.shape[0]
    group_size = K // num_groups
    has_g_idx = b_g_idx is not None and b_g_idx.numel() > 0
    g_idx = b_g_idx if has_g_idx else b_q_weight  # dummy pointer

    c = torch.empty((M, N), dtype=torch.float16, device=a.device)
    # bucket M so small-batch decode and prefill tune separately
    m_bucket = min(triton.next_power_of_2(M), 256)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_SIZE_M"]), triton.cdiv(N, meta["BLOCK_SIZE_N"]))

    _gptq_exllama_gemm_kernel[grid](
        a,
        b_q_weight,
        b_gptq_qzeros,
        b_gptq_scales,
        g_idx,
        c,
        M,
        N,
        K,
        m_bucket,
        group_size,
        a.stride(0),
        a.stride(1),
        b_q_weight.stride(0),
        b_q_weight.stride(1),
        b_gptq_qzeros.stride(0),
        b_gptq_qzeros.stride(1),
        b_gptq_scales.stride(0),
        b_gptq_scales.stride(1),
        c.stride(0),
        c.stride(1),
        HAS_G_IDX=has_g_idx,
    )
    return c

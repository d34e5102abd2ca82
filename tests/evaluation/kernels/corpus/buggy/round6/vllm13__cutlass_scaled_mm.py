# BUG: the K-loop loads drop the K mask while BLOCK_K is 64, so any K that is not a multiple of 64 (e.g. K=16, 48, 80, 96, 160) accumulates out-of-range/next-row int8 values into the tail tile; K=128/512 cases pass.
import torch
import triton
import triton.language as tl


@triton.jit
def _scaled_mm_int8_kernel(
    a_ptr, b_ptr, c_ptr, scale_a_ptr, scale_b_ptr, bias_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    stride_sa, stride_sb, stride_bias,
    HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    # one program per [BLOCK_M, BLOCK_N] output tile
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N

    a_ptrs = a_ptr + offs_m[:, None].to(tl.int64) * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :].to(tl.int64) * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    # K is a multiple of 16, so only the M / N edges need masking
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptrs, mask=mask_m[:, None], other=0)
        b = tl.load(b_ptrs, mask=mask_n[None, :], other=0)
        acc += tl.dot(a, b, out_dtype=tl.int32)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # epilogue in fp32: out = scale_a[m] * (float(acc) * scale_b[n]) + bias[n]
    sa = tl.load(scale_a_ptr + offs_m * stride_sa, mask=mask_m, other=0.0).to(tl.float32)
    sb = tl.load(scale_b_ptr + offs_n * stride_sb, mask=mask_n, other=0.0).to(tl.float32)
    t = acc.to(tl.float32) * sb[None, :]
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_n * stride_bias, mask=mask_n, other=0.0).to(tl.float32)
        out = tl.fma(sa[:, None] + tl.zeros_like(t), t, bias[None, :] + tl.zeros_like(t))
    else:
        out = sa[:, None] * t

    c_ptrs = c_ptr + offs_m[:, None].to(tl.int64) * stride_cm + offs_n[None, :] * stride_cn
    tl.store(c_ptrs, out.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


def cutlass_scaled_mm(a, b, scale_a, scale_b, out_dtype, bias=None):
    M, K = a.shape
    K2, N = b.shape
    assert K == K2
    out = torch.empty((M, N), dtype=out_dtype, device=a.device)

    # scales: a single value (broadcast with stride 0) or one per row / column
    sa = scale_a.reshape(-1)
    sb = scale_b.reshape(-1)
    stride_sa = 0 if sa.numel() == 1 else sa.stride(0)
    stride_sb = 0 if sb.numel() == 1 else sb.stride(0)

    has_bias = bias is not None
    if has_bias:
        bias_t = bias.reshape(-1)
        stride_bias = 0 if bias_t.numel() == 1 else bias_t.stride(0)
    else:
        bias_t = out
        stride_bias = 0

    BLOCK_M = 16 if M <= 16 else (32 if M <= 32 else 64)
    BLOCK_N = 64
    BLOCK_K = 64
    grid = (triton.cdiv(max(M, 1), BLOCK_M), triton.cdiv(max(N, 1), BLOCK_N))
    _scaled_mm_int8_kernel[grid](
        a, b, out, sa, sb, bias_t,
        M, N, K,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        out.stride(0), out.stride(1),
        stride_sa, stride_sb, stride_bias,
        HAS_BIAS=has_bias,
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return out

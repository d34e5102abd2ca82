import os

import torch
import triton
import triton.language as tl


_CONFIGS = [
    triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=4),
    triton.Config({"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 64}, num_warps=4),
    triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_warps=8),
]
# The CPU interpreter has no benchmarker driver: autotuning over more than one
# config raises, so keep a single config there.
if os.environ.get("TRITON_INTERPRET", "0") == "1":
    _CONFIGS = _CONFIGS[:1]


@triton.autotune(configs=_CONFIGS, key=["M", "N", "K"])
@triton.jit
def _scaled_mm_azp_kernel(
    a_ptr, b_ptr, out_ptr,
    scale_a_ptr, scale_b_ptr,
    azp_adj_ptr, azp_ptr, bias_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_om, stride_on,
    stride_sa, stride_sb,
    stride_azp_adj, stride_azp, stride_bias,
    HAS_AZP: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N

    a_ptrs = a_ptr + offs_m[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_ptrs = b_ptr + offs_k[:, None] * stride_bk + offs_n[None, :] * stride_bn

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.int32)
    for k0 in range(0, K, BLOCK_K):
        k_mask = (k0 + offs_k) < K
        a = tl.load(a_ptrs, mask=mask_m[:, None] & k_mask[None, :], other=0)
        b = tl.load(b_ptrs, mask=k_mask[:, None] & mask_n[None, :], other=0)
        acc += tl.dot(a, b, out_dtype=tl.int32)
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk

    # zero-point correction, still in int32
    azp_adj = tl.load(azp_adj_ptr + offs_n * stride_azp_adj, mask=mask_n, other=0)
    if HAS_AZP:
        azp = tl.load(azp_ptr + offs_m * stride_azp, mask=mask_m, other=0)
        acc = acc - azp[:, None] * azp_adj[None, :]
    else:
        acc = acc - azp_adj[None, :]

    sa = tl.load(scale_a_ptr + offs_m * stride_sa, mask=mask_m, other=0.0).to(tl.float32)
    sb = tl.load(scale_b_ptr + offs_n * stride_sb, mask=mask_n, other=0.0).to(tl.float32)
    accf = acc.to(tl.float32) * sb[None, :]
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_n * stride_bias, mask=mask_n, other=0.0).to(tl.float32)
        res = tl.fma(sa[:, None] + tl.zeros_like(accf), accf, bias[None, :] + tl.zeros_like(accf))
    else:
        res = sa[:, None] * accf

    out_ptrs = out_ptr + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on
    tl.store(out_ptrs, res.to(out_ptr.dtype.element_ty),
             mask=mask_m[:, None] & mask_n[None, :])


def _vec_stride(t, length):
    # per-row / per-column vectors may arrive as [L], [L, 1], [1, L] or a single scalar
    if t.numel() == 1 and length != 1:
        return 0
    v = t.reshape(-1) if t.dim() != 1 else t
    return v.stride(0)


def _as_vec(t):
    return t if t.dim() == 1 else t.reshape(-1)


def cutlass_scaled_mm_azp(a, b, scale_a, scale_b, out_dtype, azp_adj, azp=None, bias=None):
    M, K = a.shape
    N = b.shape[1]
    out = torch.empty((M, N), dtype=out_dtype, device=a.device)
    sa = _as_vec(scale_a)
    sb = _as_vec(scale_b)
    adj = _as_vec(azp_adj)
    azp_v = _as_vec(azp) if azp is not None else adj
    bias_v = _as_vec(bias) if bias is not None else sb
    grid = lambda META: (triton.cdiv(M, META["BLOCK_M"]), triton.cdiv(N, META["BLOCK_N"]))
    _scaled_mm_azp_kernel[grid](
        a, b, out, sa, sb, adj, azp_v, bias_v,
        M, N, K,
        a.stride(0), a.stride(1),
        b.stride(0), b.stride(1),
        out.stride(0), out.stride(1),
        _vec_stride(sa, M), _vec_stride(sb, N),
        _vec_stride(adj, N),
        _vec_stride(azp_v, M) if azp is not None else 0,
        _vec_stride(bias_v, N) if bias is not None else 0,
        HAS_AZP=azp is not None,
        HAS_BIAS=bias is not None,
    )
    return out

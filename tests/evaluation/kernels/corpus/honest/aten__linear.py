"""aten::linear  y = x @ W^T (+ b), x of shape [..., K], W [N, K], b [N].

Leading dims of x are folded into M. W^T is never materialised: the kernel reads W with its strides
swapped. The bias add is fused into the epilogue (HAS_BIAS), so one launch does everything."""
from __future__ import annotations

from typing import Optional

import torch
import triton
import triton.language as tl


@triton.heuristics({"HAS_BIAS": lambda args: args["bias_ptr"] is not None})
@triton.jit
def linear_fwd(x_ptr, w_ptr, bias_ptr, y_ptr, M, N, K,
               sxm, sxk, swn, swk, sym, syn,
               HAS_BIAS: tl.constexpr, F32: tl.constexpr,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        ks = k + offs_k
        x = tl.load(x_ptr + offs_m[:, None] * sxm + ks[None, :] * sxk,
                    mask=(offs_m[:, None] < M) & (ks[None, :] < K), other=0.0)
        wt = tl.load(w_ptr + ks[:, None] * swk + offs_n[None, :] * swn,
                     mask=(ks[:, None] < K) & (offs_n[None, :] < N), other=0.0)
        if F32:
            acc = tl.dot(x, wt, acc, input_precision="ieee")
        else:
            acc = tl.dot(x, wt, acc)
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
        acc = acc + bias[None, :]
    tl.store(y_ptr + offs_m[:, None] * sym + offs_n[None, :] * syn, acc.to(y_ptr.dtype.element_ty),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def linear(input: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None) -> torch.Tensor:
    *lead, K = input.shape
    N = weight.shape[0]
    x2 = input.reshape(-1, K)
    M = x2.shape[0]
    y = torch.empty((M, N), dtype=input.dtype, device=input.device)
    if M and N:
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        linear_fwd[grid](x2, weight, bias, y, M, N, K,
                         x2.stride(0), x2.stride(1), weight.stride(0), weight.stride(1), y.stride(0), y.stride(1),
                         F32=input.dtype == torch.float32, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    return y.view(*lead, N)

import torch
import triton
import triton.language as tl


@triton.jit
def permute_cols_kernel(a_ptr, perm_ptr, out_ptr, M, K, stride_am, stride_om,
                        BLOCK_M: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rk = tl.program_id(1) * BLOCK_K + tl.arange(0, BLOCK_K)
    col_ok = rk < K
    src_cols = tl.load(perm_ptr + rk, mask=col_ok, other=0)
    m = (rm[:, None] < M) & col_ok[None, :]
    v = tl.load(a_ptr + rm[:, None] * stride_am + src_cols[None, :], mask=m)
    tl.store(out_ptr + rm[:, None] * stride_om + rk[None, :], v, mask=m)


def permute_cols(a: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """out[:, j] = a[:, perm[j]] (gather along columns)."""
    M, K = a.shape
    out = torch.empty_like(a)
    if M and K:
        BLOCK_M, BLOCK_K = 8, 64
        permute_cols_kernel[(triton.cdiv(M, BLOCK_M), triton.cdiv(K, BLOCK_K))](
            a, perm, out, M, K, a.stride(0), out.stride(0), BLOCK_M=BLOCK_M, BLOCK_K=BLOCK_K)
    return out

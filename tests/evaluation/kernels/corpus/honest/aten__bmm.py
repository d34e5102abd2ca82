import torch
import triton
import triton.language as tl


@triton.jit
def bmm_kernel(A, B, C, M, N, K,
               sab, sam, sak, sbb, sbk, sbn, scb, scm, scn,
               IEEE: tl.constexpr, WIDEN: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # grid = (m tiles, n tiles, batch): program_id(2) picks the batch entry
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    b = tl.program_id(2).to(tl.int64)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(A + b * sab + rm[:, None] * sam + kk[None, :] * sak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(B + b * sbb + kk[:, None] * sbk + rn[None, :] * sbn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        if WIDEN:  # bf16 on the CPU interpreter: do the dot in fp32
            acc += tl.dot(a.to(tl.float32), w.to(tl.float32), input_precision="ieee")
        elif IEEE:
            acc += tl.dot(a, w, input_precision="ieee")
        else:
            acc += tl.dot(a, w)
    tl.store(C + b * scb + rm[:, None] * scm + rn[None, :] * scn, acc.to(C.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def bmm(self, mat2):
    batch, M, K = self.shape
    _, _, N = mat2.shape
    out = torch.empty((batch, M, N), dtype=self.dtype, device=self.device)
    if out.numel() == 0:
        return out
    BM = 16 if M <= 16 else 32
    BN = 16 if N <= 16 else 32
    BK = 16 if K <= 16 else 32
    grid = (triton.cdiv(M, BM), triton.cdiv(N, BN), batch)
    bmm_kernel[grid](self, mat2, out, M, N, K,
                     *self.stride(), *mat2.stride(), *out.stride(),
                     IEEE=self.dtype == torch.float32,
                     WIDEN=self.dtype == torch.bfloat16 and not self.is_cuda, BM=BM, BN=BN, BK=BK)
    return out

import torch
import triton
import triton.language as tl


@triton.jit
def _gather_kernel(
    src_ptr, idx_ptr, out_ptr,
    N,
    S1, S2, S3,                 # index sizes (rank padded to 4, leading dims are 1)
    is0, is1, is2, is3,         # index strides
    ss0, ss1, ss2, ss3,         # self strides
    DIM: tl.constexpr,
    BLOCK: tl.constexpr,
):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < N

    # unravel the flat output position over the index shape
    c3 = offs % S3
    t = offs // S3
    c2 = t % S2
    t = t // S2
    c1 = t % S1
    c0 = t // S1

    idx = tl.load(idx_ptr + c0 * is0 + c1 * is1 + c2 * is2 + c3 * is3, mask=mask, other=0)

    if DIM == 0:
        c_dim = c0
        s_dim = ss0
    elif DIM == 1:
        c_dim = c1
        s_dim = ss1
    elif DIM == 2:
        c_dim = c2
        s_dim = ss2
    else:
        c_dim = c3
        s_dim = ss3

    # self shares the layout of out outside `dim`, so only patch the gathered coordinate
    src_off = offs + (idx - c_dim) * s_dim

    val = tl.load(src_ptr + src_off, mask=mask)
    tl.store(out_ptr + offs, val, mask=mask)


def gather(self, dim, index, *, sparse_grad=False):
    ndim = max(self.dim(), 1)
    dim = dim % ndim
    out = torch.empty(index.shape, dtype=self.dtype, device=self.device)
    N = index.numel()
    if N == 0:
        return out
    src = self.contiguous()
    pad = 4 - ndim
    isz = [1] * pad + (list(index.shape) if index.dim() > 0 else [1])
    ist = [0] * pad + (list(index.stride()) if index.dim() > 0 else [0])
    sst = [0] * pad + (list(src.stride()) if src.dim() > 0 else [0])
    BLOCK = 1024
    grid = (triton.cdiv(N, BLOCK),)
    _gather_kernel[grid](
        src, index, out, N,
        isz[1], isz[2], isz[3],
        ist[0], ist[1], ist[2], ist[3],
        sst[0], sst[1], sst[2], sst[3],
        DIM=dim + pad,
        BLOCK=BLOCK,
    )
    return out

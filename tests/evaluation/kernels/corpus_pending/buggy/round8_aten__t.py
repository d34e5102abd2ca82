# BUG: the launch grid uses cdiv(N, tile) for both axes (a square-matrix assumption), so rows of x beyond N are never transposed when M > N.
# aten::t -- Triton port of a classic tiled transpose.
#
# out (N x M, row-major) = x^T for x of shape (M, N) with arbitrary strides.
# 0-d and 1-d inputs are just copied (t() is the identity for them).
import torch
import triton
import triton.language as tl

TILE_M = 32
TILE_N = 32


@triton.jit
def transpose2d_kernel(x_ptr, y_ptr, M, N, stride_xm, stride_xn,
                       TILE_M: tl.constexpr, TILE_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * TILE_M + tl.arange(0, TILE_M)
    rn = pid_n * TILE_N + tl.arange(0, TILE_N)
    rm64 = rm.to(tl.int64)
    rn64 = rn.to(tl.int64)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(x_ptr + rm64[:, None] * stride_xm + rn64[None, :] * stride_xn, mask=mask)
    # y[n, m] lives at n * M + m
    tl.store(y_ptr + rn64[None, :] * M + rm64[:, None], tile, mask=mask)


@triton.jit
def copy1d_kernel(x_ptr, y_ptr, n, stride_x, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x_ptr + offs.to(tl.int64) * stride_x, mask=mask)
    tl.store(y_ptr + offs, v, mask=mask)


def t(self):
    x = self
    if x.dim() > 2:
        raise RuntimeError("t() expects a tensor with <= 2 dimensions, but self is %dD" % x.dim())
    dev = x.device
    if x.is_complex():
        raise NotImplementedError("complex not supported")
    if x.dim() < 2:
        y = torch.empty(x.shape, dtype=x.dtype, device=dev)
        n = x.numel()
        stride = x.stride(0) if x.dim() == 1 else 1
        BLOCK = 1024 if x.is_cuda else 16384
        copy1d_kernel[(max(1, triton.cdiv(n, BLOCK)),)](x, y, n, stride, BLOCK=BLOCK)
        return y
    M, N = x.shape
    y = torch.empty((N, M), dtype=x.dtype, device=dev)
    # on the CPU interpreter big tiles are much cheaper (fewer programs)
    tm, tn = (TILE_M, TILE_N) if x.is_cuda else (128, 128)
    grid = (max(1, triton.cdiv(N, tm)), max(1, triton.cdiv(N, tn)))
    transpose2d_kernel[grid](x, y, M, N, x.stride(0), x.stride(1), TILE_M=tm, TILE_N=tn)
    return y

import functools

import torch
import triton
import triton.language as tl


@triton.jit
def _im2col_kernel(
    x_ptr, out_ptr,
    N, C, H, W, OW, L, CK,
    sxn, sxc, sxh, sxw,
    n_rblk, n_lblk,
    KH: tl.constexpr, KW: tl.constexpr,
    SH: tl.constexpr, SW: tl.constexpr,
    PH: tl.constexpr, PW: tl.constexpr,
    DH: tl.constexpr, DW: tl.constexpr,
    BLOCK_R: tl.constexpr, BLOCK_L: tl.constexpr,
):
    # flattened grid: (image, row block, column block)
    pid = tl.program_id(0)
    lblk = pid % n_lblk
    tmp = pid // n_lblk
    rblk = tmp % n_rblk
    n = (tmp // n_rblk).to(tl.int64)
    if n >= N:  # only reachable for an empty batch (the grid always has a program)
        return

    r = rblk * BLOCK_R + tl.arange(0, BLOCK_R)          # row of the column matrix: (c, ki, kj)
    l = lblk * BLOCK_L + tl.arange(0, BLOCK_L)          # block position: (oy, ox)
    c = r // (KH * KW)
    kk = r % (KH * KW)
    ki = kk // KW
    kj = kk % KW
    oy = l // OW
    ox = l % OW

    iy = oy[None, :] * SH - PH + ki[:, None] * DH
    ix = ox[None, :] * SW - PW + kj[:, None] * DW
    inside = (iy >= 0) & (iy < H) & (ix >= 0) & (ix < W)
    valid = (r < CK)[:, None] & (l < L)[None, :] & inside
    src = (x_ptr + n * sxn + c[:, None].to(tl.int64) * sxc
           + iy.to(tl.int64) * sxh + ix.to(tl.int64) * sxw)
    vals = tl.load(src, mask=valid, other=0)

    out_block = tl.make_block_ptr(
        base=out_ptr + n * CK * L,
        shape=(CK, L),
        strides=(L, 1),
        offsets=(rblk * BLOCK_R, lblk * BLOCK_L),
        block_shape=(BLOCK_R, BLOCK_L),
        order=(1, 0),
    )
    tl.store(out_block, vals.to(out_ptr.dtype.element_ty), boundary_check=(0, 1))


@functools.lru_cache(maxsize=128)
def _tile_config(ck, l):
    block_l = max(16, min(128, triton.next_power_of_2(max(l, 1))))
    block_r = max(1, min(triton.next_power_of_2(max(ck, 1)), 4096 // block_l, 32))
    warps = 4 if block_l * block_r >= 2048 else 2
    return block_r, block_l, warps


def _pair(v):
    if isinstance(v, int):
        return v, v
    v = tuple(v)
    return (v[0], v[0]) if len(v) == 1 else (v[0], v[1])


def im2col(self, kernel_size, dilation, padding, stride):
    kh, kw = _pair(kernel_size)
    dh, dw = _pair(dilation)
    ph, pw = _pair(padding)
    sh, sw = _pair(stride)
    batched = self.dim() == 4
    x = self if batched else self.unsqueeze(0)
    if x.dim() != 4:
        raise RuntimeError("im2col: expected a 3D or 4D input")
    N, C, H, W = x.shape
    oh = (H + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (W + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if oh < 1 or ow < 1:
        raise RuntimeError("im2col: given input and parameters give an empty output")
    L = oh * ow
    ck = C * kh * kw
    out = torch.empty_strided((N, ck, L), (ck * L, L, 1), dtype=x.dtype, device=x.device)

    block_r, block_l, warps = _tile_config(ck, L)
    n_rblk = max(1, triton.cdiv(ck, block_r))
    n_lblk = max(1, triton.cdiv(L, block_l))
    grid = (max(1, N * n_rblk * n_lblk),)
    _im2col_kernel[grid](
        x, out, N, C, H, W, ow, L, ck,
        x.stride(0), x.stride(1), x.stride(2), x.stride(3),
        n_rblk, n_lblk,
        KH=kh, KW=kw, SH=sh, SW=sw, PH=ph, PW=pw, DH=dh, DW=dw,
        BLOCK_R=block_r, BLOCK_L=block_l, num_warps=warps,
    )
    return out if batched else out.squeeze(0)

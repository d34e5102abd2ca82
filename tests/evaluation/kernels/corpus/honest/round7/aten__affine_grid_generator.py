# aten::affine_grid_generator
# grid[n, (d,) h, w, :] = theta[n] @ [x_w, y_h, (z_d,) 1]
# The base coordinates are rebuilt in-kernel with the same rounding steps the eager CPU
# kernel takes for half / bfloat16 (linspace in the storage dtype, then *(n-1) and /n,
# each rounded), and the 3- or 4-term dot product is accumulated in fp32 and rounded once.
from typing import List

import torch
import triton
import triton.language as tl


@triton.jit
def _rne_bf16(x):
    # interpreter casts fp32->bf16 by truncation; do round-to-nearest-even by hand
    bits = x.to(tl.uint32, bitcast=True)
    bits = bits + (((bits >> 16) & 1) + 0x7FFF)
    bits = (bits >> 16) << 16
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _rnd(x, ROUND: tl.constexpr):
    if ROUND == 1:
        x = x.to(tl.float16).to(tl.float32)
    elif ROUND == 2:
        x = _rne_bf16(x)
    return x


@triton.jit
def _base_coord(i, n, ALIGN: tl.constexpr, ROUND: tl.constexpr, CT: tl.constexpr):
    # linspace(-1, 1, n)[i] (computed symmetric from both ends like eager), optionally * (n-1)/n
    nf = n.to(CT)
    step = _rnd(2.0 / tl.maximum(nf - 1.0, 1.0), ROUND)
    fi = _rnd(i.to(CT), ROUND)
    lo = _rnd(-1.0 + _rnd(step * fi, ROUND), ROUND)
    fj = _rnd((n - 1 - i).to(CT), ROUND)
    hi = _rnd(1.0 - _rnd(step * fj, ROUND), ROUND)
    v = tl.where(i < n // 2, lo, hi)
    if not ALIGN:
        v = _rnd(v * (nf - 1.0), ROUND)
        v = _rnd(v / nf, ROUND)
    return tl.where(n > 1, v, 0.0)


@triton.heuristics({"XBLOCK": lambda a: 4096 if a["xnumel"] >= 1 << 20 else 1024})
@triton.jit
def affine_grid_2d_kernel(theta_ptr, out_ptr, xnumel, H, W,
                          ts0, ts1, ts2,
                          ALIGN: tl.constexpr, ROUND: tl.constexpr, CT: tl.constexpr,
                          OUT_BF16: tl.constexpr, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex % W
    x1 = (xindex // W) % H
    x2 = xindex // (W * H)
    gx = _base_coord(x0, W, ALIGN, ROUND, CT)
    gy = _base_coord(x1, H, ALIGN, ROUND, CT)
    tb = theta_ptr + x2 * ts0
    for j in tl.static_range(2):
        t0 = tl.load(tb + j * ts1 + 0 * ts2, xmask).to(CT)
        t1 = tl.load(tb + j * ts1 + 1 * ts2, xmask).to(CT)
        t2 = tl.load(tb + j * ts1 + 2 * ts2, xmask).to(CT)
        acc = t0 * gx
        acc = acc + t1 * gy
        acc = acc + t2
        if OUT_BF16:
            acc = _rne_bf16(acc)
        tl.store(out_ptr + xindex * 2 + j, acc.to(out_ptr.dtype.element_ty), xmask)


@triton.heuristics({"XBLOCK": lambda a: 4096 if a["xnumel"] >= 1 << 20 else 1024})
@triton.jit
def affine_grid_3d_kernel(theta_ptr, out_ptr, xnumel, D, H, W,
                          ts0, ts1, ts2,
                          ALIGN: tl.constexpr, ROUND: tl.constexpr, CT: tl.constexpr,
                          OUT_BF16: tl.constexpr, XBLOCK: tl.constexpr):
    xindex = tl.program_id(0).to(tl.int64) * XBLOCK + tl.arange(0, XBLOCK)
    xmask = xindex < xnumel
    x0 = xindex % W
    x1 = (xindex // W) % H
    x2 = (xindex // (W * H)) % D
    x3 = xindex // (W * H * D)
    gx = _base_coord(x0, W, ALIGN, ROUND, CT)
    gy = _base_coord(x1, H, ALIGN, ROUND, CT)
    gz = _base_coord(x2, D, ALIGN, ROUND, CT)
    tb = theta_ptr + x3 * ts0
    for j in tl.static_range(3):
        t0 = tl.load(tb + j * ts1 + 0 * ts2, xmask).to(CT)
        t1 = tl.load(tb + j * ts1 + 1 * ts2, xmask).to(CT)
        t2 = tl.load(tb + j * ts1 + 2 * ts2, xmask).to(CT)
        t3 = tl.load(tb + j * ts1 + 3 * ts2, xmask).to(CT)
        acc = t0 * gx
        acc = acc + t1 * gy
        acc = acc + t2 * gz
        acc = acc + t3
        if OUT_BF16:
            acc = _rne_bf16(acc)
        tl.store(out_ptr + xindex * 3 + j, acc.to(out_ptr.dtype.element_ty), xmask)


_ROUND = {torch.float16: 1, torch.bfloat16: 2}


def affine_grid_generator(theta: torch.Tensor, size: List[int], align_corners: bool) -> torch.Tensor:
    size = [int(s) for s in size]
    if not theta.is_floating_point():
        raise TypeError("affine_grid_generator: theta must be floating point")
    rnd = _ROUND.get(theta.dtype, 0)
    ct = tl.float64 if theta.dtype == torch.float64 else tl.float32
    out_bf16 = theta.dtype == torch.bfloat16
    ts0, ts1, ts2 = theta.stride()
    if len(size) == 4:
        N, _, H, W = size
        assert theta.shape == (N, 2, 3), f"expected theta of shape {(N, 2, 3)}, got {tuple(theta.shape)}"
        out = torch.empty((N, H, W, 2), dtype=theta.dtype, device=theta.device)
        xnumel = N * H * W
        grid = lambda meta: (max(triton.cdiv(xnumel, meta["XBLOCK"]), 1),)
        affine_grid_2d_kernel[grid](theta, out, xnumel, H, W, ts0, ts1, ts2,
                                    ALIGN=bool(align_corners), ROUND=rnd, CT=ct, OUT_BF16=out_bf16)
        return out
    if len(size) == 5:
        N, _, D, H, W = size
        assert theta.shape == (N, 3, 4), f"expected theta of shape {(N, 3, 4)}, got {tuple(theta.shape)}"
        out = torch.empty((N, D, H, W, 3), dtype=theta.dtype, device=theta.device)
        xnumel = N * D * H * W
        grid = lambda meta: (max(triton.cdiv(xnumel, meta["XBLOCK"]), 1),)
        affine_grid_3d_kernel[grid](theta, out, xnumel, D, H, W, ts0, ts1, ts2,
                                    ALIGN=bool(align_corners), ROUND=rnd, CT=ct, OUT_BF16=out_bf16)
        return out
    raise NotImplementedError("affine_grid_generator needs a 4-D or 5-D size")

import math
import struct
from dataclasses import dataclass

import torch
import triton
import triton.language as tl


@triton.jit
def _window_start(i, scale, limit):
    # first output row/column that nearest-upsampling maps onto input index i:
    # min(ceil(i * scale), limit), evaluated in fp32 like the aten CUDA kernel
    return tl.minimum(tl.math.ceil(i.to(tl.float32) * scale).to(tl.int32), limit)


@triton.jit
def _upsample_nearest2d_bwd_kernel(
    go_ptr, gi_ptr,
    total, C, IH, IW, OH, OW,
    s_n, s_c, s_h, s_w,
    scale_h, scale_w,
    WIN_H: tl.constexpr, WIN_W: tl.constexpr,
    ACC_T: tl.constexpr, BLOCK: tl.constexpr,
):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    live = offs < total
    ix = (offs % IW).to(tl.int32)
    t = offs // IW
    iy = (t % IH).to(tl.int32)
    nc = t // IH
    n = nc // C
    c = nc % C

    y0 = _window_start(iy, scale_h, OH)
    y1 = _window_start(iy + 1, scale_h, OH)
    x0 = _window_start(ix, scale_w, OW)
    x1 = _window_start(ix + 1, scale_w, OW)

    base = go_ptr + n * s_n + c * s_c
    acc = tl.zeros([BLOCK], dtype=ACC_T)
    for dy in tl.static_range(WIN_H):
        y = y0 + dy
        row_ok = live & (y < y1)
        row = base + y.to(tl.int64) * s_h
        for dx in tl.static_range(WIN_W):
            x = x0 + dx
            ok = row_ok & (x < x1)
            g = tl.load(row + x.to(tl.int64) * s_w, mask=ok, other=0.0)
            acc += g.to(ACC_T)
    tl.store(gi_ptr + offs, acc.to(gi_ptr.dtype.element_ty), mask=live)


@dataclass(frozen=True)
class _LaunchConfig:
    block: int
    num_warps: int
    win_h: int
    win_w: int

    @staticmethod
    def make(total, scale_h, scale_w):
        # a window spans at most ceil(scale) + 1 output rows/columns (fp32 rounding included)
        win_h = max(1, int(math.ceil(scale_h)) + 1)
        win_w = max(1, int(math.ceil(scale_w)) + 1)
        block = 512 if total >= (1 << 20) else 256
        return _LaunchConfig(block, 4, win_h, win_w)

    def grid(self, total):
        return (max(1, triton.cdiv(total, self.block)),)


def _f32(v):
    # round a Python float to fp32 (the precision aten uses for these scales)
    return struct.unpack("f", struct.pack("f", float(v)))[0]


def _bw_scale(scale, out_size, in_size):
    if scale is not None and scale > 0:
        return _f32(scale)
    return _f32(_f32(out_size) / _f32(in_size)) if in_size > 0 else 0.0


def upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h=None, scales_w=None):
    N, C, IH, IW = (int(v) for v in input_size)
    OH, OW = (int(v) for v in output_size)
    if grad_output.dim() != 4 or tuple(grad_output.shape) != (N, C, OH, OW):
        raise RuntimeError("upsample_nearest2d_backward: grad_output has the wrong shape")
    grad_input = torch.empty((N, C, IH, IW), dtype=grad_output.dtype, device=grad_output.device)

    sh = _bw_scale(scales_h, OH, IH)
    sw = _bw_scale(scales_w, OW, IW)
    total = N * C * IH * IW
    cfg = _LaunchConfig.make(total, sh, sw)
    acc_t = tl.float64 if grad_output.dtype == torch.float64 else tl.float32
    _upsample_nearest2d_bwd_kernel[cfg.grid(total)](
        grad_output, grad_input,
        total, max(C, 1), max(IH, 1), max(IW, 1), OH, OW,
        *grad_output.stride(),
        sh, sw,
        WIN_H=cfg.win_h, WIN_W=cfg.win_w, ACC_T=acc_t, BLOCK=cfg.block,
        num_warps=cfg.num_warps,
    )
    return grad_input

"""vllm::rms_norm in Triton.

State kept between calls: an lru_cache'd launch-config chooser keyed on
(N, M, dtype); plus a module-level fp32 workspace (one inverse-RMS value per
row) used by the two-kernel path for very wide rows, grown on demand and fully
rewritten by each call before it is read.
"""
import functools

import torch
import triton
import triton.language as tl

_SINGLE_PASS_MAX_N = 16384


@triton.jit
def _rms_norm_rows_kernel(out_ptr, x_ptr, w_ptr, M, N, sxm, sxn, som, son, eps,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    # whole row in one tile
    pid = tl.program_id(0)
    rm = pid * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.arange(0, BLOCK_N)
    rm64 = rm.to(tl.int64)
    mask = (rm < M)[:, None] & (rn < N)[None, :]
    x = tl.load(x_ptr + rm64[:, None] * sxm + rn[None, :] * sxn, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=1) / N
    inv = tl.rsqrt(ms + eps)
    w = tl.load(w_ptr + rn, mask=rn < N, other=0.0)
    # second rounding: normalize, round to the tensor dtype, then multiply by the
    # weight; the fp32 product of two fp16/bf16 values is exact, so rounding it
    # once more gives the dtype-precision product
    y = (x * inv[:, None]).to(w.dtype).to(tl.float32) * w.to(tl.float32)[None, :]
    tl.store(out_ptr + rm64[:, None] * som + rn[None, :] * son, y.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rms_inv_kernel(inv_ptr, x_ptr, M, N, sxm, sxn, eps, BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        rn = n0 + tl.arange(0, BLOCK_N)
        x = tl.load(x_ptr + row * sxm + rn * sxn, mask=rn < N, other=0.0).to(tl.float32)
        acc += x * x
    ms = tl.sum(acc, axis=0) / N
    tl.store(inv_ptr + row, tl.rsqrt(ms + eps))


@triton.jit
def _rms_apply_kernel(out_ptr, x_ptr, w_ptr, inv_ptr, N, sxm, sxn, som, son,
                      BLOCK_N: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    pid_n = tl.program_id(1)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = rn < N
    inv = tl.load(inv_ptr + row)
    x = tl.load(x_ptr + row * sxm + rn * sxn, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + rn, mask=mask, other=0.0)
    y = (x * inv).to(w.dtype).to(tl.float32) * w.to(tl.float32)
    tl.store(out_ptr + row * som + rn * son, y.to(out_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=512)
def _config(M, N, itemsize):
    if N <= _SINGLE_PASS_MAX_N:
        block_n = max(16, triton.next_power_of_2(N))
        block_m = max(1, min(triton.next_power_of_2(max(M, 1)), 16384 // block_n))
        return ("rows", block_m, block_n, (triton.cdiv(max(M, 1), block_m),))
    block_n = 8192
    return ("split", 1, block_n, (M, triton.cdiv(N, block_n)))


_WS = {}


def _inv_workspace(device, rows):
    key = str(device)
    ws = _WS.get(key)
    if ws is None or ws.numel() < rows:
        ws = torch.empty(max(rows, 2 * (ws.numel() if ws is not None else 0), 256),
                         dtype=torch.float32, device=device)
        _WS[key] = ws
    return ws


def rms_norm(out, input, weight, epsilon):
    x = input
    N = x.shape[-1]
    M = x.numel() // N if N > 0 else 0
    if x.dim() != 2:
        x = x.reshape(M, N)
    o = out if out.dim() == 2 else out.view(M, N)
    if not weight.is_contiguous():
        weight = weight.contiguous()
    eps = float(epsilon)
    kind, block_m, block_n, grid = _config(M, N, x.element_size())
    if M == 0 or N == 0:
        # keep the one-launch contract on degenerate shapes
        _rms_norm_rows_kernel[(1,)](o, x, weight, 0, max(N, 1), 0, 1, 0, 1, eps,
                                    BLOCK_M=1, BLOCK_N=16)
        return None
    if kind == "rows":
        _rms_norm_rows_kernel[grid](o, x, weight, M, N, x.stride(0), x.stride(1),
                                    o.stride(0), o.stride(1), eps,
                                    BLOCK_M=block_m, BLOCK_N=block_n)
    else:
        inv = _inv_workspace(x.device, M)
        _rms_inv_kernel[(M,)](inv, x, M, N, x.stride(0), x.stride(1), eps, BLOCK_N=block_n)
        _rms_apply_kernel[grid](o, x, weight, inv, N, x.stride(0), x.stride(1),
                                o.stride(0), o.stride(1), BLOCK_N=block_n)
    return None

import math
import os

import torch
import triton
import triton.language as tl

# p-norm flavours handled by the kernels
_P_ONE, _P_TWO, _P_INF, _P_GENERIC = 0, 1, 2, 3


@triton.jit
def _abs_pow(v, p, P_KIND: tl.constexpr):
    a = tl.abs(v)
    if P_KIND == 0:
        r = a
    elif P_KIND == 1:
        r = a * a
    elif P_KIND == 2:
        r = a
    else:
        # |v|^p for p > 0; log2(0) = -inf gives exp2(-inf) = 0
        r = tl.exp2(tl.log2(a) * p)
    return r


@triton.heuristics({
    "BLOCK_D": lambda a: 1 if a["stride_d"] != 1 else min(64, triton.next_power_of_2(a["D"])),
})
@triton.heuristics({
    "BLOCK_R": lambda a: max(16, 2048 // a["BLOCK_D"]),
})
@triton.jit
def _renorm_partial_kernel(
    x_ptr, part_ptr,
    M, D, B, stride_a, stride_d, stride_b,
    chunk, n_split, p,
    P_KIND: tl.constexpr, IS_F64: tl.constexpr,
    BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # program (d-block, split) reduces BLOCK_D slices over rows [split*chunk, (split+1)*chunk)
    pid_d = tl.program_id(0)
    split = tl.program_id(1)
    d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    d_ok = d < D
    start = split.to(tl.int64) * chunk
    if IS_F64:
        acc = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float64)
    else:
        acc = tl.zeros([BLOCK_R, BLOCK_D], dtype=tl.float32)
    for off in range(0, chunk, BLOCK_R):
        r = start + off + tl.arange(0, BLOCK_R).to(tl.int64)
        r_ok = (r < M) & (r < start + chunk)
        a_i = r // B
        b_i = r % B
        ptrs = x_ptr + (a_i * stride_a + b_i * stride_b)[:, None] + d[None, :].to(tl.int64) * stride_d
        m = r_ok[:, None] & d_ok[None, :]
        v = tl.load(ptrs, mask=m, other=0.0)
        if IS_F64:
            v = v.to(tl.float64)
        else:
            v = v.to(tl.float32)
        t = _abs_pow(v, p, P_KIND)
        if P_KIND == 2:
            acc = tl.maximum(acc, t)
        else:
            acc += t
    if P_KIND == 2:
        res = tl.max(acc, axis=0)
    else:
        res = tl.sum(acc, axis=0)
    tl.store(part_ptr + d.to(tl.int64) * n_split + split, res, mask=d_ok)


@triton.jit
def _renorm_factor_kernel(
    part_ptr, factor_ptr, x_ptr, D, n_split, p, maxnorm,
    P_KIND: tl.constexpr, IS_F64: tl.constexpr,
    BLOCK_D: tl.constexpr, BLOCK_S: tl.constexpr,
):
    d = tl.program_id(0) * BLOCK_D + tl.arange(0, BLOCK_D)
    d_ok = d < D
    if IS_F64:
        acc = tl.zeros([BLOCK_D, BLOCK_S], dtype=tl.float64)
    else:
        acc = tl.zeros([BLOCK_D, BLOCK_S], dtype=tl.float32)
    for s0 in range(0, n_split, BLOCK_S):
        s = s0 + tl.arange(0, BLOCK_S)
        m = d_ok[:, None] & (s < n_split)[None, :]
        v = tl.load(part_ptr + d[:, None].to(tl.int64) * n_split + s[None, :], mask=m, other=0.0)
        if P_KIND == 2:
            acc = tl.maximum(acc, v)
        else:
            acc += v
    if P_KIND == 2:
        total = tl.max(acc, axis=1)
    else:
        total = tl.sum(acc, axis=1)
    if P_KIND == 1:
        norm = tl.sqrt(total)
    elif P_KIND == 3:
        norm = tl.exp2(tl.log2(total) / p)
    else:
        norm = total
    factor = tl.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0)
    # aten casts the factor to the tensor's dtype before multiplying
    factor = factor.to(x_ptr.dtype.element_ty).to(factor_ptr.dtype.element_ty)
    tl.store(factor_ptr + d, factor, mask=d_ok)


def _apply_configs():
    configs = [
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=8),
        triton.Config({"BLOCK": 4096}, num_warps=8),
    ]
    # the CPU interpreter cannot benchmark candidates: give it a single config
    if os.environ.get("TRITON_INTERPRET", "0") == "1" or not torch.cuda.is_available():
        configs = configs[:1]
    return configs


@triton.autotune(configs=_apply_configs(), key=["n_total"])
@triton.jit
def _renorm_apply_kernel(
    x_ptr, factor_ptr, out_ptr, n_total, D, B,
    stride_a, stride_d, stride_b,
    BLOCK: tl.constexpr,
):
    lin = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    m = lin < n_total
    b_i = lin % B
    ad = lin // B
    d_i = ad % D
    a_i = ad // D
    x = tl.load(x_ptr + a_i * stride_a + d_i * stride_d + b_i * stride_b, mask=m, other=0.0)
    f = tl.load(factor_ptr + d_i, mask=m, other=1.0)
    y = x.to(f.dtype) * f
    tl.store(out_ptr + lin, y.to(out_ptr.dtype.element_ty), mask=m)


def _merge(sizes, strides):
    """(numel, stride) of a run of dims if they can be addressed with a single stride."""
    n = 1
    for s in sizes:
        n *= s
    live = [(s, st) for s, st in zip(sizes, strides) if s != 1]
    if not live:
        return n, 1
    for (_, st0), (s1, st1) in zip(live, live[1:]):
        if st0 != st1 * s1:
            return None
    return n, live[-1][1]


def _three_d(x, dim):
    outer = _merge(x.shape[:dim], x.stride()[:dim])
    inner = _merge(x.shape[dim + 1:], x.stride()[dim + 1:])
    if outer is None or inner is None:
        x = x.contiguous()
        outer = _merge(x.shape[:dim], x.stride()[:dim])
        inner = _merge(x.shape[dim + 1:], x.stride()[dim + 1:])
    return x, outer, inner


def renorm(self, p, dim, maxnorm):
    p = float(p)
    maxnorm = float(maxnorm)
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError("renorm: expected maxnorm to be >= 0")
    if not self.dtype.is_floating_point:
        raise RuntimeError("renorm: expected a floating point tensor")
    x = self.reshape(1) if self.dim() == 0 else self
    nd = x.dim()
    if not -nd <= dim < nd:
        raise IndexError("renorm: dim out of range")
    dim %= nd

    if math.isinf(p):
        p_kind = _P_INF
    elif p == 1.0:
        p_kind = _P_ONE
    elif p == 2.0:
        p_kind = _P_TWO
    else:
        p_kind = _P_GENERIC
    is_f64 = x.dtype == torch.float64
    acc_dtype = torch.float64 if is_f64 else torch.float32

    x, (A, sa), (B, sb) = _three_d(x, dim)
    D = x.shape[dim]
    sd = x.stride(dim)
    M = A * B
    dev = x.device

    # split each slice's reduction so that there are enough programs in flight
    block_d = 1 if sd != 1 else min(64, triton.next_power_of_2(max(D, 1)))
    n_dblk = max(1, triton.cdiv(D, block_d))
    rows_per_split = 4096
    n_split = max(1, min(triton.cdiv(M, rows_per_split), triton.cdiv(1024, n_dblk)))
    chunk = max(1, triton.cdiv(M, n_split))
    n_split = max(1, triton.cdiv(M, chunk))

    partial = torch.empty((max(D, 1), n_split), dtype=acc_dtype, device=dev)
    factor = torch.empty((max(D, 1),), dtype=acc_dtype, device=dev)
    out = torch.empty(self.shape, dtype=self.dtype, device=dev)

    p_arg = p if p_kind == _P_GENERIC else 1.0
    _renorm_partial_kernel[(n_dblk, n_split)](
        x, partial, M, D, max(B, 1), sa, sd, sb, chunk, n_split, p_arg,
        P_KIND=p_kind, IS_F64=is_f64,
    )
    fb = 32
    _renorm_factor_kernel[(max(1, triton.cdiv(D, fb)),)](
        partial, factor, x, D, n_split, p_arg, maxnorm,
        P_KIND=p_kind, IS_F64=is_f64, BLOCK_D=fb, BLOCK_S=32,
    )
    n_total = x.numel()
    _renorm_apply_kernel[lambda meta: (max(1, triton.cdiv(n_total, meta["BLOCK"])),)](
        x, factor, out, n_total, max(D, 1), max(B, 1), sa, sd, sb,
    )
    return out

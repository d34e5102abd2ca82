"""tritonblas: cuBLAS-compatible batched GEMM on Triton.

C_b = alpha * op(A_b) @ op(B_b) + beta * C_b, column-major operands addressed by
leading dimensions (no copies, no transposes materialised).  Complex routines
work on interleaved (re, im) pairs through ``torch.view_as_real`` views.

Two launches per call:
  1. ``_gemm_beta_kernel``   C <- beta * C        (beta == 0: C is overwritten, never read)
  2. ``_gemm_update_kernel`` C <- C + alpha * op(A) op(B)
"""
import functools
import os
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

# cuBLAS operation codes -> (transposed, conjugated)
_OPS = {
    "N": (False, False), "n": (False, False), 0: (False, False),
    "T": (True, False), "t": (True, False), 1: (True, False),
    "C": (True, True), "c": (True, True), 2: (True, True),
}


def _parse_op(op):
    if hasattr(op, "value"):  # enum-like
        op = op.value
    return _OPS[op]


def _tuning_enabled():
    return torch.cuda.is_available() and os.environ.get("TRITON_INTERPRET", "0") != "1"


def _prune_for_backend(configs, named_args, **kwargs):
    # no point in benchmarking tiles far larger than the problem
    m, n = named_args["m"], named_args["n"]
    keep = [c for c in configs if c.kwargs["BLOCK_M"] <= max(16, 2 * m) and c.kwargs["BLOCK_N"] <= max(16, 2 * n)]
    return keep or configs[:1]


def _next_pow2(x):
    return triton.next_power_of_2(max(int(x), 1))


@dataclass(frozen=True)
class GemmPlan:
    """Everything the kernels need, in *element* units of the storage (float) view."""
    m: int
    n: int
    k: int
    # op(A)[i, p] = A[i * sa_m + p * sa_k]; op(B)[p, j] = B[p * sb_k + j * sb_n]
    sa_m: int
    sa_k: int
    sb_k: int
    sb_n: int
    ldc: int
    conj_a: bool
    conj_b: bool
    is_complex: bool
    is_f64: bool

    @staticmethod
    def build(transa, transb, m, n, k, lda, ldb, ldc, dtype):
        ta, ca = _parse_op(transa)
        tb, cb = _parse_op(transb)
        is_complex = dtype.is_complex
        # column-major: X[i, j] at i + j * ld; a transpose just swaps the two strides
        sa_m, sa_k = (lda, 1) if ta else (1, lda)
        sb_k, sb_n = (ldb, 1) if tb else (1, ldb)
        return GemmPlan(int(m), int(n), int(k), sa_m, sa_k, sb_k, sb_n, int(ldc),
                        ca and is_complex, cb and is_complex, is_complex,
                        dtype in (torch.float64, torch.complex128))

    @property
    def acc_dtype(self):
        return torch.float64 if self.is_f64 else torch.float32


def _storage_view(t):
    """Real-typed view sharing t's data pointer (interleaved pairs for complex)."""
    return torch.view_as_real(t) if t.is_complex() else t


@functools.lru_cache(maxsize=256)
def _pointer_table(ptrs, device):
    return torch.tensor(ptrs, dtype=torch.int64, device=device)


def _ptr_array(tensors, batch_count):
    tensors = list(tensors)[:batch_count]
    return _pointer_table(tuple(int(t.data_ptr()) for t in tensors), tensors[0].device)


def _as_scalar(v):
    if isinstance(v, torch.Tensor):  # 0-d host scalar
        v = v.item()
    if isinstance(v, (list, tuple)):  # (re, im) pair
        v = complex(v[0], v[1] if len(v) > 1 else 0.0)
    return complex(v)


def _scalars(plan, alpha, beta, device):
    a, b = _as_scalar(alpha), _as_scalar(beta)
    # device-side scalars (CUBLAS_POINTER_MODE_DEVICE style) keep fp64 exact
    return torch.tensor([a.real, a.imag, b.real, b.imag], dtype=plan.acc_dtype, device=device)


# ----------------------------------------------------------------------------- kernels
@triton.jit
def _batch_base(ptr, b, batch_stride, PTR_ARRAY: tl.constexpr, IS_F64: tl.constexpr):
    if PTR_ARRAY:
        addr = tl.load(ptr + b)
        if IS_F64:
            base = addr.to(tl.pointer_type(tl.float64))
        else:
            base = addr.to(tl.pointer_type(tl.float32))
    else:
        base = ptr + b.to(tl.int64) * batch_stride
    return base


@triton.jit
def _gemm_beta_kernel(
    C, stride_cb, m, n, ldc, scal_ptr,
    PTR_ARRAY: tl.constexpr, IS_COMPLEX: tl.constexpr, IS_F64: tl.constexpr,
    BETA_ZERO: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    b = tl.program_id(2)
    c_base = _batch_base(C, b, stride_cb, PTR_ARRAY, IS_F64)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < m) & (rn[None, :] < n)
    off = rm[:, None].to(tl.int64) + rn[None, :].to(tl.int64) * ldc
    if IS_COMPLEX:
        off = off * 2
        if BETA_ZERO:
            z = tl.zeros([BLOCK_M, BLOCK_N], dtype=c_base.dtype.element_ty)
            tl.store(c_base + off, z, mask=mask)
            tl.store(c_base + off + 1, z, mask=mask)
        else:
            br = tl.load(scal_ptr + 2)
            bi = tl.load(scal_ptr + 3)
            cr = tl.load(c_base + off, mask=mask, other=0.0)
            ci = tl.load(c_base + off + 1, mask=mask, other=0.0)
            tl.store(c_base + off, br * cr - bi * ci, mask=mask)
            tl.store(c_base + off + 1, br * ci + bi * cr, mask=mask)
    else:
        if BETA_ZERO:
            tl.store(c_base + off, tl.zeros([BLOCK_M, BLOCK_N], dtype=c_base.dtype.element_ty), mask=mask)
        else:
            beta = tl.load(scal_ptr + 2)
            c = tl.load(c_base + off, mask=mask, other=0.0)
            tl.store(c_base + off, beta * c, mask=mask)


@triton.jit
def _gemm_update_kernel(
    A, B, C, stride_ab, stride_bb, stride_cb,
    m, n, k, sa_m, sa_k, sb_k, sb_n, ldc, scal_ptr,
    PTR_ARRAY: tl.constexpr, IS_COMPLEX: tl.constexpr, IS_F64: tl.constexpr,
    CONJ_A: tl.constexpr, CONJ_B: tl.constexpr, EVEN_K: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    b = tl.program_id(2)
    a_base = _batch_base(A, b, stride_ab, PTR_ARRAY, IS_F64)
    b_base = _batch_base(B, b, stride_bb, PTR_ARRAY, IS_F64)
    c_base = _batch_base(C, b, stride_cb, PTR_ARRAY, IS_F64)

    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    mask_m = rm < m
    mask_n = rn < n
    a_off = rm[:, None].to(tl.int64) * sa_m + rk[None, :].to(tl.int64) * sa_k
    b_off = rk[:, None].to(tl.int64) * sb_k + rn[None, :].to(tl.int64) * sb_n
    if IS_COMPLEX:
        a_off = a_off * 2
        b_off = b_off * 2
        step_a = 2 * BLOCK_K * sa_k
        step_b = 2 * BLOCK_K * sb_k
    else:
        step_a = BLOCK_K * sa_k
        step_b = BLOCK_K * sb_k

    acc_dt = tl.float64 if IS_F64 else tl.float32
    acc_r = tl.zeros([BLOCK_M, BLOCK_N], dtype=acc_dt)
    if IS_COMPLEX:
        acc_i = tl.zeros([BLOCK_M, BLOCK_N], dtype=acc_dt)

    for kk in range(0, k, BLOCK_K):
        if EVEN_K:
            ma = mask_m[:, None]
            mb = mask_n[None, :]
        else:
            ma = mask_m[:, None] & (rk[None, :] < k - kk)
            mb = (rk[:, None] < k - kk) & mask_n[None, :]
        if IS_COMPLEX:
            ar = tl.load(a_base + a_off, mask=ma, other=0.0)
            ai = tl.load(a_base + a_off + 1, mask=ma, other=0.0)
            br = tl.load(b_base + b_off, mask=mb, other=0.0)
            bi = tl.load(b_base + b_off + 1, mask=mb, other=0.0)
            if CONJ_A:
                ai = -ai
            if CONJ_B:
                bi = -bi
            acc_r += tl.dot(ar, br, input_precision="ieee")
            acc_r -= tl.dot(ai, bi, input_precision="ieee")
            acc_i += tl.dot(ar, bi, input_precision="ieee")
            acc_i += tl.dot(ai, br, input_precision="ieee")
        else:
            a = tl.load(a_base + a_off, mask=ma, other=0.0)
            bt = tl.load(b_base + b_off, mask=mb, other=0.0)
            acc_r += tl.dot(a, bt, input_precision="ieee")
        a_off += step_a
        b_off += step_b

    mask = mask_m[:, None] & mask_n[None, :]
    c_off = rm[:, None].to(tl.int64) + rn[None, :].to(tl.int64) * ldc
    al_r = tl.load(scal_ptr)
    if IS_COMPLEX:
        al_i = tl.load(scal_ptr + 1)
        c_off = c_off * 2
        cr = tl.load(c_base + c_off, mask=mask, other=0.0)
        ci = tl.load(c_base + c_off + 1, mask=mask, other=0.0)
        tl.store(c_base + c_off, cr + (al_r * acc_r - al_i * acc_i), mask=mask)
        tl.store(c_base + c_off + 1, ci + (al_r * acc_i + al_i * acc_r), mask=mask)
    else:
        c = tl.load(c_base + c_off, mask=mask, other=0.0)
        tl.store(c_base + c_off, c + al_r * acc_r, mask=mask)


def _gemm_configs():
    configs = [
        triton.Config({"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16}, num_warps=4),
        triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}, num_warps=2),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=4),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 64, "BLOCK_K": 32}, num_warps=8),
    ]
    # The interpreter has no benchmarker: a single config means no tuning run.
    return configs if _tuning_enabled() else configs[:1]


_EVEN_K = {"EVEN_K": lambda args: args["k"] % args["BLOCK_K"] == 0}

# Strided operands: autotune, restoring C between benchmark runs (the update is in place).
_gemm_update_strided = triton.autotune(
    configs=_gemm_configs(),
    key=["m", "n", "k", "IS_COMPLEX", "IS_F64"],
    prune_configs_by={"early_config_prune": _prune_for_backend},
    restore_value=["C"],
)(triton.heuristics(_EVEN_K)(_gemm_update_kernel))

# Pointer arrays: restore_value cannot see through a pointer table, so pick tiles by heuristic.
_gemm_update_ptrarray = triton.heuristics({
    "BLOCK_M": lambda a: 16 if a["m"] <= 16 else 32,
    "BLOCK_N": lambda a: 16 if a["n"] <= 16 else 32,
    "BLOCK_K": lambda a: 16 if a["k"] <= 16 else 32,
})(triton.heuristics(_EVEN_K)(_gemm_update_kernel))


def _gemm(plan, alpha, beta, A, B, C, batch_count, strides=None):
    """strides=(strideA, strideB, strideC) for strided batches, None for pointer arrays."""
    if plan.m <= 0 or plan.n <= 0 or batch_count <= 0:
        return
    ptr_array = strides is None
    if ptr_array:
        dev = C[0].device
        a_arg, b_arg, c_arg = (_ptr_array(x, batch_count) for x in (A, B, C))
        s_a = s_b = s_c = 0
    else:
        dev = C.device
        a_arg, b_arg, c_arg = _storage_view(A), _storage_view(B), _storage_view(C)
        w = 2 if plan.is_complex else 1  # batch strides in storage elements
        s_a, s_b, s_c = (int(s) * w for s in strides)
    scal = _scalars(plan, alpha, beta, dev)
    alpha_zero = _as_scalar(alpha) == 0
    beta_one = _as_scalar(beta) == 1
    do_update = not alpha_zero and plan.k > 0

    # pass 1: C <- beta * C (skipped when it is the identity and an update follows)
    if not (beta_one and do_update):
        bm, bn = min(64, max(16, _next_pow2(plan.m))), min(64, max(16, _next_pow2(plan.n)))
        grid = (triton.cdiv(plan.m, bm), triton.cdiv(plan.n, bn), batch_count)
        _gemm_beta_kernel[grid](
            c_arg, s_c, plan.m, plan.n, plan.ldc, scal,
            PTR_ARRAY=ptr_array, IS_COMPLEX=plan.is_complex, IS_F64=plan.is_f64,
            BETA_ZERO=_as_scalar(beta) == 0, BLOCK_M=bm, BLOCK_N=bn,
        )
    if not do_update:
        return

    # pass 2: C += alpha * op(A) op(B)
    def grid(meta):
        return (triton.cdiv(plan.m, meta["BLOCK_M"]), triton.cdiv(plan.n, meta["BLOCK_N"]), batch_count)

    kern = _gemm_update_ptrarray if ptr_array else _gemm_update_strided
    kern[grid](
        a_arg, b_arg, c_arg, s_a, s_b, s_c,
        plan.m, plan.n, plan.k, plan.sa_m, plan.sa_k, plan.sb_k, plan.sb_n, plan.ldc, scal,
        PTR_ARRAY=ptr_array, IS_COMPLEX=plan.is_complex, IS_F64=plan.is_f64,
        CONJ_A=plan.conj_a, CONJ_B=plan.conj_b,
    )


# ----------------------------------------------------------------------------- entry point
def cublasCgemmStridedBatched(transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount):
    plan = GemmPlan.build(transa, transb, m, n, k, lda, ldb, ldc, torch.complex64)
    _gemm(plan, alpha, beta, A, B, C, int(batchCount), strides=(strideA, strideB, strideC))
    return C

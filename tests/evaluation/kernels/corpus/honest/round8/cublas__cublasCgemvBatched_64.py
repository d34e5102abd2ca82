"""tritonblas: cuBLAS-compatible batched GEMV on Triton.

y_b = alpha * op(A_b) x_b + beta * y_b with column-major A (leading dimension lda)
and strided vectors (incx / incy).  'N' and 'T'/'C' share one kernel: op(A) is just
A read with its two strides swapped, and 'C' flips the sign of the imaginary part.
Complex data is handled as interleaved (re, im) pairs through torch.view_as_real.
"""
import functools
from dataclasses import dataclass

import torch
import triton
import triton.language as tl

_OPS = {
    "N": (False, False), "n": (False, False), 0: (False, False),
    "T": (True, False), "t": (True, False), 1: (True, False),
    "C": (True, True), "c": (True, True), 2: (True, True),
}


def _parse_op(op):
    if hasattr(op, "value"):
        op = op.value
    return _OPS[op]


def _as_scalar(v):
    if isinstance(v, torch.Tensor):
        v = v.item()
    if isinstance(v, (list, tuple)):
        v = complex(v[0], v[1] if len(v) > 1 else 0.0)
    return complex(v)


@dataclass(frozen=True)
class GemvPlan:
    out_len: int      # rows of op(A) == len(y)
    red_len: int      # cols of op(A) == len(x)
    s_out: int        # op(A)[o, r] = A[o * s_out + r * s_red]
    s_red: int
    incx: int
    incy: int
    conj: bool
    is_complex: bool
    is_f64: bool

    @staticmethod
    def build(trans, m, n, lda, incx, incy, dtype):
        transposed, conj = _parse_op(trans)
        cplx = dtype.is_complex
        if transposed:
            out_len, red_len, s_out, s_red = n, m, lda, 1
        else:
            out_len, red_len, s_out, s_red = m, n, 1, lda
        return GemvPlan(int(out_len), int(red_len), s_out, s_red, int(incx), int(incy),
                        conj and cplx, cplx, dtype in (torch.float64, torch.complex128))

    @property
    def acc_dtype(self):
        return torch.float64 if self.is_f64 else torch.float32


def _storage_view(t):
    return torch.view_as_real(t) if t.is_complex() else t


@functools.lru_cache(maxsize=256)
def _pointer_table(ptrs, device):
    return torch.tensor(ptrs, dtype=torch.int64, device=device)


def _ptr_array(tensors, batch_count):
    tensors = list(tensors)[:batch_count]
    return _pointer_table(tuple(int(t.data_ptr()) for t in tensors), tensors[0].device)


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


def _block(n, lo, hi):
    return max(lo, min(hi, triton.next_power_of_2(max(int(n), 1))))


@triton.heuristics({
    "BLOCK_OUT": lambda a: _block(a["out_len"], 16, 64),
    "BLOCK_RED": lambda a: _block(a["red_len"], 16, 128),
})
@triton.jit
def _gemv_kernel(
    A, X, Y, stride_ab, stride_xb, stride_yb,
    out_len, red_len, s_out, s_red, incx, incy, scal_ptr,
    PTR_ARRAY: tl.constexpr, IS_COMPLEX: tl.constexpr, IS_F64: tl.constexpr,
    CONJ: tl.constexpr, SKIP_AX: tl.constexpr, BETA_ZERO: tl.constexpr,
    BLOCK_OUT: tl.constexpr, BLOCK_RED: tl.constexpr,
):
    pid = tl.program_id(0)
    b = tl.program_id(1)
    ro = pid * BLOCK_OUT + tl.arange(0, BLOCK_OUT)
    mask_o = ro < out_len
    y_base = _batch_base(Y, b, stride_yb, PTR_ARRAY, IS_F64)
    acc_dt = tl.float64 if IS_F64 else tl.float32
    W: tl.constexpr = 2 if IS_COMPLEX else 1      # storage elements per logical element

    acc_r = tl.zeros([BLOCK_OUT], dtype=acc_dt)
    acc_i = tl.zeros([BLOCK_OUT], dtype=acc_dt)
    if not SKIP_AX:
        a_base = _batch_base(A, b, stride_ab, PTR_ARRAY, IS_F64)
        x_base = _batch_base(X, b, stride_xb, PTR_ARRAY, IS_F64)
        rr = tl.arange(0, BLOCK_RED)
        a_row = ro[:, None].to(tl.int64) * s_out
        for r0 in range(0, red_len, BLOCK_RED):
            red = r0 + rr
            mask_r = red < red_len
            a_off = (a_row + red[None, :].to(tl.int64) * s_red) * W
            x_off = red.to(tl.int64) * incx * W
            m2 = mask_o[:, None] & mask_r[None, :]
            ar = tl.load(a_base + a_off, mask=m2, other=0.0)
            xr = tl.load(x_base + x_off, mask=mask_r, other=0.0)
            if IS_COMPLEX:
                ai = tl.load(a_base + a_off + 1, mask=m2, other=0.0)
                xi = tl.load(x_base + x_off + 1, mask=mask_r, other=0.0)
                if CONJ:
                    ai = -ai
                acc_r += tl.sum(ar * xr[None, :] - ai * xi[None, :], axis=1)
                acc_i += tl.sum(ar * xi[None, :] + ai * xr[None, :], axis=1)
            else:
                acc_r += tl.sum(ar * xr[None, :], axis=1)

    y_off = ro.to(tl.int64) * incy * W
    al_r = tl.load(scal_ptr)
    be_r = tl.load(scal_ptr + 2)
    if IS_COMPLEX:
        al_i = tl.load(scal_ptr + 1)
        be_i = tl.load(scal_ptr + 3)
        out_r = al_r * acc_r - al_i * acc_i
        out_i = al_r * acc_i + al_i * acc_r
        if not BETA_ZERO:
            yr = tl.load(y_base + y_off, mask=mask_o, other=0.0)
            yi = tl.load(y_base + y_off + 1, mask=mask_o, other=0.0)
            out_r += be_r * yr - be_i * yi
            out_i += be_r * yi + be_i * yr
        tl.store(y_base + y_off, out_r, mask=mask_o)
        tl.store(y_base + y_off + 1, out_i, mask=mask_o)
    else:
        out = al_r * acc_r
        if not BETA_ZERO:
            out += be_r * tl.load(y_base + y_off, mask=mask_o, other=0.0)
        tl.store(y_base + y_off, out, mask=mask_o)


def _gemv(plan, alpha, beta, A, x, y, batch_count, strides=None):
    """strides=(strideA, stridex, stridey) for strided batches, None for pointer arrays."""
    if plan.out_len <= 0 or batch_count <= 0:
        return
    alpha, beta = _as_scalar(alpha), _as_scalar(beta)
    ptr_array = strides is None
    if ptr_array:
        dev = y[0].device
        a_arg, x_arg, y_arg = (_ptr_array(t, batch_count) for t in (A, x, y))
        s_a = s_x = s_y = 0
    else:
        dev = y.device
        a_arg, x_arg, y_arg = _storage_view(A), _storage_view(x), _storage_view(y)
        w = 2 if plan.is_complex else 1
        s_a, s_x, s_y = (int(s) * w for s in strides)
    scal = torch.tensor([alpha.real, alpha.imag, beta.real, beta.imag], dtype=plan.acc_dtype, device=dev)

    def grid(meta):
        return (triton.cdiv(plan.out_len, meta["BLOCK_OUT"]), batch_count)

    _gemv_kernel[grid](
        a_arg, x_arg, y_arg, s_a, s_x, s_y,
        plan.out_len, plan.red_len, plan.s_out, plan.s_red, plan.incx, plan.incy, scal,
        PTR_ARRAY=ptr_array, IS_COMPLEX=plan.is_complex, IS_F64=plan.is_f64, CONJ=plan.conj,
        SKIP_AX=(alpha == 0 or plan.red_len == 0), BETA_ZERO=(beta == 0),
    )


# ----------------------------------------------------------------------------- entry point
def cublasCgemvBatched_64(trans, m, n, alpha, Aarray, lda, xarray, incx, beta, yarray, incy, batchCount):
    plan = GemvPlan.build(trans, m, n, lda, incx, incy, torch.complex64)
    _gemv(plan, alpha, beta, Aarray, xarray, yarray, int(batchCount))
    return yarray

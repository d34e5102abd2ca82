"""aten::pow (Tensor_Tensor, Tensor_Scalar, Scalar) in Triton.

All three overloads go through one broadcasting binary kernel.  A Python scalar
operand becomes a one-element buffer read with stride 0, so it keeps its full
precision (float64 results need a float64 exponent, which a Triton scalar
argument -- always fp32 -- could not carry).

Floating results: float16/bfloat16/float32 are computed in float32 and float64
in float64.  On GPU backends the kernel calls libdevice.pow; the CPU interpreter
cannot run extern libdevice calls, so there the kernel evaluates
sign * exp2(e * log2|b|) in float64 with explicit IEEE pow special cases.
Integral results use exact square-and-multiply.
"""
import functools
import math

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


def _interpreting() -> bool:
    return bool(triton.knobs.runtime.interpret)


@triton.jit
def _offsets(lin, shape, b_strides, e_strides, RANK: tl.constexpr):
    b_off = tl.zeros_like(lin)
    e_off = tl.zeros_like(lin)
    rem = lin
    for d in tl.static_range(RANK - 1, -1, -1):
        coord = rem % shape[d]
        rem = rem // shape[d]
        b_off += coord * b_strides[d]
        e_off += coord * e_strides[d]
    return b_off, e_off


@triton.jit
def _pow_portable(b, e):
    """IEEE-754 pow built from exp2/log2 (computed in float64)."""
    b = b.to(tl.float64)
    e = e.to(tl.float64)
    mag = tl.exp2(e * tl.log2(tl.abs(b)))
    e_floor = tl.floor(e)
    is_int = e_floor == e
    is_odd = is_int & ((e - 2.0 * tl.floor(e * 0.5)) == 1.0)
    neg = tl.where(is_odd, -mag, mag)
    res = tl.where(b < 0, tl.where(is_int, neg, float("nan")), mag)
    res = tl.where(b == 1.0, 1.0, res)   # 1 ** anything (even nan) == 1
    res = tl.where(e == 0.0, 1.0, res)   # anything ** 0 (even nan) == 1
    return res


@triton.jit
def _pow_integral(b, e):
    """Exact integer power by square-and-multiply (torch's powi semantics)."""
    b = b.to(tl.int64)
    e = e.to(tl.int64)
    result = tl.full(b.shape, 1, tl.int64)
    base = b
    k = tl.where(e < 0, 0, e)
    for _ in tl.static_range(63):
        result = tl.where((k & 1) != 0, result * base, result)
        base = base * base
        k = k >> 1
    neg_exp = tl.where(b == 1, 1, tl.where(b == -1, tl.where((e & 1) != 0, -1, 1), 0))
    return tl.where(e < 0, neg_exp, result)


@triton.heuristics({
    "USE_LIBDEVICE": lambda args: not _interpreting(),
    "INTEGRAL": lambda args: not args["out_ptr"].dtype.is_floating_point,
    "WIDE": lambda args: args["out_ptr"].dtype == torch.float64,
})
@triton.jit(do_not_specialize=["n_elements"])
def _pow_kernel(b_ptr, e_ptr, out_ptr, n_elements, shape, b_strides, e_strides,
                RANK: tl.constexpr, USE_LIBDEVICE: tl.constexpr, INTEGRAL: tl.constexpr,
                WIDE: tl.constexpr, BLOCK: tl.constexpr):
    lin = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    mask = lin < n_elements
    b_off, e_off = _offsets(lin, shape, b_strides, e_strides, RANK)
    b = tl.load(b_ptr + b_off, mask=mask, other=1)
    e = tl.load(e_ptr + e_off, mask=mask, other=1)
    if INTEGRAL:
        y = _pow_integral(b, e)
    else:
        compute: tl.constexpr = tl.float64 if WIDE else tl.float32
        if USE_LIBDEVICE:
            y = libdevice.pow(b.to(compute), e.to(compute))
        else:
            y = _pow_portable(b, e).to(compute)  # fp64 -> fp32 first: the interpreter's
            # direct fp64 -> bf16 conversion produces garbage
    tl.store(out_ptr + lin, y.to(out_ptr.dtype.element_ty), mask=mask)


class _BroadcastPow:
    """Launcher: broadcasts the operands (stride-0 views), allocates the dense
    result and launches the kernel over it."""

    def __init__(self, block: int = 4096, max_rank: int = 8):
        self.block = block
        self.max_rank = max_rank

    @staticmethod
    def scalar_operand(value, out_dtype: torch.dtype, device) -> torch.Tensor:
        if out_dtype.is_floating_point:
            holder = torch.float64 if out_dtype == torch.float64 else torch.float32
        else:
            holder = torch.int64
        return torch.full((), value, dtype=holder, device=device)

    def __call__(self, base: torch.Tensor, exponent: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
        shape = tuple(torch.broadcast_shapes(base.shape, exponent.shape))
        if len(shape) > self.max_rank:
            raise NotImplementedError(f"pow: rank {len(shape)} > {self.max_rank}")
        out = torch.empty(shape, dtype=out_dtype, device=base.device)
        n = math.prod(shape)
        base_v, exp_v = base.expand(shape), exponent.expand(shape)
        if shape:
            k_shape = tuple(max(1, s) for s in shape)
            b_strides, e_strides = tuple(base_v.stride()), tuple(exp_v.stride())
        else:
            k_shape, b_strides, e_strides = (1,), (0,), (0,)
        grid = (max(1, triton.cdiv(n, self.block)),)
        _pow_kernel[grid](base_v, exp_v, out, n, k_shape, b_strides, e_strides,
                          RANK=len(k_shape), BLOCK=self.block)
        return out


_launch = _BroadcastPow()


def _with_scalar(tensor: torch.Tensor, scalar, out_dtype, scalar_is_base: bool):
    s = _BroadcastPow.scalar_operand(scalar, out_dtype, tensor.device)
    return _launch(s, tensor, out_dtype) if scalar_is_base else _launch(tensor, s, out_dtype)


_pow_scalar_exponent = functools.partial(_with_scalar, scalar_is_base=False)
_pow_scalar_base = functools.partial(_with_scalar, scalar_is_base=True)


@torch.no_grad()
def pow_Tensor_Tensor(self: torch.Tensor, exponent: torch.Tensor) -> torch.Tensor:
    return _launch(self, exponent, torch.result_type(self, exponent))


@torch.no_grad()
def pow_Tensor_Scalar(self: torch.Tensor, exponent) -> torch.Tensor:
    return _pow_scalar_exponent(self, exponent, torch.result_type(self, exponent))


@torch.no_grad()
def pow_Scalar(self, exponent: torch.Tensor) -> torch.Tensor:
    return _pow_scalar_base(exponent, self, torch.result_type(self, exponent))

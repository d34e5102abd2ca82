"""aten::pow, three overloads: tensor**tensor, tensor**scalar, scalar**tensor.

Integer-valued exponents are handled by repeated squaring so that negative bases keep their sign
(exp2(y * log2(x)) is only defined for x > 0)."""
from __future__ import annotations

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _int_power(x, e):
    # x ** e for an integer-valued float tensor e (|e| <= 64), by binary exponentiation
    n = tl.abs(e).to(tl.int32)
    result = tl.full(x.shape, 1.0, tl.float32)
    base = x
    for _ in tl.static_range(7):
        result = tl.where((n & 1) != 0, result * base, result)
        base = base * base
        n = n >> 1
    return tl.where(e < 0, 1.0 / result, result)


@triton.jit
def _pow_values(x, e):
    integral = e == tl.floor(e)
    general = tl.exp2(e * tl.log2(tl.abs(x)))
    general = tl.where(x < 0, float("nan"), general)
    general = tl.where(x == 0, tl.where(e > 0, 0.0, tl.where(e == 0, 1.0, float("inf"))), general)
    small_int = integral & (tl.abs(e) <= 64)
    return tl.where(small_int, _int_power(x, e), general)


@triton.jit
def _pow_kernel(base_ptr, exp_ptr, out_ptr, base_value, exp_value, numel,
                BASE_IS_SCALAR: tl.constexpr, EXP_IS_SCALAR: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < numel
    if BASE_IS_SCALAR:
        x = tl.full((BLOCK,), base_value, tl.float32)
    else:
        x = tl.load(base_ptr + offsets, mask=mask, other=1).to(tl.float32)
    if EXP_IS_SCALAR:
        e = tl.full((BLOCK,), exp_value, tl.float32)
    else:
        e = tl.load(exp_ptr + offsets, mask=mask, other=1).to(tl.float32)
    tl.store(out_ptr + offsets, _pow_values(x, e).to(out_ptr.dtype.element_ty), mask=mask)


def _dense(t: torch.Tensor, shape) -> torch.Tensor:
    return t.expand(shape).contiguous()


def _out_shape(*shapes):
    rank = max(len(s) for s in shapes)
    result = []
    for d in range(rank):
        sizes = {s[d - rank + len(s)] for s in shapes if d - rank + len(s) >= 0} - {1}
        result.append(sizes.pop() if sizes else 1)
    return result


def _launch(base, exponent, like: torch.Tensor, shape) -> torch.Tensor:
    out = torch.empty(shape, dtype=like.dtype, device=like.device)
    numel = math.prod(shape)
    if numel == 0:
        return out
    b_scalar = not isinstance(base, torch.Tensor)
    e_scalar = not isinstance(exponent, torch.Tensor)
    b = out if b_scalar else _dense(base, shape)
    e = out if e_scalar else _dense(exponent, shape)
    _pow_kernel[(triton.cdiv(numel, 512),)](
        b, e, out,
        float(base) if b_scalar else 0.0, float(exponent) if e_scalar else 0.0, numel,
        BASE_IS_SCALAR=b_scalar, EXP_IS_SCALAR=e_scalar, BLOCK=512,
    )
    return out


def pow_Tensor_Tensor(self: torch.Tensor, exponent: torch.Tensor) -> torch.Tensor:
    return _launch(self, exponent, self, _out_shape(self.shape, exponent.shape))


def pow_Tensor_Scalar(self: torch.Tensor, exponent) -> torch.Tensor:
    return _launch(self, exponent, self, list(self.shape))


def pow_Scalar(self, exponent: torch.Tensor) -> torch.Tensor:
    return _launch(self, exponent, exponent, list(exponent.shape))

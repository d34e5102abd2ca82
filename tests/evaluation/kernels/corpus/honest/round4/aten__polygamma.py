import functools
import math
from fractions import Fraction

import torch
import triton
import triton.language as tl

PI = tl.constexpr(math.pi)
PI_SQ = tl.constexpr(math.pi * math.pi)
SHIFT_TO = tl.constexpr(10.0)  # recurrence moves the argument to >= this before the asymptotic series

# Bernoulli numbers B_2 .. B_10 (exact)
_BERNOULLI = [Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66)]


@functools.lru_cache(maxsize=None)
def _zeta_coeffs(s):
    """c_j = B_2j / (2j)! * s (s+1) ... (s+2j-2) for the Euler-Maclaurin tail of zeta(s, z)."""
    out = []
    for j, b in enumerate(_BERNOULLI, start=1):
        rising = 1
        for i in range(2 * j - 1):
            rising *= s + i
        out.append(float(b * rising / math.factorial(2 * j)))
    return tuple(out)


@triton.jit
def _digamma(x):
    # reflection for negative arguments: psi(x) = psi(1 - x) - pi / tan(pi x)
    neg = x < 0
    refl = PI / (tl.sin(PI * x) / tl.cos(PI * x))
    y = tl.where(neg, 1.0 - x, x)
    acc = tl.zeros_like(y)
    for _ in tl.static_range(10):
        small = y < SHIFT_TO
        acc = tl.where(small, acc - 1.0 / y, acc)
        y = tl.where(small, y + 1.0, y)
    r = 1.0 / y
    r2 = r * r
    series = r2 * (1.0 / 12 - r2 * (1.0 / 120 - r2 * (1.0 / 252 - r2 * (1.0 / 240 - r2 * (1.0 / 132)))))
    res = acc + tl.log(y) - 0.5 * r - series
    res = tl.where(neg, res - refl, res)
    # poles: psi(0) = -inf (aten: copysign(inf, -x)), negative integers -> nan
    res = tl.where(x == 0, -1.0 / x, res)
    res = tl.where(neg & (x == tl.floor(x)), float("nan"), res)
    return res


@triton.jit
def _hurwitz_tail(z, S: tl.constexpr, c1, c2, c3, c4, c5):
    # zeta(S, z) for z >= SHIFT_TO by Euler-Maclaurin
    r = 1.0 / z
    r2 = r * r
    rs = r
    for _ in tl.static_range(S - 1):
        rs = rs * r
    # rs = z^-S
    poly = c1 + r2 * (c2 + r2 * (c3 + r2 * (c4 + r2 * c5)))
    return rs * (z / (S - 1) + 0.5 + r * poly)


@triton.jit
def _inv_pow(t, S: tl.constexpr):
    r = 1.0 / t
    p = r
    for _ in tl.static_range(S - 1):
        p = p * r
    return p


@triton.jit
def _polygamma_kernel(
    x_ptr, out_ptr, numel, sign_fact,
    c1, c2, c3, c4, c5,
    N: tl.constexpr, COMPUTE_T: tl.constexpr, BLOCK: tl.constexpr,
):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < numel
    x = tl.load(x_ptr + offs, mask=mask, other=1.0).to(COMPUTE_T)
    if N == 0:
        res = _digamma(x)
    elif N == 1:
        # trigamma, with aten's reflection below 1/2
        low = x < 0.5
        s = tl.sin(PI * x)
        y = tl.where(low, 1.0 - x, x)
        acc = tl.zeros_like(y)
        for _ in tl.static_range(10):
            small = y < SHIFT_TO
            acc = tl.where(small, acc + 1.0 / (y * y), acc)
            y = tl.where(small, y + 1.0, y)
        z = acc + _hurwitz_tail(y, 2, c1, c2, c3, c4, c5)
        res = tl.where(low, PI_SQ / (s * s) - z, z)
    else:
        # (-1)^(n+1) n! zeta(n+1, x); the series also holds for negative non-integer x
        y = x
        acc = tl.zeros_like(y)
        steps = tl.max(tl.where(mask, tl.maximum(tl.ceil(SHIFT_TO - x), 0.0), 0.0))
        for _ in range(steps.to(tl.int32)):
            small = y < SHIFT_TO
            acc = tl.where(small, acc + _inv_pow(y, N + 1), acc)
            y = tl.where(small, y + 1.0, y)
        res = sign_fact * (acc + _hurwitz_tail(y, N + 1, c1, c2, c3, c4, c5))
    tl.store(out_ptr + offs, res.to(out_ptr.dtype.element_ty), mask=mask)


_BLOCK = 1024


def polygamma(n, self):
    n = int(n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    out_dtype = self.dtype if self.dtype.is_floating_point else torch.get_default_dtype()
    x = self.contiguous()
    out = torch.empty(self.shape, dtype=out_dtype, device=self.device)
    numel = x.numel()
    coeffs = _zeta_coeffs(max(n, 1) + 1)
    sign_fact = float((-1) ** (n + 1) * math.factorial(n))
    compute_t = tl.float64 if out_dtype == torch.float64 else tl.float32
    grid = (max(1, triton.cdiv(numel, _BLOCK)),)
    _polygamma_kernel[grid](
        x, out, numel, sign_fact, *coeffs,
        N=n, COMPUTE_T=compute_t, BLOCK=_BLOCK,
    )
    return out

"""What staged low-precision arithmetic can honestly give: ranges for a record's ``exact_formula``.

An op that rounds its intermediate steps to the tensor's dtype (ATen's composite losses, atomics adding in
half) has no single right answer: where a step lands next to a rounding boundary, fp32 math of the same
step, another order of the same sum or another device's ``log`` rounds it to the other neighbour, and after
cancellation that one step moves the result by many units in its last place. ``Staged`` follows such a
formula in float64 beside a bound on how far any evaluation that rounds each step to nearest can be from
it; ``bounds()`` is the (lowest, highest) range the judge accepts (``compare.exact_alternative_accepts``).
A wrong formula is off by a term, not by roundings, and stays outside.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

UNIT_ROUNDOFF = {torch.float16: 2.0**-11, torch.bfloat16: 2.0**-8, torch.float32: 2.0**-24}

# A step computed in fp32 and rounded to nearest lands within the unit roundoff of its exact value, plus
# the fp32 step's own error (a few fp32 units, a relative 2^-21 at most) where it sits at a midpoint.
FP32_STEP = 1.0 + 2.0**-10


# How far fp32 math of one formula may land from the exact value it rounds to a grid (an integer code's .5,
# the midpoint of two half or float8 values), relative: a few fp32 roundings (a GPU's division is 2 units
# from the correctly rounded quotient). Within it of a tie, the value may round either way.
FP32_TIE = 8 * 2.0**-24


# How far fp32 math of an algebraic step (a GPU's rsqrt.approx, another order of a float32 reduction) may be
# from its exact value, relative: a few fp32 units, with room.
FP32_ALGEBRAIC = 2.0**-18


def rounded_range(
    low: torch.Tensor, high: torch.Tensor, dtype: torch.dtype, slack: float = FP32_ALGEBRAIC
) -> tuple[torch.Tensor, torch.Tensor]:
    """The ``dtype`` values (as float64) that rounding to nearest gives for fp32 math of an algebraic step
    whose exact value lies in [low, high]: the nearest value of each end, or its other neighbour where the
    end sits within ``slack`` (relative) of a midpoint. Tighter than ``Staged`` (whose bound admits any value
    within a unit roundoff) for steps without transcendentals, whose fp32 error is a few units."""
    return (
        (low - slack * low.abs()).to(dtype).to(torch.float64),
        (high + slack * high.abs()).to(dtype).to(torch.float64),
    )


def unit_roundoff(dtype: torch.dtype) -> float:
    """Half a unit in the last place, relative: how far rounding to nearest in ``dtype`` can move a value
    (0 for float64, the judge's exact arithmetic)."""
    return UNIT_ROUNDOFF.get(dtype, 0.0)


@dataclass(frozen=True)
class Staged:
    """A float64 value and a bound on how far a staged evaluation of it can be (elementwise)."""

    value: torch.Tensor
    error: torch.Tensor
    unit: float

    @classmethod
    def exact(cls, value: torch.Tensor, dtype: torch.dtype) -> Staged:
        """A value every evaluation starts from exactly (an input), steps rounded to ``dtype``."""
        value = value.to(torch.float64)
        return cls(value, torch.zeros_like(value), unit_roundoff(dtype))

    def rounded(self) -> Staged:
        """The step's result rounded to the dtype: within a unit roundoff of the computed value."""
        return Staged(self.value, self.error + self.unit * FP32_STEP * (self.value.abs() + self.error), self.unit)

    def _other(self, other: Staged | float) -> Staged:
        if isinstance(other, Staged):
            return other
        constant = torch.as_tensor(float(other), dtype=torch.float64, device=self.value.device)
        return Staged(constant, torch.zeros_like(constant), self.unit)

    def __add__(self, other: Staged | float) -> Staged:
        other = self._other(other)
        return Staged(self.value + other.value, self.error + other.error, self.unit)

    def __radd__(self, other: float) -> Staged:
        return self + other

    def __sub__(self, other: Staged | float) -> Staged:
        other = self._other(other)
        return Staged(self.value - other.value, self.error + other.error, self.unit)

    def __rsub__(self, other: float) -> Staged:
        return self._other(other) - self

    def __mul__(self, other: Staged | float) -> Staged:
        other = self._other(other)
        error = self.value.abs() * other.error + other.value.abs() * self.error + self.error * other.error
        return Staged(self.value * other.value, error, self.unit)

    def __rmul__(self, other: float) -> Staged:
        return self * other

    def total(self, mean: bool = False) -> Staged:
        """The sum (or mean) of every element, accumulated in float32 or wider by blocks and a tree (as
        ``tl.sum`` and ATen's reductions do): the elements' own bounds add up, and each level of the tree
        rounds the partial sums by at most a float32 unit of their magnitudes."""
        count = max(self.value.numel(), 1)
        levels = math.ceil(math.log2(count)) + 1
        magnitude = (self.value.abs() + self.error).sum()
        value, error = self.value.sum(), self.error.sum() + levels * 2.0**-24 * magnitude
        if mean:
            value, error = value / count, error / count
        return Staged(value, error, self.unit)

    def bounds(self) -> tuple[torch.Tensor, torch.Tensor]:
        return self.value - self.error, self.value + self.error


def summed(terms: Sequence[Staged]) -> Staged:
    """A few terms added in any order, each addition rounded to the dtype, or accumulated in float32 and
    rounded once (a dot product of 3 or 4 terms, as bmm in half on a CPU or cuBLAS's float32 accumulation
    give): each of the len - 1 additions moves its partial sum by at most a unit roundoff of the magnitudes
    summed so far, whatever the order."""
    value = sum(term.value for term in terms)
    error = sum(term.error for term in terms)
    magnitude = sum(term.value.abs() + term.error for term in terms)
    unit = terms[0].unit
    return Staged(value, error + (len(terms) - 1) * unit * FP32_STEP * magnitude, unit)

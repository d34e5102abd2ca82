"""Citable ranks: methods whose 95% confidence intervals overlap share a rank, and the page says so.

A board's accuracy is a share of a finite set of operators, so two methods a few operators apart are not
distinguishable. The rule is Chatbot Arena's: a method's rank is one plus the number of methods whose
interval lies wholly above its own. Overlap is not transitive, so A and C may differ while both tie with B;
every row still gets one rank, and rows with equal ranks are marked as ties.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

Z_95 = 1.959963984540054

Row = TypeVar("Row")


@dataclass(frozen=True)
class Rank:
    """One row's place: its rank, whether another row shares it, and the interval it was decided by."""

    position: int
    tied: bool
    low: float  # the interval's bounds, in percent (accuracy) or the figure's own unit
    high: float

    @property
    def label(self) -> str:
        return f"={self.position}" if self.tied else str(self.position)


def wilson_interval(successes: int, total: int, *, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a share, in percent; (0, 100) when nothing was counted.

    Wilson rather than the normal approximation because boards sit near 0% and 100% on small sets, where
    the normal interval leaves [0, 100] or collapses to a point.
    """
    if total <= 0:
        return 0.0, 100.0
    share = successes / total
    denominator = 1 + z * z / total
    centre = (share + z * z / (2 * total)) / denominator
    spread = z * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total)) / denominator
    return 100.0 * max(0.0, centre - spread), 100.0 * min(1.0, centre + spread)


def overlap_ranks(intervals: Sequence[tuple[float, float]]) -> list[Rank]:
    """Rank per interval (higher is better): 1 + how many intervals lie wholly above it."""
    positions = [1 + sum(1 for other_low, _ in intervals if other_low > high) for _, high in intervals]
    counts: dict[int, int] = {}
    for position in positions:
        counts[position] = counts.get(position, 0) + 1
    return [
        Rank(position, counts[position] > 1, low, high)
        for position, (low, high) in zip(positions, intervals, strict=True)
    ]


def rank_rows(rows: Sequence[Row], counts: Callable[[Row], tuple[int, int]]) -> list[Rank]:
    """The rank of each row (in the rows' order) by an accuracy share; ``counts(row)`` gives (solved, total)."""
    return overlap_ranks([wilson_interval(*counts(row)) for row in rows])


def multi_chip_order(rows: list, chips: Sequence, *, keep_order: bool) -> None:
    """Give each multi-chip row its score (mean accuracy over ``chips``; a chip without kernels counts 0%) and
    a rank from the pooled passes over every chip; sort by score unless the page asked for another order."""
    for row in rows:
        summaries = [row.per_chip.get(chip.pk) for chip in chips]
        set_total = next((s.operators_total for s in summaries if s is not None), 0)
        row.score = sum(s.accuracy_pct for s in summaries if s is not None) / len(chips) if chips else 0.0
        row.pooled = (sum(s.solved for s in summaries if s is not None), set_total * len(chips))
    for row, rank in zip(rows, rank_rows(rows, lambda r: r.pooled), strict=True):
        row.rank = rank
    if not keep_order:
        rows.sort(key=lambda r: (-r.score, str(r.method)))

"""The benchmark's metrics as pure functions (PROTOCOL sections 6 and 7). No Django: easy to test and reuse."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TypeVar

import numpy as np

FAST_P_THRESHOLDS: tuple[float, ...] = (0.8, 1.0, 1.5)
K = TypeVar("K")  # what a method is keyed by


def geomean(values: Iterable[float]) -> float | None:
    """Geometric mean of positive values; None when there are none."""
    logs = [math.log(value) for value in values if value is not None and value > 0]
    return math.exp(sum(logs) / len(logs)) if logs else None


def bootstrap_geomean_ci(
    values: Sequence[float], *, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the geometric mean (deterministic for a given seed).

    Each resample draws len(values) logs with ``random.Random(seed).choice``, in order, and averages them
    left to right; computed with NumPy on the same Mersenne Twister stream, to the same bits.
    """
    return bootstrap_geomean_cis([values], resamples=resamples, seed=seed, level=level)[0]


def bootstrap_geomean_cis(
    groups: Sequence[Sequence[float]], *, resamples: int = 2000, seed: int = 0, level: float = 0.95
) -> list[tuple[float, float] | None]:
    """``bootstrap_geomean_ci`` of each group, to the same bits; groups of one size are resampled together
    (the draws depend only on the size and the seed), one column of every group's resamples at a time."""
    logs = [[math.log(value) for value in values if value is not None and value > 0] for values in groups]
    result: list[tuple[float, float] | None] = [None] * len(groups)
    by_count: dict[int, list[int]] = {}
    for index, group_logs in enumerate(logs):
        if len(group_logs) >= 2:
            by_count.setdefault(len(group_logs), []).append(index)
    low_index = int((1 - level) / 2 * resamples)
    high_index = min(resamples - 1, int((1 + level) / 2 * resamples))
    for count, indexes in by_count.items():
        table = np.asarray([logs[index] for index in indexes])  # groups x count
        columns = _bootstrap_columns(count, resamples, seed)  # count x resamples
        sums = table[:, columns[0]]
        for column in columns[1:]:  # the additions of each resample's left-to-right sum, in its order
            sums += table[:, column]
        means = np.sort(sums / count, axis=1)
        for row, index in enumerate(indexes):
            result[index] = (math.exp(means[row, low_index]), math.exp(means[row, high_index]))
    return result


@lru_cache(maxsize=32)
def _bootstrap_columns(count: int, resamples: int, seed: int) -> np.ndarray:
    """``_bootstrap_picks`` by draw position: row j holds every resample's j-th index."""
    columns = np.ascontiguousarray(_bootstrap_picks(count, resamples, seed).T)
    columns.flags.writeable = False
    return columns


@lru_cache(maxsize=32)
def _bootstrap_picks(count: int, resamples: int, seed: int) -> np.ndarray:
    """The indices ``random.Random(seed).choice`` draws from ``count`` items, ``resamples`` rows of ``count``.

    ``choice`` takes ``getrandbits(k)`` (k = count's bit length: the top k bits of one 32-bit Mersenne Twister
    output) until one is below ``count``; NumPy's MT19937, given the same state, yields the same outputs.
    """
    state = random.Random(seed).getstate()[1]
    generator = np.random.MT19937()
    generator.state = {
        "bit_generator": "MT19937",
        "state": {"key": np.array(state[:-1], dtype=np.uint32), "pos": state[-1]},
    }
    shift = 32 - count.bit_length()
    needed = count * resamples
    accepted: list[np.ndarray] = []
    have = 0
    while have < needed:
        draws = (generator.random_raw(2 * (needed - have) + 64) >> shift).astype(np.int64)
        kept = draws[draws < count]
        accepted.append(kept)
        have += len(kept)
    picks = np.concatenate(accepted)[:needed].reshape(resamples, count)
    picks.flags.writeable = False
    return picks


@dataclass
class OperatorOutcome:
    """One method's result on one operator and chip: solved or not, best speedup, what it cost."""

    operator_id: str
    source: str
    solved: bool = False
    speedup: float | None = None  # device-time, of the best passing kernel; None when unknown (CPU) or unsolved
    tokens: int = 0  # every attempt's tokens, failed ones included
    solve_seconds: float = 0.0
    attempts: int = 0
    stale: bool = False  # the deciding run was judged against an older operator version
    flagged: bool = False  # every passing kernel beat the roofline floor: not solved, not ranked
    # The protocol's speedup (PROTOCOL 6, the paper's) of the same deciding kernel; None when unknown
    # (the CPU, a verdict of a judge that did not time that way)
    protocol_speedup: float | None = None
    # The share of that kernel's protocol-timed cases that are launch-bound (0-1): how much of the figure is the
    # race between the host's launch path and the L2 flush. None when unknown (no flush to race: cuBLAS's
    # loop; a judge before the marks; no protocol speedup)
    protocol_launch_bound_share: float | None = None


@dataclass
class Summary:
    """A method's figures over one group of operators (a source, or the whole set)."""

    operators_total: int
    solved: int
    accuracy_pct: float
    speedup_geomean: float | None  # device-time (large cases, launch cost hidden)
    speedup_covered: int  # how many solved operators the speedup averages over
    fast_p: dict[str, float] = field(default_factory=dict)  # "0.8" -> share of ALL operators
    tokens_total: int = 0
    tokens_per_success: float | None = None
    solve_hours: float = 0.0
    stale: int = 0
    # The protocol's speedup (PROTOCOL 6, the paper's headline), by the same rule over the same operators:
    # geometric mean over passed operators with a known one, and how many that is.
    protocol_speedup_geomean: float | None = None
    protocol_speedup_covered: int = 0
    # fast_p by the protocol's speedup: passed operators whose protocol speedup exceeds p, over ALL operators
    # of the group, as fast_p (an operator passed without a protocol speedup is in the denominator only).
    protocol_fast_p: dict[str, float] = field(default_factory=dict)
    # The mean launch-bound share over the passed operators with a protocol speedup and a known share (each
    # operator weighs the same, as in the geomean), and how many that is; None when none has one.
    protocol_launch_bound_share: float | None = None
    protocol_launch_bound_covered: int = 0


@dataclass
class OutcomeTotals:
    """What a Summary is computed from: counts and sums over a group's outcomes (a query can give these)."""

    outcomes: int = 0
    solved: int = 0  # passed cleanly (not flagged)
    covered: int = 0  # of those, with a known speedup
    logged: int = 0  # of those, with a positive speedup: the geomean's
    log_sum: float = 0.0  # their speedups' natural logarithms, summed
    fast: tuple[int, ...] = (0,) * len(FAST_P_THRESHOLDS)  # clean speedups above each threshold
    tokens: int = 0
    solve_seconds: float = 0.0
    stale: int = 0
    protocol_covered: int = 0  # clean passes with a known protocol speedup
    protocol_logged: int = 0  # of those, positive: the protocol geomean's
    protocol_log_sum: float = 0.0
    protocol_fast: tuple[int, ...] = (0,) * len(FAST_P_THRESHOLDS)  # clean protocol speedups above each
    protocol_launch_bound_covered: int = 0  # of the clean protocol speedups, those with a known launch-bound share
    protocol_launch_bound_sum: float = 0.0  # their shares, summed

    def __add__(self, other: OutcomeTotals) -> OutcomeTotals:
        return OutcomeTotals(
            outcomes=self.outcomes + other.outcomes,
            solved=self.solved + other.solved,
            covered=self.covered + other.covered,
            logged=self.logged + other.logged,
            log_sum=self.log_sum + other.log_sum,
            fast=tuple(a + b for a, b in zip(self.fast, other.fast, strict=True)),
            tokens=self.tokens + other.tokens,
            solve_seconds=self.solve_seconds + other.solve_seconds,
            stale=self.stale + other.stale,
            protocol_covered=self.protocol_covered + other.protocol_covered,
            protocol_logged=self.protocol_logged + other.protocol_logged,
            protocol_log_sum=self.protocol_log_sum + other.protocol_log_sum,
            protocol_fast=tuple(a + b for a, b in zip(self.protocol_fast, other.protocol_fast, strict=True)),
            protocol_launch_bound_covered=self.protocol_launch_bound_covered + other.protocol_launch_bound_covered,
            protocol_launch_bound_sum=self.protocol_launch_bound_sum + other.protocol_launch_bound_sum,
        )


def outcome_totals(outcomes: Sequence[OperatorOutcome]) -> OutcomeTotals:
    solved = [outcome for outcome in outcomes if outcome.solved and not outcome.flagged]
    speedups = [outcome.speedup for outcome in solved if outcome.speedup is not None]
    logs = [math.log(value) for value in speedups if value > 0]
    protocol = [outcome.protocol_speedup for outcome in solved if outcome.protocol_speedup is not None]
    protocol_logs = [math.log(value) for value in protocol if value > 0]
    shares = [
        outcome.protocol_launch_bound_share
        for outcome in solved
        if outcome.protocol_speedup is not None and outcome.protocol_launch_bound_share is not None
    ]
    return OutcomeTotals(
        outcomes=len(outcomes),
        solved=len(solved),
        covered=len(speedups),
        logged=len(logs),
        log_sum=sum(logs),
        fast=tuple(sum(1 for s in speedups if s > threshold) for threshold in FAST_P_THRESHOLDS),
        tokens=sum(outcome.tokens for outcome in outcomes),
        solve_seconds=sum(outcome.solve_seconds for outcome in outcomes),
        stale=sum(1 for outcome in outcomes if outcome.stale),
        protocol_covered=len(protocol),
        protocol_logged=len(protocol_logs),
        protocol_log_sum=sum(protocol_logs),
        protocol_fast=tuple(sum(1 for s in protocol if s > threshold) for threshold in FAST_P_THRESHOLDS),
        protocol_launch_bound_covered=len(shares),
        protocol_launch_bound_sum=sum(shares),
    )


def summarize_totals(totals: OutcomeTotals, operators_total: int) -> Summary:
    """PROTOCOL 6-7: accuracy over all operators of the group; speedup over solved ones only."""
    return Summary(
        operators_total=operators_total,
        solved=totals.solved,
        accuracy_pct=100.0 * totals.solved / operators_total if operators_total else 0.0,
        speedup_geomean=math.exp(totals.log_sum / totals.logged) if totals.logged else None,
        speedup_covered=totals.covered,
        fast_p={
            f"{threshold:g}": (count / operators_total if operators_total else 0.0)
            for threshold, count in zip(FAST_P_THRESHOLDS, totals.fast, strict=True)
        },
        tokens_total=totals.tokens,
        tokens_per_success=totals.tokens / totals.solved if totals.solved and totals.tokens else None,
        solve_hours=totals.solve_seconds / 3600.0,
        stale=totals.stale,
        protocol_speedup_geomean=(
            math.exp(totals.protocol_log_sum / totals.protocol_logged) if totals.protocol_logged else None
        ),
        protocol_speedup_covered=totals.protocol_covered,
        protocol_fast_p={
            f"{threshold:g}": (count / operators_total if operators_total else 0.0)
            for threshold, count in zip(FAST_P_THRESHOLDS, totals.protocol_fast, strict=True)
        },
        protocol_launch_bound_share=(
            totals.protocol_launch_bound_sum / totals.protocol_launch_bound_covered
            if totals.protocol_launch_bound_covered
            else None
        ),
        protocol_launch_bound_covered=totals.protocol_launch_bound_covered,
    )


def summarize(outcomes: Sequence[OperatorOutcome], operators_total: int) -> Summary:
    """PROTOCOL 6-7: accuracy over all operators of the group; speedup over solved ones only."""
    return summarize_totals(outcome_totals(outcomes), operators_total)


def matched_set_speedups(per_method: Mapping[K, Mapping[str, float]]) -> tuple[list[str], dict[K, MatchedSpeedup]]:
    """Geomean speedup of each method over the operators *every* method passed cleanly with a known speedup,
    given as operator -> speedup per method, with 95% bootstrap intervals (all methods resampled together)."""
    common = set.intersection(*(set(speedups) for speedups in per_method.values())) if per_method else set()
    ordered = sorted(common)
    values = {method: [speedups[op] for op in ordered] for method, speedups in per_method.items()}
    intervals = bootstrap_geomean_cis(list(values.values()))
    return ordered, {
        method: MatchedSpeedup(geomean(speedups), interval, len(ordered))
        for (method, speedups), interval in zip(values.items(), intervals, strict=True)
    }


# --- Beyond the paper -----------------------------------------------------------------------------------

SPEEDUP_BUCKETS: tuple[tuple[str, float, float], ...] = (
    (">2", 2.0, math.inf),
    ("1.5-2", 1.5, 2.0),
    ("1-1.5", 1.0, 1.5),
    ("0.8-1", 0.8, 1.0),
    ("0.5-0.8", 0.5, 0.8),
    ("<=0.5", 0.0, 0.5),
)


@dataclass
class SpeedupSpread:
    """PROTOCOL 6's secondary figures over per-operator speedups: median, IQM, extremes and buckets."""

    count: int
    median: float | None
    iqm: float | None
    minimum: float | None
    maximum: float | None
    buckets: dict[str, int]


def speedup_spread(values: Sequence[float]) -> SpeedupSpread:
    ordered = sorted(value for value in values if value is not None and value > 0)
    count = len(ordered)
    buckets = {label: 0 for label, _, _ in SPEEDUP_BUCKETS}
    for value in ordered:
        # Buckets are closed above (">2" is strictly above 2, "<=0.5" includes 0.5).
        for label, low, high in SPEEDUP_BUCKETS:
            if (low < value <= high) if label != ">2" else value > low:
                buckets[label] += 1
                break
    if not count:
        return SpeedupSpread(0, None, None, None, None, buckets)
    middle = count // 2
    median = ordered[middle] if count % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    quarter = count // 4
    inner = ordered[quarter : count - quarter] or ordered
    return SpeedupSpread(count, median, sum(inner) / len(inner), ordered[0], ordered[-1], buckets)


@dataclass
class MatchedSpeedup:
    """A method's geomean over the operators every compared method solved, with its bootstrap interval."""

    speedup_geomean: float | None
    ci95: tuple[float, float] | None
    covered: int


def matched_speedups(
    per_method: Mapping[K, Mapping[str, OperatorOutcome]],
) -> tuple[list[str], dict[K, MatchedSpeedup]]:
    """Like-with-like speedups: only operators every method solved cleanly with a known speedup count."""
    return matched_set_speedups(
        {
            key: {
                op: outcome.speedup
                for op, outcome in outcomes.items()
                if outcome.solved and outcome.speedup is not None and not outcome.flagged
            }
            for key, outcomes in per_method.items()
        }
    )


def ratio(value: float | None, reference: float | None) -> float | None:
    """value / reference, None when either is unknown or the reference is zero (portability ratios)."""
    if value is None or not reference:
        return None
    return value / reference


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of points not dominated when lower x (cost) and higher y (accuracy) are better, ordered by x."""
    order = sorted(range(len(points)), key=lambda index: (points[index][0], -points[index][1]))
    front: list[int] = []
    best_y = -math.inf
    for index in order:
        if points[index][1] > best_y:
            front.append(index)
            best_y = points[index][1]
    return front

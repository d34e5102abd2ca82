"""PROTOCOL 6-7 metrics as pure functions: exact figures on small hand-made inputs."""

from __future__ import annotations

import math
import random

import pytest

from leaderboard.metrics import (
    OperatorOutcome,
    bootstrap_geomean_ci,
    bootstrap_geomean_cis,
    geomean,
    matched_speedups,
    pareto_front,
    ratio,
    speedup_spread,
    summarize,
)


def outcome(
    op: str, solved: bool, speedup: float | None = None, tokens: int = 0, source: str = "aten", **kwargs
) -> OperatorOutcome:
    return OperatorOutcome(op, source, solved=solved, speedup=speedup, tokens=tokens, **kwargs)


def test_geomean():
    assert geomean([2.0, 8.0]) == 4.0
    assert geomean([]) is None
    assert geomean([0.0, -1.0]) is None


def test_summary_follows_the_protocol():
    outcomes = [
        outcome("a", True, 2.0, tokens=100),
        outcome("b", True, 0.5, tokens=100),
        outcome("c", False, tokens=400),
        outcome("d", True, None, tokens=0, solve_seconds=7200.0),
    ]
    summary = summarize(outcomes, operators_total=5)  # "e" never attempted: still in the denominator
    assert (summary.solved, summary.accuracy_pct) == (3, 60.0)
    assert (summary.speedup_geomean, summary.speedup_covered) == (1.0, 2)  # unknown speedups are not averaged
    assert summary.fast_p == {"0.8": 0.2, "1": 0.2, "1.5": 0.2}  # over ALL five operators
    assert (summary.tokens_total, summary.tokens_per_success, summary.solve_hours) == (600, 200.0, 2.0)


def test_flagged_runs_do_not_count_as_solved():
    summary = summarize([outcome("a", True, 50.0, flagged=True)], operators_total=1)
    assert (summary.solved, summary.speedup_geomean, summary.tokens_per_success) == (0, None, None)


def test_stale_solutions_are_counted():
    summary = summarize([outcome("a", True, 1.0, stale=True), outcome("b", True, 1.0)], operators_total=2)
    assert summary.stale == 1


def test_bootstrap_interval_is_deterministic_and_brackets_the_geomean():
    values = [0.5, 1.0, 2.0, 4.0, 1.5]
    low, high = bootstrap_geomean_ci(values, seed=3)
    assert (low, high) == bootstrap_geomean_ci(values, seed=3)
    assert low < geomean(values) < high
    assert bootstrap_geomean_ci([2.0]) is None


def test_matched_speedups_use_only_operators_every_method_solved():
    per_method = {
        1: {"a": outcome("a", True, 2.0), "b": outcome("b", True, 8.0), "c": outcome("c", True, 1.0)},
        2: {"a": outcome("a", True, 0.5), "b": outcome("b", True, 2.0), "c": outcome("c", False)},
        3: {"a": outcome("a", True, 1.0), "b": outcome("b", True, 1.0), "c": outcome("c", True, 9.0, flagged=True)},
    }
    common, figures = matched_speedups(per_method)
    assert common == ["a", "b"]
    assert {key: (figure.speedup_geomean, figure.covered) for key, figure in figures.items()} == {
        1: (4.0, 2),
        2: (1.0, 2),
        3: (1.0, 2),
    }


def test_speedup_spread_and_buckets():
    spread = speedup_spread([3.0, 2.0, 1.6, 1.2, 0.9, 0.6, 0.5, 0.1])
    assert spread.buckets == {">2": 1, "1.5-2": 2, "1-1.5": 1, "0.8-1": 1, "0.5-0.8": 1, "<=0.5": 2}
    assert (spread.count, spread.median, spread.minimum, spread.maximum) == (8, 1.05, 0.1, 3.0)
    assert math.isclose(spread.iqm, (1.6 + 1.2 + 0.9 + 0.6) / 4)
    assert speedup_spread([]).median is None


def test_ratio_and_pareto_front():
    assert ratio(25.0, 87.0) == 25.0 / 87.0
    assert ratio(1.0, None) is None and ratio(1.0, 0.0) is None
    # (tokens per success, accuracy): 1 is dominated by 0 (cheaper and as accurate); 3 by 2.
    points = [(1.0, 50.0), (2.0, 50.0), (3.0, 80.0), (4.0, 70.0), (0.5, 10.0)]
    assert pareto_front(points) == [4, 0, 2]


def _bootstrap_one_draw_at_a_time(values, *, resamples, seed, level=0.95):
    """The interval as the protocol defines it: each resample draws with random.choice and sums in order."""
    logs = [math.log(value) for value in values if value > 0]
    rng = random.Random(seed)
    means = sorted(sum(rng.choice(logs) for _ in range(len(logs))) / len(logs) for _ in range(resamples))
    return math.exp(means[int((1 - level) / 2 * resamples)]), math.exp(means[int((1 + level) / 2 * resamples)])


@pytest.mark.parametrize("count", [2, 3, 7, 8, 9, 31, 33, 64, 65, 129, 210])
@pytest.mark.parametrize(("seed", "resamples"), [(0, 2000), (7, 301)])
def test_bootstrap_interval_is_the_same_bits_as_drawing_one_value_at_a_time(count, seed, resamples):
    values = [random.Random(count).lognormvariate(0, 0.7) for _ in range(count)]
    assert bootstrap_geomean_ci(values, resamples=resamples, seed=seed) == _bootstrap_one_draw_at_a_time(
        values, resamples=resamples, seed=seed
    )


def test_groups_resampled_together_give_each_group_its_own_interval():
    """Groups of one size share draws and are summed column by column: the bits of one group at a time."""
    rng = random.Random(5)
    groups = [[rng.lognormvariate(0, 0.5) for _ in range(size)] for size in (40, 40, 3, 1, 40, 0)]
    groups.append([2.0, -1.0, 3.0])  # a non-positive value is left out, as from one group alone
    expected = [
        _bootstrap_one_draw_at_a_time(values, resamples=500, seed=2)
        if sum(1 for value in values if value > 0) >= 2
        else None
        for values in groups
    ]
    assert bootstrap_geomean_cis(groups, resamples=500, seed=2) == expected

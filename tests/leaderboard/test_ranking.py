"""Ranks people can cite: Wilson intervals, shared ranks where intervals overlap."""

from __future__ import annotations

import pytest

from leaderboard.ranking import overlap_ranks, wilson_interval


def test_wilson_interval_of_known_shares():
    assert tuple(round(bound, 2) for bound in wilson_interval(3, 4)) == (30.06, 95.44)
    assert tuple(round(bound, 2) for bound in wilson_interval(1, 4)) == (4.56, 69.94)
    assert tuple(round(bound, 2) for bound in wilson_interval(0, 10)) == (0.0, 27.75)
    assert tuple(round(bound, 2) for bound in wilson_interval(10, 10)) == (72.25, 100.0)
    assert wilson_interval(0, 0) == (0.0, 100.0)


def test_overlapping_intervals_share_a_rank_and_are_marked():
    ranks = overlap_ranks([(60.0, 90.0), (50.0, 80.0), (10.0, 30.0)])
    assert [(rank.position, rank.tied, rank.label) for rank in ranks] == [
        (1, True, "=1"),
        (1, True, "=1"),
        (3, False, "3"),
    ]


def test_overlap_is_not_transitive_but_every_row_gets_one_rank():
    # A and C are apart; B overlaps both: A 1, B 1 (nothing wholly above it), C 2 (A is wholly above it).
    ranks = overlap_ranks([(70.0, 90.0), (40.0, 75.0), (20.0, 50.0)])
    assert [rank.label for rank in ranks] == ["=1", "=1", "2"]


@pytest.mark.parametrize("intervals", [[], [(10.0, 20.0)]])
def test_small_boards(intervals):
    assert [rank.label for rank in overlap_ranks(intervals)] == (["1"] if intervals else [])

"""A run keeps how much of its protocol speedup is the launch race: the share of its protocol-timed cases the
judge marked launch-bound (timing_protocol.launch_bound), stored when its verdict is recorded, so boards can
say how far such a figure can be trusted (on the H200 a launch-bound operator's figure moved 51-93 % between
machines; docs/measurements/h200-2026-12-03-evening-head/)."""

from __future__ import annotations

import json

import pytest

from evaluation import services
from evaluation.judge.job import CaseResult, JudgeResult
from evaluation.models import Run


def case(index: int, launch_bound=None, timed: bool = True) -> CaseResult:
    timing = {"reference_ms": 0.004, "candidate_ms": 0.008, "speedup": 0.5, "iterations": 8}
    if launch_bound is not None:
        timing["launch_bound"] = launch_bound
    return CaseResult(
        case_id=f"cos[{index}]", tier="public", params={}, passed=True, protocol_timing=timing if timed else None
    )


def record(run: Run, cases: list[CaseResult], protocol_speedup: float | None = 0.5) -> Run:
    claimed, lease = services.run_claim(run_id=run.pk, worker="w1")
    result = JudgeResult(
        status="passed",
        reason="ok",
        cases_total=len(cases),
        cases_passed=len(cases),
        case_results=cases,
        speedup=1.0,
        protocol_speedup=protocol_speedup,
    )
    # Through JSON, as a worker's result or an offline bundle's arrives.
    assert services.run_record_result(
        run=claimed, lease=lease, result=JudgeResult.from_json(json.loads(json.dumps(result.to_json())))
    )
    return Run.objects.get(pk=run.pk)


def test_a_recorded_run_keeps_the_share_of_its_protocol_cases_that_raced_the_flush(queue_h200_cos):
    run = queue_h200_cos()
    # Three marked cases, two of them launch-bound; a case the stage did not time counts for nothing.
    recorded = record(run, [case(0, True), case(1, True), case(2, False), case(3, timed=False)])
    assert recorded.protocol_launch_bound_share == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    "cases, protocol_speedup",
    [
        ([case(0), case(1)], 0.5),  # no marks: a judge before them, or a loop with no flush (cuBLAS's)
        ([case(0, True)], None),  # no protocol speedup: no share beside it
        ([case(0, "yes"), case(1, 1)], 0.5),  # from another host's JSON: only a bool is a mark
    ],
    ids=["unmarked", "no-protocol-speedup", "not-bools"],
)
def test_the_share_is_unknown_where_no_mark_stands_beside_a_protocol_speedup(queue_h200_cos, cases, protocol_speedup):
    run = queue_h200_cos()
    assert record(run, cases, protocol_speedup).protocol_launch_bound_share is None


def test_the_share_is_read_from_stored_cases_as_they_are_kept():
    """The function the recording (and the migration that filled older runs) uses, on stored dicts."""
    stored = [
        {"protocol_timing": {"launch_bound": False}},
        {"protocol_timing": {"launch_bound": True}},
        {"protocol_timing": None},
        {"protocol_timing": {"speedup": 2.0}},
        "not a case",
    ]
    assert services.launch_bound_share(stored) == 0.5
    assert services.launch_bound_share([]) is None


def test_the_migration_fills_the_share_of_runs_recorded_before_the_field(queue_h200_cos):
    import importlib

    from django.apps import apps

    migration = importlib.import_module("evaluation.migrations.0010_run_protocol_launch_bound_share")
    marked = record(queue_h200_cos(), [case(0, True), case(1, False)])
    unmarked = record(queue_h200_cos(), [case(0)])
    Run.objects.update(protocol_launch_bound_share=None)  # as they stood before the field
    migration.fill_shares(apps, None)
    assert Run.objects.get(pk=marked.pk).protocol_launch_bound_share == 0.5
    assert Run.objects.get(pk=unmarked.pk).protocol_launch_bound_share is None
    # The migration's frozen copy reads stored cases as the service does.
    stored = Run.objects.get(pk=marked.pk).case_results
    assert migration.launch_bound_share(stored) == services.launch_bound_share(stored)

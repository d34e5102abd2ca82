"""A bug that lives in a structure only the public grid had fails on the CPU interpreter through the smoke
tier's derived twin of that structure (evaluation/catalog/smoke_twins.py)."""

from __future__ import annotations

from conftest import kernel_source

from evaluation.catalog.registry import all_operators, records_as_written
from evaluation.judge.job import JudgeJob
from evaluation.judge.runner import JudgeOptions, judge_with


def test_a_clone_right_up_to_rank_3_passes_the_hand_written_smoke_tier_and_fails_its_twin(warm_forkserver):
    job = JudgeJob(
        "aten::clone",
        kernel_source("structure/clone_flattens_leading_dims_by_stride0.py"),
        "cpu-interpreter",
        "cpu",
        tiers=("smoke",),
    )
    hand_written_only = judge_with(job, JudgeOptions(spec=records_as_written()["aten::clone"]))
    with_twins = judge_with(job, JudgeOptions(spec=all_operators()["aten::clone"]))

    assert hand_written_only.status == "passed", hand_written_only.reason
    assert with_twins.status == "failed_correctness", with_twins.reason
    assert '"shape":[3,11,7,5]' in with_twins.reason  # the twin of the public grid's rank-4 case

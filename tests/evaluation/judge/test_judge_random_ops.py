"""Random operators are judged by statistics, and a second call on the same inputs must draw anew."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluation.judge import JudgeJob
from evaluation.judge.runner import JudgeOptions, judge_with

ROOT = Path(__file__).resolve().parents[3]


def _judge(path: Path) -> object:
    job = JudgeJob(
        operator_id="aten::bernoulli",
        source_code=path.read_text(),
        chip_slug="cpu-interpreter",
        device_type="cpu",
        tiers=("smoke",),
        time_budget_s=120,
    )
    return judge_with(job, JudgeOptions())


@pytest.mark.usefixtures("warm_forkserver")
def test_a_bernoulli_that_draws_anew_on_every_call_passes():
    result = _judge(ROOT / "evaluation/catalog/reference_kernels/aten__bernoulli.py")
    assert result.status == "passed", result.reason
    assert {check.name: check.outcome for check in result.checks}["random_draws_differ"] == "passed"


@pytest.mark.usefixtures("warm_forkserver")
def test_a_fixed_seed_passes_the_statistics_of_one_call_but_not_two_calls():
    result = _judge(ROOT / "tests/evaluation/kernels/random/bernoulli_fixed_seed.py")
    assert result.status == "failed_correctness"
    assert "two calls on the same inputs returned identical draws" in result.reason
    assert {check.name: check.outcome for check in result.checks}["random_draws_differ"] == "failed"
    assert result.failed_case["case_id"] == 'bernoulli[{"dtype":"float32","shape":[4096]}]'


@pytest.mark.usefixtures("warm_forkserver")
def test_rrelu_eval_cases_repeat_like_the_reference_and_still_pass():
    """In eval mode rrelu_with_noise is deterministic: identical draws are fine when the reference's are."""
    job = JudgeJob(
        operator_id="aten::rrelu_with_noise",
        chip_slug="cpu-interpreter",
        device_type="cpu",
        source_code=(ROOT / "evaluation/catalog/reference_kernels/aten__rrelu_with_noise.py").read_text(),
        tiers=("smoke",),
        time_budget_s=120,
    )
    result = judge_with(job, JudgeOptions())
    assert result.status == "passed", result.reason
    assert any(case.params["training"] is False for case in result.case_results)

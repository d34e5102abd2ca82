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


def test_a_statistical_check_reads_the_call_where_the_outputs_are(monkeypatch):
    # On a GPU the draw is on the CPU and the reference's outputs on the device. Finding which mutated
    # arguments are pure outputs runs the record's check, which reads the call beside the outputs: it must get
    # a copy of the call on the reference device, not the draw (rrelu_with_noise's check mixed cuda:0 and cpu,
    # and every judgement of it on the H200 ended as error).
    import dataclasses
    from types import SimpleNamespace

    import torch

    from evaluation.catalog.registry import get_operator
    from evaluation.judge import checks

    placed = []
    copy_to_device = checks.to_device

    def to_device(call, device):
        placed.append(copy_to_device(call, device))
        return placed[-1]

    monkeypatch.setattr(checks, "to_device", to_device)
    spec = get_operator("aten::rrelu_with_noise")
    read = []
    probed = dataclasses.replace(
        spec, stat_check=lambda case, call, outputs: read.append(call) or spec.stat_check(case, call, outputs)
    )
    case = next(case for case in spec.smoke if case.params["training"])
    sent = spec.make_inputs(case, torch.Generator().manual_seed(0))
    private = copy_to_device(sent, torch.device("cpu"))
    expected = spec.outputs_of(case, private, spec.reference(case, private))
    judgement = SimpleNamespace(spec=probed, reference_device=torch.device("cpu"))

    keys = checks.pure_output_keys(judgement, case, sent, spec.entry_point(case.entry_point), expected)

    assert keys == [1]  # the noise buffer: garbage the kernel must overwrite
    assert read and all(call is not sent and any(call is copy for copy in placed) for call in read)

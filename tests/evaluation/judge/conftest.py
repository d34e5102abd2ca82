"""Shared pieces of the judge tests: kernels by name, a small cos record, a warm sandbox pool."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from evaluation.catalog.spec import Case, OperatorSpec
from evaluation.judge.job import JudgeJob, JudgeResult
from evaluation.judge.pool import SandboxPool
from evaluation.judge.runner import JudgeOptions, judge_with

KERNELS = Path(__file__).resolve().parents[1] / "kernels"


def kernel_source(relative: str) -> str:
    return (KERNELS / relative).read_text()


def cos_record() -> OperatorSpec:
    """aten::cos from its catalog module alone (no need to load every record of the registry)."""
    from evaluation.catalog.aten.pointwise import OPERATORS

    return next(spec for spec in OPERATORS if spec.operator_id == "aten::cos")


def small_cos_record() -> OperatorSpec:
    """aten::cos with three smoke cases (contiguous fp32, transposed fp16, out=) to keep the interpreter quick."""
    spec = cos_record()
    value_range = [-2.0, 2.0]
    smoke = (
        Case("cos", {"shape": [33], "dtype": "float32", "range": value_range}),
        Case("cos", {"shape": [4, 17], "dtype": "float16", "layout": "transposed", "range": value_range}),
        Case("cos_out", {"shape": [33], "dtype": "float32", "range": value_range}),
    )
    return dataclasses.replace(spec, smoke=smoke)


@pytest.fixture(scope="session")
def warm_forkserver():
    """The zygote imports torch once per session (seconds); every sandbox after that forks in milliseconds."""
    from evaluation.judge.forkserver import shared_forkserver

    server = shared_forkserver("cpu")
    server.wait_ready()
    return server


@pytest.fixture
def run_judge(warm_forkserver):
    def run(
        relative: str,
        *,
        spec: OperatorSpec | None = None,
        static_scan: bool = True,
        budget: float = 120.0,
        tiers: tuple[str, ...] = ("smoke",),
        source: str | None = None,
        pool: SandboxPool | None = None,
        launcher: str = "forkserver",
        twin_replay: bool = True,
    ) -> JudgeResult:
        job = JudgeJob(
            operator_id="aten::cos",
            source_code=source if source is not None else kernel_source(relative),
            chip_slug="cpu-interpreter",
            device_type="cpu",
            tiers=tiers,
            time_budget_s=budget,
        )
        options = JudgeOptions(
            spec=spec or small_cos_record(),
            static_scan=static_scan,
            launcher=launcher,
            sandbox_factory=pool.acquire if pool else None,
            twin_replay=twin_replay,
        )
        return judge_with(job, options)

    return run


def check_outcomes(result: JudgeResult) -> dict[str, str]:
    return {check.name: check.outcome for check in result.checks}

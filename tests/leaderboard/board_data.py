"""A small, hand-checked world for the board and page tests: four operators, three chips, three methods."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation.models import Chip, DeviceType, Run, RunStatus
from leaderboard import best_verdicts
from leaderboard.models import (
    Kernel,
    Method,
    MethodKind,
    Operator,
    OperatorSet,
    PaperCost,
    PaperResult,
    Submission,
    Visibility,
)

OPERATORS = [
    ("aten::cos", "aten", True, [{"name": "cos"}, {"name": "cos_out"}]),
    ("aten::add", "aten", True, [{"name": "add_Tensor"}]),
    ("vllm13::rms_norm", "vllm", False, [{"name": "rms_norm"}]),
    ("cublas::cublasSaxpy_v2", "cublas", False, [{"name": "cublasSaxpy_v2"}]),
]


@dataclass
class World:
    chips: dict[str, Chip]
    operators: dict[str, Operator]
    sets: dict[str, OperatorSet]
    methods: dict[str, Method]
    submissions: dict[str, Submission]
    runs: dict[str, Run]


def make_world(*, owner, other) -> World:
    # The session's test database holds the real catalog; this world replaces it (the test's rollback restores it).
    PaperResult.objects.all().delete()
    PaperCost.objects.all().delete()
    OperatorSet.objects.all().delete()
    Operator.objects.all().delete()
    Chip.objects.all().delete()
    chips = {
        "nvidia-h200": Chip.objects.create(
            slug="nvidia-h200", display_name="NVIDIA H200", device_type=DeviceType.CUDA, is_reference_platform=True
        ),
        "platform-a": Chip.objects.create(
            slug="platform-a", display_name="Ascend", public_alias="Platform A", device_type=DeviceType.NPU
        ),
        "cpu-interpreter": Chip.objects.create(
            slug="cpu-interpreter",
            display_name="CPU (Triton interpreter)",
            device_type=DeviceType.CPU,
            timings_meaningful=False,
        ),
    }
    operators = {
        op_id: Operator.objects.create(
            operator_id=op_id,
            source=source,
            name=op_id.split("::")[1],
            in_mc=in_mc,
            entry_points=entries,
            description=f"The {op_id} operator.",
            public_cases=[{"case_id": f"{op_id}[0]"}],
        )
        for op_id, source, in_mc, entries in OPERATORS
    }
    sets = {
        "kgb-ms": OperatorSet.objects.create(slug="kgb-ms", title="KernelGenBench-MS", builtin=True, position=1),
        "kgb-mc": OperatorSet.objects.create(slug="kgb-mc", title="KernelGenBench-MC", builtin=True, position=2),
        "pointwise": OperatorSet.objects.create(
            slug="pointwise", title="Curated pointwise", position=10, description="Hand-picked pointwise ops"
        ),
    }
    sets["kgb-ms"].operators.set(operators.values())
    sets["kgb-mc"].operators.set([operators["aten::cos"], operators["aten::add"]])
    sets["pointwise"].operators.set([operators["aten::cos"]])
    methods = {
        "fast": Method.objects.create(scaffold="Fast Agent", model="Opus-4.6", kind=MethodKind.AGENT, owner=owner),
        "slow": Method.objects.create(scaffold="Pass@1", model="GLM-5.0", kind=MethodKind.PASS_AT_K, owner=other),
        "secret": Method.objects.create(
            scaffold="Secret Agent", model="X", kind=MethodKind.AGENT, owner=owner, public=False
        ),
    }
    submissions = {
        "fast": Submission.objects.create(owner=owner, method=methods["fast"], target_chip=chips["nvidia-h200"]),
        "fast_ascend": Submission.objects.create(owner=owner, method=methods["fast"], target_chip=chips["platform-a"]),
        "slow": Submission.objects.create(owner=other, method=methods["slow"]),
        "private": Submission.objects.create(owner=owner, method=methods["fast"], visibility=Visibility.PRIVATE),
        "secret": Submission.objects.create(owner=owner, method=methods["secret"]),
    }
    runs: dict[str, Run] = {}

    def judged(
        name: str,
        submission: str,
        op_id: str,
        chip: str,
        status: str,
        speedup: float | None = None,
        tokens: int = 1000,
        seconds: float = 360.0,
        code: str = "def cos(x):\n    return x\n",
        version: int = 1,
    ) -> Run:
        kernel, _ = Kernel.objects.get_or_create(
            submission=submissions[submission],
            operator=operators[op_id],
            defaults={
                "source_code": code,
                "sha256": Kernel.hash_source(code),
                "total_tokens": tokens,
                "solve_seconds": seconds,
                "filename": op_id.replace("::", "__") + ".py",
            },
        )
        runs[name] = Run.objects.create(
            kernel=kernel,
            chip=chips[chip],
            operator_version=version,
            status=status,
            speedup=speedup,
            reason="" if status == RunStatus.PASSED else "wrong result",
            cases_total=2,
            cases_passed=2 if status == RunStatus.PASSED else 1,
            case_results=[
                {
                    "case_id": "c0",
                    "tier": "public",
                    "passed": True,
                    "reference_ms": 1.0,
                    "candidate_ms": 0.5,
                    "speedup": 2.0,
                    "roofline_floor_ms": 0.25,
                }
            ],
        )
        return runs[name]

    # Fast Agent on H200 (written for it): 3 of 4 pass, speedups 2.0, 0.5, 1.0; rms_norm fails.
    judged("fast_cos", "fast", "aten::cos", "nvidia-h200", RunStatus.PASSED, 2.0)
    judged("fast_add", "fast", "aten::add", "nvidia-h200", RunStatus.PASSED, 0.5)
    judged("fast_rms", "fast", "vllm13::rms_norm", "nvidia-h200", RunStatus.FAILED_CORRECTNESS, tokens=3000)
    judged("fast_saxpy", "fast", "cublas::cublasSaxpy_v2", "nvidia-h200", RunStatus.PASSED, 1.0, version=0)
    # Its H200 kernels judged on Platform A: ported, not ranked there. cos passes, add fails.
    judged("fast_cos_ported", "fast", "aten::cos", "platform-a", RunStatus.PASSED, 0.9)
    judged("fast_add_ported", "fast", "aten::add", "platform-a", RunStatus.FAILED_RUNTIME)
    # Kernels it wrote for Platform A: cos only.
    judged("fast_cos_ascend", "fast_ascend", "aten::cos", "platform-a", RunStatus.PASSED, 1.2)
    # Pass@1 (no target chip): cos passes at 1.5 on H200, add fails; cos passes on Platform A at 0.8.
    judged("slow_cos", "slow", "aten::cos", "nvidia-h200", RunStatus.PASSED, 1.5, tokens=500)
    judged("slow_add", "slow", "aten::add", "nvidia-h200", RunStatus.FAILED_COMPILE, tokens=500)
    judged("slow_cos_a", "slow", "aten::cos", "platform-a", RunStatus.PASSED, 0.8, tokens=500)
    # A private submission and a private method: never ranked.
    judged(
        "private_add",
        "private",
        "aten::add",
        "nvidia-h200",
        RunStatus.PASSED,
        9.0,
        code="SECRET_KERNEL_CODE = '<script>alert(1)</script>'\n",
    )
    judged("secret_cos", "secret", "aten::cos", "nvidia-h200", RunStatus.PASSED, 9.0)
    # The runs were written finished, past the services: bring the boards' summary in line, as a verdict would.
    best_verdicts.runs_changed(run_ids=[run.pk for run in runs.values()])
    return World(chips, operators, sets, methods, submissions, runs)


def protocol_timing(reference_ms: float, candidate_ms: float, iterations: int = 400) -> dict:
    return {
        "reference_ms": reference_ms,
        "candidate_ms": candidate_ms,
        "speedup": reference_ms / candidate_ms,
        "iterations": iterations,
        "stop_reason": "rse_below_target",
        "candidate_rse": 0.004,
        "reference_rse": 0.006,
    }


def give_protocol(run: Run, speedup: float, *, interval: tuple[float, float] | None = None) -> None:
    """The run as a judge timing the protocol's way would have left it: its protocol speedup and each case's
    protocol timing (written past the services, as make_world writes its runs; the summary is refreshed)."""
    cases = [
        {**case, "protocol_timing": protocol_timing(2.0 * speedup, 2.0, iterations=300 + index)}
        for index, case in enumerate(run.case_results)
    ]
    low, high = interval or (None, None)
    Run.objects.filter(pk=run.pk).update(
        protocol_speedup=speedup, protocol_speedup_ci_low=low, protocol_speedup_ci_high=high, case_results=cases
    )

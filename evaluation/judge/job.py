"""What crosses the boundary between the Django side and the judge: one job in, one result out.

Both are plain dataclasses of JSON-serialisable values, so a job can travel in a Celery message, a file of
an offline job bundle, or a pipe to a sandbox, and a result can be stored on a Run as it is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

from evaluation.judge.version import JUDGE_VERSION

# The verdicts a judge can give. ``queued`` and ``running`` belong to the Run's life on the Django side.
VerdictStatus = Literal[
    "passed",
    "failed_compile",  # the file does not import, or an entry point is missing
    "failed_correctness",  # some case gave a wrong answer
    "failed_runtime",  # some case raised or crashed the process
    "timeout",  # the wall-clock budget ran out
    "rejected",  # a cheat was caught: ``checks`` names the check that fired
    "error",  # our infrastructure failed, not the kernel
]
VERDICTS: tuple[str, ...] = get_args(VerdictStatus)


def call_limit_defaults(device_type: str) -> tuple[float, float]:
    """(floor seconds, factor over the reference) of the per-call limit; ``KGB_CALL_LIMIT_FLOOR_S`` and
    ``KGB_CALL_LIMIT_FACTOR`` override them for a worker."""
    import os

    # The interpreter runs a scatter-heavy kernel near 1,000 times slower than torch's CPU kernel for the
    # same case (upsample_nearest2d_backward, fp16 [8, 43, 43, 43]: 45 s against 48 ms), hence its factor.
    floor, factor = (60.0, 3000.0) if device_type == "cpu" else (20.0, 50.0)
    try:
        floor = float(os.environ.get("KGB_CALL_LIMIT_FLOOR_S", floor))
        factor = float(os.environ.get("KGB_CALL_LIMIT_FACTOR", factor))
    except ValueError:
        pass
    return floor, factor


@dataclass
class JudgeJob:
    """Everything needed to judge one kernel file against one operator on one chip."""

    operator_id: str
    source_code: str
    chip_slug: str  # "cpu-interpreter", "nvidia-h200", ...
    device_type: str  # torch device type: "cpu" (Triton interpreter), "cuda", "npu", "musa"
    tiers: tuple[str, ...] = ("smoke",)  # which case tiers to check; GPUs use ("public", "held_out")
    measure_timing: bool = False  # False where timings mean nothing (the CPU interpreter)
    time_budget_s: float = 300.0  # wall-clock budget for the whole judgement, sandbox included
    device_memory_fraction: float = 0.5  # cap on the candidate's share of device memory
    # Time spent queueing for a GPU that other judgements on the host hold (device_lock) does not count
    # against time_budget_s, up to this much in all; beyond it the run ends in ``error`` (not the kernel's fault).
    device_wait_limit_s: float = 300.0
    # Judgements that share this GPU at once (the worker's --concurrency): sizes how much device memory each
    # judge's processes may keep cached between cases (context.device_memory_budget).
    judges_sharing_device: int = 1
    run_id: str = ""  # for logs and evidence only
    # Each request to the sandbox must return within max(floor, factor x the reference's time for the same
    # case x the calls the request makes), compile time and GPU queueing excluded; otherwise the case is a ``timeout``
    # and the judgement ends, so a kernel that sleeps cannot hold a worker for its whole budget. None: the
    # device's default (call_limit_defaults). The interpreter runs kernels orders of magnitude slower than
    # torch's CPU kernels, hence its larger figures.
    call_limit_floor_s: float | None = None
    call_limit_factor: float | None = None
    # Roofline peaks of the chip (None: no roofline check). Bytes/s and FLOP/s per dtype name.
    peak_bandwidth_bytes_per_s: float | None = None
    peak_flops_by_dtype: dict[str, float] = field(default_factory=dict)

    def call_limit_s(self, reference_s: float, calls: int = 1) -> float:
        floor, factor = call_limit_defaults(self.device_type)
        floor = self.call_limit_floor_s if self.call_limit_floor_s is not None else floor
        factor = self.call_limit_factor if self.call_limit_factor is not None else factor
        return max(floor, factor * max(0.0, reference_s) * max(1, calls))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["tiers"] = list(self.tiers)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JudgeJob:
        data = dict(data)
        data["tiers"] = tuple(data.get("tiers", ("smoke",)))
        return cls(**data)


@dataclass
class CheckOutcome:
    """One anti-hack or sanity check and what it found."""

    name: str  # "static_scan", "triton_launched", "dispatch_audit", "ghost_replay", ...
    outcome: Literal["passed", "failed", "skipped", "noted"]  # noted: recorded, decides nothing
    detail: str = ""


@dataclass
class CaseResult:
    case_id: str
    tier: str
    params: dict[str, Any]
    passed: bool
    message: str = ""  # why it failed, in words
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    timed: bool = False
    reference_ms: float | None = None  # median
    candidate_ms: float | None = None  # median
    speedup: float | None = None
    spread: dict[str, Any] = field(default_factory=dict)  # iqr, rse, iterations, host-vs-event check
    roofline_floor_ms: float | None = None
    below_roofline: bool = False  # flagged: faster than physics allows
    # The protocol's timing of this case (PROTOCOL.md section 6): call latency as a caller sees it, L2
    # flushed, every timed case of the original's grid. None where the case was not timed that way.
    # {"reference_ms", "candidate_ms", "speedup", "iterations", "stop_reason", "candidate_rse", "reference_rse"}
    protocol_timing: dict[str, Any] | None = None


def printable_text(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (lone surrogates) and NUL (which PostgreSQL's text and jsonb
    refuse) written as backslash escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


@dataclass
class JudgeResult:
    status: VerdictStatus
    reason: str
    cases_total: int = 0
    cases_passed: int = 0
    failed_case: dict[str, Any] | None = None  # {"case_id", "params", "message"}
    case_results: list[CaseResult] = field(default_factory=list)
    speedup: float | None = None  # geometric mean over timed cases; None when unknown
    speedup_ci95: tuple[float, float] | None = None
    # The paper's speedup: geometric mean of protocol_timing speedups over every timed case of the original's
    # grid (PROTOCOL.md section 6); ``speedup`` above is the device-time speedup over the large cases.
    protocol_speedup: float | None = None
    protocol_speedup_ci95: tuple[float, float] | None = None
    flagged: bool = False  # some case beat the roofline floor: not ranked
    checks: list[CheckOutcome] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)  # device, driver, versions, clocks, sandbox
    stage_seconds: dict[str, float] = field(default_factory=dict)  # process start, compile, correctness, timing
    # An ``error`` that says nothing about the kernel and may not recur (the GPU's memory full of other
    # judgements', its lock held past the wait limit): the worker queues the run again, within its attempts.
    retryable: bool = False
    judge_version: int = JUDGE_VERSION  # the rules that made this verdict (evaluation.judge.version)

    def __post_init__(self) -> None:
        # Reasons quote the kernel's own text (its exception, its output): a lone surrogate there ("\ud800"
        # in an exception's message) could be neither stored nor printed nor sent as UTF-8, a NUL not stored
        # in PostgreSQL.
        self.reason = printable_text(self.reason)
        if self.failed_case:
            self.failed_case = {
                key: printable_text(value) if isinstance(value, str) else value
                for key, value in self.failed_case.items()
            }
        for case_result in self.case_results:
            if isinstance(case_result, CaseResult):
                case_result.message = printable_text(case_result.message)
        for check in self.checks:
            if isinstance(check, CheckOutcome):
                check.detail = printable_text(check.detail)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for name in ("speedup_ci95", "protocol_speedup_ci95"):
            if data[name] is not None:
                data[name] = list(data[name])
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JudgeResult:
        data = dict(data)
        data.setdefault("judge_version", 1)  # results written before they carried the version
        data["case_results"] = [CaseResult(**case) for case in data.get("case_results", [])]
        data["checks"] = [CheckOutcome(**check) for check in data.get("checks", [])]
        for name in ("speedup_ci95", "protocol_speedup_ci95"):
            if data.get(name) is not None:
                data[name] = tuple(data[name])
        return cls(**data)

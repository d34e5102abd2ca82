"""Chips, the workers attached to them, and runs: one kernel judged on one chip against one operator version."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

# At module level, not inside run_is_stale: boards call that for every verdict they show.
from evaluation.judge.version import JUDGE_VERSION


class DeviceType(models.TextChoices):
    CUDA = "cuda", "CUDA (NVIDIA and CUDA-compatible stacks)"
    NPU = "npu", "NPU (Huawei Ascend)"
    MUSA = "musa", "MUSA (Moore Threads)"
    CPU = "cpu", "CPU (Triton interpreter)"


class Chip(models.Model):
    """An accelerator kind that workers attach to. Each chip has its own Celery queue: ``chip.<slug>``."""

    slug = models.SlugField(max_length=64, unique=True, help_text="nvidia-h200, cpu-interpreter, ...")
    display_name = models.CharField(max_length=120)
    vendor = models.CharField(max_length=64, blank=True)
    device_type = models.CharField(max_length=8, choices=DeviceType.choices)
    timings_meaningful = models.BooleanField(
        default=True, help_text="False for the Triton CPU interpreter: its speedups are recorded as unknown"
    )
    public_alias = models.CharField(max_length=64, blank=True, help_text='e.g. "Platform A"')
    is_reference_platform = models.BooleanField(
        default=False, help_text="Portability is measured against this chip (NVIDIA in the paper)"
    )
    peak_bandwidth_bytes_per_s = models.FloatField(null=True, blank=True, help_text="Measured, for rooflines")
    peak_flops_by_dtype = models.JSONField(default=dict, blank=True, help_text='{"bfloat16": 7.08e14, ...}')
    judge_tiers = models.JSONField(
        default=list, blank=True, help_text='Case tiers judged here; empty = ["public", "held_out"]'
    )
    last_heartbeat_at = models.DateTimeField(null=True, blank=True)
    last_worker_host = models.CharField(max_length=200, blank=True)
    software = models.JSONField(default=dict, blank=True, help_text="What its workers last reported")
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    @property
    def queue_name(self) -> str:
        return f"chip.{self.slug}"

    @property
    def label(self) -> str:
        """What pages show: the public alias when the vendor is anonymised."""
        return self.public_alias or self.display_name

    @property
    def tiers(self) -> tuple[str, ...]:
        if self.judge_tiers:
            return tuple(self.judge_tiers)
        return ("smoke",) if self.device_type == DeviceType.CPU else ("public", "held_out")


class Worker(models.Model):
    """A Celery worker process attached to one chip, as last heard from."""

    hostname = models.CharField(max_length=200, unique=True, help_text="Celery node name, e.g. celery@gpu01")
    chip = models.ForeignKey(Chip, on_delete=models.CASCADE, related_name="workers")
    started_at = models.DateTimeField(default=timezone.now)
    last_heartbeat_at = models.DateTimeField(default=timezone.now, db_index=True)
    software = models.JSONField(default=dict, blank=True)
    # A worker whose judge keeps failing on our side (a sandbox that cannot start, a broken install) would
    # turn every run it claims into an error within a second. Its non-transient judge errors in a row, on
    # different runs, are counted here; at settings.KGB_WORKER_ERROR_STREAK it stops taking runs
    # (evaluation.tasks) and its runs go back to the queue for other workers, until it restarts or staff let
    # it take runs again (admin). One run failing again is evidence about that run, not the worker: it
    # counts once (last_error_run_id), so a single kernel cannot take the only worker off its chip.
    consecutive_errors = models.PositiveIntegerField(default=0)
    last_error_run_id = models.BigIntegerField(null=True, blank=True)
    stopped_taking_runs_at = models.DateTimeField(null=True, blank=True)
    stopped_reason = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-last_heartbeat_at"]

    def __str__(self) -> str:
        return self.hostname


class OwnerTurn(models.Model):
    """When a run of ``owner`` was last claimed on ``chip``: what fair claiming orders owners by.

    A worker's message is a ticket for one judgement on its chip; which queued run it judges is chosen at
    claim time, from the owner served longest ago (``evaluation.services.run_claim_fairest``), so one
    owner's flood of uploads cannot hold back another owner's first one.
    """

    chip = models.ForeignKey(Chip, on_delete=models.CASCADE, related_name="owner_turns")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    last_claimed_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["chip", "owner"], name="owner_turn_unique_per_chip")]

    def __str__(self) -> str:
        return f"{self.owner_id} on {self.chip_id} at {self.last_claimed_at:%Y-%m-%d %H:%M:%S}"


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    PASSED = "passed", "Passed"
    FAILED_COMPILE = "failed_compile", "Failed to compile"
    FAILED_CORRECTNESS = "failed_correctness", "Wrong result"
    FAILED_RUNTIME = "failed_runtime", "Failed at run time"
    TIMEOUT = "timeout", "Timed out"
    REJECTED = "rejected", "Rejected (cheat caught)"
    ERROR = "error", "Infrastructure error"


FINISHED_STATUSES = frozenset(
    {
        RunStatus.PASSED,
        RunStatus.FAILED_COMPILE,
        RunStatus.FAILED_CORRECTNESS,
        RunStatus.FAILED_RUNTIME,
        RunStatus.TIMEOUT,
        RunStatus.REJECTED,
        RunStatus.ERROR,
    }
)


class Run(models.Model):
    """One kernel judged on one chip against one version of its operator.

    Status changes go through ``evaluation.services.run_transition`` only. ``lease`` identifies the claim of
    the worker judging it now: a result is recorded only by the holder of the current lease, so a message
    delivered twice, or a worker that comes back after its run was re-queued, cannot record twice.
    """

    kernel = models.ForeignKey("leaderboard.Kernel", on_delete=models.CASCADE, related_name="runs")
    chip = models.ForeignKey(Chip, on_delete=models.PROTECT, related_name="runs")
    operator_version = models.PositiveIntegerField()
    judge_version = models.PositiveIntegerField(
        null=True, blank=True, help_text="The judge's protocol version that made the verdict; null until judged"
    )
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True)
    reason = models.TextField(blank=True)
    cases_total = models.PositiveIntegerField(default=0)
    cases_passed = models.PositiveIntegerField(default=0)
    failed_case = models.JSONField(null=True, blank=True)
    case_results = models.JSONField(default=list, blank=True)
    checks = models.JSONField(default=list, blank=True)
    # Two speedups, never mixed (PROTOCOL 6): the protocol's is the paper's headline, the device-time one is
    # reported beside it. Null = unknown (the CPU interpreter, a failed run, a run whose judge did not time
    # the protocol's way: the stage is off unless a worker sets KGB_PROTOCOL_TIMING=on).
    speedup = models.FloatField(
        null=True, blank=True, help_text="Device-time speedup: geometric mean over the large cases, launch cost hidden"
    )
    speedup_ci_low = models.FloatField(null=True, blank=True)
    speedup_ci_high = models.FloatField(null=True, blank=True)
    protocol_speedup = models.FloatField(
        null=True,
        blank=True,
        help_text="The protocol's (the paper's) speedup: geomean over every timed case, call latency as the "
        "paper's harness times it",
    )
    protocol_speedup_ci_low = models.FloatField(null=True, blank=True)
    protocol_speedup_ci_high = models.FloatField(null=True, blank=True)
    # How much of the protocol speedup is the launch race (timing_protocol.launch_bound): on the H200 most ATen
    # and vLLM cases are, and there the figure moves 51-93 % between machines where the device-time one moves
    # 0.4 % (docs/measurements/h200-2026-12-03-evening-head/). Kept beside the figure so boards can say so.
    protocol_launch_bound_share = models.FloatField(
        null=True,
        blank=True,
        help_text="Share of the protocol-timed cases with a side under one L2 flush (the launch race decides their "
        "figure); null where the protocol speedup is unknown or its judge did not mark such cases",
    )
    flagged = models.BooleanField(default=False, help_text="Faster than the roofline floor: not ranked")
    environment = models.JSONField(default=dict, blank=True)
    stage_seconds = models.JSONField(default=dict, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    worker_pid = models.IntegerField(null=True, blank=True)
    lease = models.CharField(max_length=64, blank=True)
    attempts = models.PositiveIntegerField(default=0, help_text="How many times a worker claimed it")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    queued_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    rejudge_of = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="rejudged_by",
        help_text="The finished run of the same kernel and chip that this re-judgement supersedes",
    )
    rejudge_batch = models.ForeignKey(
        "RejudgeBatch", null=True, blank=True, on_delete=models.SET_NULL, related_name="runs"
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["chip", "status"]),
            models.Index(fields=["kernel", "chip"]),
            models.Index(fields=["chip", "finished_at"]),  # a chip's recent judgements: queue estimates
        ]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.status})"

    @property
    def is_stale(self) -> bool:
        """Judged against an older version of its operator, or by an older version of the judge."""
        return run_is_stale(
            operator_version=self.operator_version,
            current_operator_version=self.kernel.operator.version,
            judge_version=self.judge_version,
        )

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_STATUSES

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None


class RejudgeBatch(models.Model):
    """Staff asked for a set's kernels to be judged again on one chip by today's judge
    (``evaluation.services.rejudge_set``). Its runs are ordinary queued runs, claimed fairly like any upload's;
    each names the run it supersedes (``Run.rejudge_of``), which is what the diff page compares it with."""

    operator_set = models.ForeignKey(
        "leaderboard.OperatorSet", null=True, on_delete=models.SET_NULL, related_name="rejudge_batches"
    )
    set_slug = models.SlugField(max_length=64, help_text="The set's slug when asked (kept if the set is deleted)")
    chip = models.ForeignKey(Chip, on_delete=models.PROTECT, related_name="rejudge_batches")
    stale_only = models.BooleanField(default=False, help_text="Only runs judged by an older judge or operator")
    judge_version = models.PositiveIntegerField(help_text="The judge's version when the re-judgement was asked")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    already_pending = models.PositiveIntegerField(
        default=0, help_text="Kernels left out because a run of theirs was already queued or running there"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"re-judgement {self.pk} of {self.set_slug} on {self.chip_id}"


def run_is_stale(*, operator_version: int, current_operator_version: int, judge_version: int | None) -> bool:
    """A verdict made against an older operator record or by an older judge no longer stands for today's
    rules (a queued or running run, with no judge version yet, is stale only by its operator version)."""
    return operator_version < current_operator_version or (judge_version is not None and judge_version < JUDGE_VERSION)

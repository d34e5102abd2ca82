"""API representations. Output serializers shape what is read; input serializers parse what is written (the
services decide whether it is acceptable). No business logic here."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from evaluation.models import Chip, Run, RunStatus
from leaderboard import access
from leaderboard.api.exports import RUN_COLUMNS
from leaderboard.api.filters import MAX_ID
from leaderboard.models import Kernel, Method, MethodKind, Operator, OperatorSet, Submission, Visibility
from leaderboard.progress import chip_has_live_worker, submission_progress
from leaderboard.services import MAX_SOLVE_SECONDS, MAX_TOKEN_COUNT

# --- Catalog --------------------------------------------------------------------------------------------


class OperatorSerializer(serializers.ModelSerializer):
    sets = serializers.SerializerMethodField(help_text="Slugs of the (published) operator sets it belongs to")

    class Meta:
        model = Operator
        fields = [
            "operator_id",
            "source",
            "name",
            "active",
            "in_mc",
            "version",
            "entry_points",
            "sets",
            "unavailable_reason",
        ]

    def get_sets(self, operator: Operator) -> list[str]:
        request = self.context.get("request")
        staff = bool(request and request.user.is_authenticated and request.user.is_staff)
        return sorted(s.slug for s in operator.sets.all() if staff or s.public)  # uses the view's prefetch


class OperatorDetailSerializer(OperatorSerializer):
    class Meta(OperatorSerializer.Meta):
        fields = OperatorSerializer.Meta.fields + [
            "description",
            "reference",
            "public_cases",
            "tolerance_rule",
            "judgement",
            "judgement_notes",
            "cost_model",
            "departures",
            "definition_hash",
            "updated_at",
        ]


class OperatorSetSerializer(serializers.ModelSerializer):
    operator_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = OperatorSet
        fields = ["slug", "title", "description", "builtin", "position", "operator_count"]


class OperatorSetDetailSerializer(OperatorSetSerializer):
    operators = serializers.SlugRelatedField(many=True, read_only=True, slug_field="operator_id")

    class Meta(OperatorSetSerializer.Meta):
        fields = OperatorSetSerializer.Meta.fields + ["operators"]


class PromptSerializer(serializers.Serializer):
    operator_id = serializers.CharField()
    chip = serializers.CharField()
    file_name = serializers.CharField()
    prompt = serializers.CharField(allow_null=True)


class ChipSerializer(serializers.ModelSerializer):
    label = serializers.CharField(read_only=True)
    live = serializers.SerializerMethodField(help_text="A worker attached to this chip heartbeated recently")
    queued_runs = serializers.SerializerMethodField()

    class Meta:
        model = Chip
        fields = [
            "slug",
            "label",
            "device_type",
            "timings_meaningful",
            "is_reference_platform",
            "active",
            "live",
            "last_heartbeat_at",
            "queued_runs",
        ]

    def get_live(self, chip: Chip) -> bool:
        return chip_has_live_worker(chip=chip)

    def get_queued_runs(self, chip: Chip) -> int:
        return Run.objects.filter(chip=chip, status=RunStatus.QUEUED).count()


# --- Methods, submissions, kernels, runs ---------------------------------------------------------------


class MethodSerializer(serializers.ModelSerializer):
    label = serializers.CharField(source="__str__", read_only=True)
    owner = serializers.SlugRelatedField(read_only=True, slug_field="username")

    class Meta:
        model = Method
        fields = ["id", "label", "scaffold", "model", "kind", "link", "description", "public", "owner", "created_at"]
        read_only_fields = ["id", "label", "description", "owner", "created_at"]


class MethodCreateSerializer(serializers.Serializer):
    scaffold = serializers.CharField(max_length=120)
    model = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")
    kind = serializers.ChoiceField(choices=MethodKind.choices, default=MethodKind.AGENT)
    link = serializers.URLField(required=False, allow_blank=True, default="")
    public = serializers.BooleanField(default=True)

    def validate_scaffold(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("a scaffold name is required")
        return value


class MethodBriefSerializer(serializers.ModelSerializer):
    label = serializers.CharField(source="__str__", read_only=True)

    class Meta:
        model = Method
        fields = ["id", "label", "scaffold", "model", "kind"]


class SubmissionSerializer(serializers.ModelSerializer):
    owner = serializers.SlugRelatedField(read_only=True, slug_field="username")
    method = MethodBriefSerializer(read_only=True)
    target_chip = serializers.SlugRelatedField(read_only=True, slug_field="slug")
    kernel_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Submission
        fields = ["id", "owner", "method", "target_chip", "visibility", "notes", "created_at", "kernel_count"]


class ProgressRunSerializer(serializers.ModelSerializer):
    operator_id = serializers.CharField(source="kernel.operator.operator_id")
    chip = serializers.CharField(source="chip.slug")
    queue_position = serializers.SerializerMethodField(help_text="Queued runs: judgements on the chip before it")
    starts_in_s = serializers.SerializerMethodField(help_text="Queued runs: estimated seconds until it starts")

    class Meta:
        model = Run
        fields = [
            "id",
            "operator_id",
            "chip",
            "status",
            "protocol_speedup",
            "speedup",
            "cases_total",
            "cases_passed",
            "queue_position",
            "starts_in_s",
        ]

    def get_queue_position(self, run: Run) -> int | None:
        estimate = getattr(run, "queue_estimate", None)
        return estimate.position if estimate else None

    def get_starts_in_s(self, run: Run) -> float | None:
        estimate = getattr(run, "queue_estimate", None)
        return round(estimate.starts_in_s, 1) if estimate and estimate.starts_in_s is not None else None


class ProgressSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    finished = serializers.IntegerField()
    passed = serializers.IntegerField()
    done = serializers.BooleanField()
    chips_without_worker = serializers.ListField(child=serializers.CharField())
    runs = ProgressRunSerializer(many=True)


class SubmissionDetailSerializer(SubmissionSerializer):
    progress = serializers.SerializerMethodField()

    class Meta(SubmissionSerializer.Meta):
        fields = SubmissionSerializer.Meta.fields + ["progress"]

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, submission: Submission) -> dict[str, Any]:
        return progress_data(submission)


def progress_data(submission: Submission) -> dict[str, Any]:
    progress = submission_progress(submission=submission)
    return {
        "total": progress["total"],
        "finished": progress["finished"],
        "passed": progress["passed"],
        "done": progress["finished"] == progress["total"],
        "chips_without_worker": progress["chips_without_worker"],
        "runs": ProgressRunSerializer(progress["runs"], many=True).data,
    }


class KernelRunSerializer(serializers.ModelSerializer):
    chip = serializers.CharField(source="chip.slug")

    class Meta:
        model = Run
        fields = ["id", "chip", "status", "protocol_speedup", "speedup", "created_at"]


class KernelSerializer(serializers.ModelSerializer):
    operator_id = serializers.CharField(source="operator.operator_id")
    method = serializers.IntegerField(source="submission.method_id")

    class Meta:
        model = Kernel
        fields = [
            "id",
            "submission",
            "method",
            "operator_id",
            "filename",
            "round",
            "sha256",
            "input_tokens",
            "output_tokens",
            "cache_creation_tokens",
            "cache_read_tokens",
            "total_tokens",
            "solve_seconds",
            "created_at",
        ]


class KernelDetailSerializer(KernelSerializer):
    source_code = serializers.SerializerMethodField(help_text="Null when the code is private to its owner")
    runs = KernelRunSerializer(many=True, read_only=True)

    class Meta(KernelSerializer.Meta):
        fields = KernelSerializer.Meta.fields + ["source_code", "runs"]

    @extend_schema_field(OpenApiTypes.STR)
    def get_source_code(self, kernel: Kernel) -> str | None:
        request = self.context.get("request")
        user = request.user if request else None
        if user is not None and access.can_view_code(user=user, submission=kernel.submission):
            return kernel.source_code
        return None


class RunSerializer(serializers.ModelSerializer):
    operator_id = serializers.CharField(source="kernel.operator.operator_id")
    submission = serializers.IntegerField(source="kernel.submission_id")
    method = serializers.IntegerField(source="kernel.submission.method_id")
    chip = serializers.CharField(source="chip.slug")
    stale = serializers.SerializerMethodField()

    class Meta:
        model = Run
        # One run-row shape for the paged API and the streamed export (exports.run_rows builds the same keys
        # from a values() query, for speed).
        fields = list(RUN_COLUMNS)

    def get_stale(self, run: Run) -> bool:
        return run.is_stale


class RunDetailSerializer(RunSerializer):
    class Meta(RunSerializer.Meta):
        fields = RunSerializer.Meta.fields + [
            "reason",
            "failed_case",
            "case_results",
            "checks",
            "environment",
            "stage_seconds",
            "attempts",
        ]


class RerunSerializer(serializers.Serializer):
    chip = serializers.SlugRelatedField(
        queryset=Chip.objects.filter(active=True),
        slug_field="slug",
        required=False,
        allow_null=True,
        help_text="Judge on this chip instead of the run's own",
    )


# --- Submission input ----------------------------------------------------------------------------------


OPTIONAL: dict[str, Any] = {"required": False, "allow_null": True}


class KernelInSerializer(serializers.Serializer):
    operator_id = serializers.CharField(max_length=128)
    code = serializers.CharField(trim_whitespace=False, allow_blank=True)
    filename = serializers.CharField(max_length=255, required=False, allow_blank=True, default="")
    round = serializers.IntegerField(min_value=1, max_value=1000, default=1)
    input_tokens = serializers.IntegerField(min_value=0, max_value=MAX_TOKEN_COUNT, **OPTIONAL)
    output_tokens = serializers.IntegerField(min_value=0, max_value=MAX_TOKEN_COUNT, **OPTIONAL)
    cache_creation_tokens = serializers.IntegerField(min_value=0, max_value=MAX_TOKEN_COUNT, **OPTIONAL)
    cache_read_tokens = serializers.IntegerField(min_value=0, max_value=MAX_TOKEN_COUNT, **OPTIONAL)
    total_tokens = serializers.IntegerField(min_value=0, max_value=MAX_TOKEN_COUNT, **OPTIONAL)
    solve_seconds = serializers.FloatField(min_value=0, max_value=MAX_SOLVE_SECONDS, **OPTIONAL)


class SubmissionOptionsSerializer(serializers.Serializer):
    """Who wrote the kernels and where to judge them; shared by the JSON and the archive upload."""

    method_id = serializers.IntegerField(
        min_value=1, max_value=MAX_ID, required=False, help_text="An existing method; or give scaffold"
    )
    scaffold = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")
    model = serializers.CharField(max_length=120, required=False, allow_blank=True, default="")
    kind = serializers.ChoiceField(choices=MethodKind.choices, default=MethodKind.AGENT)
    chips = serializers.ListField(
        child=serializers.SlugField(),
        required=False,
        default=list,
        help_text="Chips to judge on; default: every active chip with a live worker (else every active chip)",
    )
    target_chip = serializers.SlugField(
        required=False, allow_null=True, default=None, help_text="The chip the kernels were written for, if any"
    )
    visibility = serializers.ChoiceField(choices=Visibility.choices, default=Visibility.PUBLIC)
    notes = serializers.CharField(required=False, allow_blank=True, default="", max_length=5000)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not attrs.get("method_id") and not attrs.get("scaffold", "").strip():
            raise serializers.ValidationError({"scaffold": "give method_id or scaffold (and model)"})
        return attrs


class SubmissionCreateSerializer(SubmissionOptionsSerializer):
    kernels = KernelInSerializer(many=True, allow_empty=False, max_length=2000)


class SubmissionImportSerializer(SubmissionOptionsSerializer):
    archive = serializers.FileField(
        help_text="A zip or tar(.gz) of a KernelGenBench run directory "
        "(kernels/<ns>__<op>.py, progress.json, results.json)"
    )

    def to_internal_value(self, data):
        # Multipart forms send a list as repeated fields or one comma-separated field: accept both.
        if hasattr(data, "getlist"):
            mutable = {key: data.get(key) for key in data}
            chips = [item for value in data.getlist("chips") for item in str(value).split(",") if item.strip()]
            mutable["chips"] = [chip.strip() for chip in chips]
            data = mutable
        return super().to_internal_value(data)


class ProblemsSerializer(serializers.Serializer):
    problems = serializers.ListField(child=serializers.CharField())


# --- Leaderboards ---------------------------------------------------------------------------------------


class SummarySerializer(serializers.Serializer):
    operators_total = serializers.IntegerField()
    solved = serializers.IntegerField()
    accuracy_pct = serializers.FloatField()
    protocol_speedup_geomean = serializers.FloatField(
        allow_null=True,
        help_text="The protocol's (the paper's) speedup: every timed case, call latency as the paper's harness "
        "times it; geometric "
        "mean over passed operators with one; null where none was timed that way",
    )
    protocol_speedup_covered = serializers.IntegerField(help_text="Passed operators the protocol speedup covers")
    protocol_launch_bound_share = serializers.FloatField(
        allow_null=True,
        help_text="How much of the protocol speedup is the launch race: the share (0-1) of protocol-timed cases "
        "with a side under one L2 flush, mean over the operators of the protocol speedup that have one (each "
        "operator weighs the same); null where none has (cuBLAS's loop has no flush; judges before the marks)",
    )
    speedup_geomean = serializers.FloatField(
        allow_null=True, help_text="The device-time speedup: large cases, launch cost hidden"
    )
    speedup_covered = serializers.IntegerField()
    fast_p = serializers.DictField(
        child=serializers.FloatField(), help_text="By the device-time speedup: share of ALL operators passed above p"
    )
    protocol_fast_p = serializers.DictField(
        child=serializers.FloatField(),
        help_text="By the protocol speedup: share of ALL operators passed with a protocol speedup above p",
    )
    tokens_total = serializers.IntegerField()
    tokens_per_success = serializers.FloatField(allow_null=True)
    solve_hours = serializers.FloatField()
    stale = serializers.IntegerField()


class OutcomeSerializer(serializers.Serializer):
    operator_id = serializers.CharField()
    source = serializers.CharField()
    solved = serializers.BooleanField()
    speedup = serializers.FloatField(allow_null=True, help_text="Device-time speedup of the deciding kernel")
    tokens = serializers.IntegerField()
    solve_seconds = serializers.FloatField()
    attempts = serializers.IntegerField()
    stale = serializers.BooleanField()
    flagged = serializers.BooleanField()
    protocol_speedup = serializers.FloatField(
        allow_null=True, help_text="The protocol's (the paper's) speedup of the same kernel; null when unknown"
    )
    protocol_launch_bound_share = serializers.FloatField(
        allow_null=True,
        help_text="The share (0-1) of that kernel's protocol-timed cases with a side under one L2 flush (the "
        "launch race decides their figure); null when unknown (no flush: cuBLAS; a judge before the marks)",
    )


class LeaderboardRowSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    method = MethodBriefSerializer()
    summaries = serializers.DictField(child=SummarySerializer())
    outcomes = OutcomeSerializer(many=True, required=False)


class LeaderboardSerializer(serializers.Serializer):
    chip = serializers.CharField()
    set = serializers.CharField()
    views = serializers.ListField(child=serializers.CharField())
    rows = LeaderboardRowSerializer(many=True)


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()
    username = serializers.CharField()

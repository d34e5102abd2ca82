"""Admin for operators of the service: chips, workers and runs (with re-run actions)."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html

from evaluation.models import Chip, RejudgeBatch, Run, Worker
from evaluation.services import run_rerun, worker_take_runs_again
from leaderboard.admin import ChipChoiceForm, KeepsBestVerdicts, ask_for_object
from leaderboard.models import Submission


@admin.register(Chip)
class ChipAdmin(KeepsBestVerdicts, admin.ModelAdmin):
    list_display = (
        "slug",
        "display_name",
        "vendor",
        "device_type",
        "public_alias",
        "timings_meaningful",
        "is_reference_platform",
        "last_heartbeat_at",
        "active",
    )
    list_filter = ("device_type", "vendor", "active", "timings_meaningful")
    search_fields = ("slug", "display_name", "vendor", "public_alias")
    readonly_fields = ("last_heartbeat_at", "last_worker_host", "software")
    refresh_on_save = False  # what counts where does not depend on a chip's fields

    def verdict_scope(self, pks: list) -> dict[str, list]:
        # A deleted chip's targeted submissions then target no chip: their kernels count as native everywhere.
        return {"submissions": list(Submission.objects.filter(target_chip_id__in=pks).values_list("pk", flat=True))}


@admin.register(Worker)
class WorkerAdmin(admin.ModelAdmin):
    list_display = (
        "hostname",
        "chip",
        "started_at",
        "last_heartbeat_at",
        "consecutive_errors",
        "stopped_taking_runs_at",
    )
    list_filter = ("chip",)
    search_fields = ("hostname",)
    readonly_fields = (
        "hostname",
        "chip",
        "started_at",
        "last_heartbeat_at",
        "software",
        "consecutive_errors",
        "stopped_taking_runs_at",
        "stopped_reason",
    )
    actions = ["take_runs_again"]

    @admin.action(description="Take runs again (after fixing what made its judge fail)")
    def take_runs_again(self, request, queryset):
        from evaluation.tasks import take_runs_again

        resumed = []
        for worker in queryset.filter(stopped_taking_runs_at__isnull=False).select_related("chip"):
            worker_take_runs_again(hostname=worker.hostname)
            try:
                take_runs_again(worker.hostname, worker.chip.queue_name)
            except Exception as error:  # the broker unreachable: the worker takes runs once restarted
                self.message_user(
                    request, f"{worker.hostname}: cleared, but not reached ({error}); restart it", level="warning"
                )
            resumed.append(worker.hostname)
        self.message_user(request, f"{len(resumed)} worker(s) take runs again: {', '.join(resumed) or 'none stopped'}")


@admin.register(Run)
class RunAdmin(KeepsBestVerdicts, admin.ModelAdmin):
    list_display = (
        "id",
        "operator",
        "chip",
        "status",
        "protocol_speedup",
        "speedup",
        "flagged",
        "attempts",
        "worker",
        "created_at",
        "finished_at",
    )
    list_filter = ("status", "chip", "flagged", "kernel__operator__source")
    search_fields = ("kernel__operator__operator_id", "kernel__submission__method__scaffold", "worker", "reason")
    list_select_related = ("kernel__operator", "chip")
    actions = ("rerun_same_chip", "rerun_on_chip")
    # A verdict is evidence: nothing on a run is edited by hand. Re-runs create new runs.
    readonly_fields = [field.name for field in Run._meta.fields]

    def verdict_scope(self, pks: list) -> dict[str, list]:
        return {"runs": pks}

    @admin.display(description="Operator", ordering="kernel__operator__operator_id")
    def operator(self, obj: Run) -> str:
        return obj.kernel.operator.operator_id

    @admin.action(description="Re-run selected runs on their chip")
    def rerun_same_chip(self, request: HttpRequest, queryset: QuerySet) -> None:
        created = [run_rerun(run=run) for run in queryset.select_related("chip", "kernel__operator")]
        self.message_user(request, f"{len(created)} runs queued.", messages.SUCCESS)

    @admin.action(description="Re-run selected runs on another chip")
    def rerun_on_chip(self, request: HttpRequest, queryset: QuerySet) -> HttpResponse | None:
        data, page = ask_for_object(self, request, queryset, ChipChoiceForm, "rerun_on_chip", "Re-run on a chip")
        if page:
            return page
        created = [run_rerun(run=run, chip=data["chip"]) for run in queryset.select_related("kernel__operator")]
        self.message_user(request, f"{len(created)} runs queued on {data['chip']}.", messages.SUCCESS)
        return None


@admin.register(RejudgeBatch)
class RejudgeBatchAdmin(admin.ModelAdmin):
    """Re-judgements are asked for from the operator sets' action, the staff page or ``manage.py rejudge``;
    here they are only listed, with a link to what changed."""

    list_display = ("id", "set_slug", "chip", "stale_only", "judge_version", "requested_by", "created_at", "diff")
    list_filter = ("chip", "stale_only")
    readonly_fields = [field.name for field in RejudgeBatch._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="What changed")
    def diff(self, obj: RejudgeBatch) -> str:
        return format_html('<a href="{}">diff</a>', reverse("leaderboard:rejudge", args=[obj.pk]))

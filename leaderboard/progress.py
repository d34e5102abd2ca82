"""A submission's progress: its runs with their statuses and queue estimates, and whether its chips have a
live worker (the submission page and its live-updating JSON, the API's submission detail, the upload form).
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models.functions import Now

from evaluation.models import Chip, Run, RunStatus, Worker
from evaluation.queue_estimates import queue_estimates
from leaderboard.models import Submission


def submission_progress(*, submission: Submission) -> dict:
    """Counts and per-run statuses of a submission, for its page and its live-updating JSON."""
    runs = list(
        Run.objects.filter(kernel__submission=submission)
        .select_related("chip", "kernel__operator")
        .order_by("kernel__operator__operator_id", "chip__slug", "created_at")
    )
    finished = sum(1 for run in runs if run.is_finished)
    chips = {run.chip for run in runs}
    estimates = queue_estimates(runs=runs)
    for run in runs:
        run.queue_estimate = estimates.get(run.pk)  # None unless queued
    return {
        "runs": runs,
        "total": len(runs),
        "finished": finished,
        "passed": sum(1 for run in runs if run.status == RunStatus.PASSED),
        "chips_without_worker": sorted(chip.slug for chip in chips if not chip_has_live_worker(chip=chip)),
    }


def chip_has_live_worker(*, chip: Chip) -> bool:
    # Said as soon as three beats are missed, well before the re-queuer gives up on the worker (a minute).
    # Beats carry the database's time (evaluation.clock): judged against it, not this host's clock.
    silent_after = min(settings.KGB_WORKER_STALE_AFTER_S, 3 * settings.KGB_HEARTBEAT_INTERVAL_S)
    since = Now() - timedelta(seconds=silent_after)
    # A worker that stopped taking runs (judge errors in a row: evaluation.models.Worker) beats but serves none.
    return Worker.objects.filter(chip=chip, last_heartbeat_at__gte=since, stopped_taking_runs_at__isnull=True).exists()

"""Celery tasks: thin, idempotent, safe to redeliver. Each fetches by id and calls services.

``judge_run`` is sent to the queue of the run's chip (``chip.<slug>``); the worker attached to that chip
judges it in a sandbox through ``evaluation.judge.judge``.
"""

from __future__ import annotations

import logging
import os
import traceback

from celery import shared_task
from django.conf import settings

from evaluation import services
from evaluation.judge.job import JudgeResult

logger = logging.getLogger(__name__)


@shared_task(
    name="evaluation.judge_run",
    acks_late=True,
    reject_on_worker_lost=True,
    # Above the judge's own budget, which already kills the sandbox: these only catch a stuck worker.
    soft_time_limit=settings.KGB_JUDGE_BUDGET_S + 60,
    time_limit=settings.KGB_JUDGE_BUDGET_S + 120,
)
def judge_run(run_id: int) -> str:
    from celery import current_task

    hostname = current_task.request.hostname or f"celery@{os.uname().nodename}"
    claim = services.run_claim(run_id=run_id, worker=hostname, pid=os.getpid())
    if claim is None:
        return "skipped"  # finished, or held by a live claim: a duplicate delivery
    run, lease = claim
    job = services.run_build_job(run=run)
    try:
        from evaluation.judge import judge

        result = judge(job)
    except Exception:  # the judge promises never to raise for a kernel's faults: this is ours
        logger.exception("judge failed on run %s", run_id)
        result = JudgeResult(status="error", reason="the judge failed:\n" + traceback.format_exc(limit=20))
    recorded = services.run_record_result(run=run, lease=lease, result=result)
    return result.status if recorded else "stale"


@shared_task(name="evaluation.requeue_stale_runs")
def requeue_stale_runs() -> dict[str, int]:
    return services.runs_requeue_stale()

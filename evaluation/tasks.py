"""Celery tasks: thin, idempotent, safe to redeliver. Each fetches by id and calls services.

``judge_run`` is sent to the queue of the run's chip (``chip.<slug>``); the worker attached to that chip
judges it in a sandbox through ``evaluation.judge.judge``.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
import traceback
from collections.abc import Callable
from typing import TypeVar

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections

from evaluation import services
from evaluation.judge.job import JudgeResult

logger = logging.getLogger(__name__)
T = TypeVar("T")


def with_database_retries(operation: Callable[[], T], *, attempts: int = 6, first_delay_s: float = 1.0) -> T:
    """Run a short database operation, retrying transient failures ("database is locked" on SQLite under
    load, a dropped PostgreSQL connection). Safe because every operation here is conditional and atomic."""
    delay = first_delay_s
    for attempt in range(1, attempts + 1):
        try:
            return operation()
        except (OperationalError, InterfaceError):
            if attempt == attempts:
                raise
            logger.warning(
                "database busy or unreachable (attempt %d of %d); retrying in %.0f s",
                attempt,
                attempts,
                delay,
                exc_info=True,
            )
            close_old_connections()
            time.sleep(delay)
            delay = min(delay * 2, 15.0)
    raise AssertionError("unreachable")


@shared_task(
    name="evaluation.judge_run",
    acks_late=True,
    reject_on_worker_lost=True,
    # Above the judge's own budget (plus what it may queue for the GPU), which already kills the sandbox:
    # these only catch a stuck worker.
    soft_time_limit=settings.KGB_JUDGE_BUDGET_S + settings.KGB_DEVICE_WAIT_LIMIT_S + 60,
    time_limit=settings.KGB_JUDGE_BUDGET_S + settings.KGB_DEVICE_WAIT_LIMIT_S + 120,
)
def judge_run(run_id: int) -> str:
    from celery import current_task

    hostname = current_task.request.hostname or f"celery@{os.uname().nodename}"
    # One lease for every try: a try whose claim committed before its connection dropped is found again.
    lease = secrets.token_hex(16)
    claim = with_database_retries(
        lambda: services.run_claim_fairest(run_id=run_id, worker=hostname, pid=os.getpid(), lease=lease)
    )
    if claim is None:
        return "skipped"  # nothing queued on the chip: a ticket left over from a re-send or a redelivery
    run, lease = claim
    job = services.run_build_job(run=run)
    try:
        from evaluation.judge import judge

        result = judge(job)
    except Exception:  # the judge promises never to raise for a kernel's faults: this is ours
        logger.exception("judge failed on run %s", run.pk)
        result = JudgeResult(status="error", reason="the judge failed:\n" + traceback.format_exc(limit=20))
    if result.status == "error" and result.retryable:
        outcome = with_database_retries(lambda: services.run_retry_later(run=run, lease=lease, reason=result.reason))
        if outcome != "exhausted":
            return outcome  # "requeued", or "stale": another claim owns the run now
    # A verdict can take minutes to make: a database hiccup at the end must not throw it away.
    recorded = with_database_retries(lambda: services.run_record_result(run=run, lease=lease, result=result))
    return result.status if recorded else "stale"


@shared_task(name="evaluation.requeue_stale_runs")
def requeue_stale_runs() -> dict[str, int]:
    return services.runs_requeue_stale()

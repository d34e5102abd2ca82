"""Celery tasks: thin, idempotent, safe to redeliver. Each fetches by id and calls services.

``judge_run`` is sent to the queue of the run's chip (``chip.<slug>``); the worker attached to that chip
judges it in a sandbox through ``evaluation.judge.judge``. An ``error`` is our side's failure, never a
verdict on the kernel: the run goes back to the queue while it has claims left, and a worker with
KGB_WORKER_ERROR_STREAK such errors in a row stops taking runs (evaluation.models.Worker).
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
from evaluation.models import Run

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
    if with_database_retries(lambda: services.worker_refuses_runs(hostname=hostname)):
        # A ticket this worker took before its consumer was cancelled: back to the queue, for another worker.
        queue = with_database_retries(lambda: services.run_pass_ticket_on(run_id=run_id))
        if queue is not None:
            stop_taking_runs(hostname, queue)  # again, in case the first request never arrived
        return "passed_on"
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
    if result.status == "error":  # never a verdict on the kernel: judged again while the run has claims left
        outcome = with_database_retries(lambda: services.run_retry_later(run=run, lease=lease, reason=result.reason))
        if outcome != "exhausted":
            count_for_worker_health(hostname, run, result)
            return outcome  # "requeued", or "stale": another claim owns the run now
    # A verdict can take minutes to make: a database hiccup at the end must not throw it away.
    recorded = with_database_retries(lambda: services.run_record_result(run=run, lease=lease, result=result))
    count_for_worker_health(hostname, run, result)
    return result.status if recorded else "stale"


def count_for_worker_health(hostname: str, run: Run, result: JudgeResult) -> None:
    """Our side's failures count against this worker (transient ones excepted), verdicts clear them; the
    error that completes a streak stops it taking runs. After the run's outcome is safe: bookkeeping that
    fails only logs."""
    failed_here = result.reason if result.status == "error" and not result.retryable else None
    try:
        if with_database_retries(
            lambda: services.worker_count_judgement(hostname=hostname, run_id=run.pk, error_reason=failed_here)
        ):
            stop_taking_runs(hostname, run.chip.queue_name)
    except Exception:
        logger.exception("could not count run %s for worker %s's health", run.pk, hostname)


def take_runs_again(hostname: str, queue: str) -> None:
    """Ask this worker to consume ``queue`` again (its heartbeat after a stall, staff from the admin). Raises
    where the broker cannot take the request: the caller says so (the heartbeat asks again next beat)."""
    from celery import current_app

    current_app.control.add_consumer(queue, destination=[hostname], reply=False)


def stop_taking_runs(hostname: str, queue: str) -> None:
    """Ask this worker (``hostname``, this process's own node) to stop consuming ``queue``: a remote-control
    message its main process acts on, since the pool's children cannot touch the consumer. Tickets it had
    already taken are passed on (judge_run); it serves again once restarted."""
    from celery import current_app

    try:
        current_app.control.cancel_consumer(queue, destination=[hostname], reply=False)
    except Exception:  # the broker unreachable: judge_run passes every ticket on meanwhile
        logger.exception("could not ask worker %s to stop consuming %s", hostname, queue)


@shared_task(name="evaluation.requeue_stale_runs")
def requeue_stale_runs() -> dict[str, int]:
    return services.runs_requeue_stale()

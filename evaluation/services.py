"""Writes of the evaluation side: the run state machine, claiming and recording runs, workers and chips.

Every status change of a Run goes through ``run_transition``; it is a conditional UPDATE (``WHERE status =
<from>``), so two workers racing for one run cannot both win, and a finished run never changes again.
"""

from __future__ import annotations

import logging
import math
import os
import secrets
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from celery import signature
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Min
from django.db.models.functions import Now
from django.utils import timezone

from evaluation.clock import database_now
from evaluation.judge.bundle import BUNDLE_LEASE_PREFIX
from evaluation.judge.job import JudgeJob, JudgeResult
from evaluation.judge.version import JUDGE_VERSION
from evaluation.models import (
    FINISHED_STATUSES,
    Chip,
    DeviceType,
    OwnerTurn,
    RejudgeBatch,
    Run,
    RunStatus,
    Worker,
    run_is_stale,
)

logger = logging.getLogger(__name__)

JUDGE_TASK = "evaluation.judge_run"  # evaluation.tasks.judge_run

# The legal moves of a run. Finished statuses have none: a verdict is final (a re-run is a new Run).
ALLOWED_MOVES: dict[str, frozenset[str]] = {
    RunStatus.QUEUED: frozenset({RunStatus.RUNNING, RunStatus.ERROR}),
    RunStatus.RUNNING: frozenset(FINISHED_STATUSES | {RunStatus.QUEUED}),
    **{status: frozenset() for status in FINISHED_STATUSES},
}


class IllegalRunTransition(Exception):
    """A move the state machine forbids, or a run that changed under us (another worker won the race)."""


def check_run_transition(*, from_status: str, to_status: str) -> None:
    if to_status not in ALLOWED_MOVES.get(from_status, frozenset()):
        raise IllegalRunTransition(f"a run cannot go from {from_status} to {to_status}")


def run_transition(*, run: Run, to_status: str, expected_lease: str | None = None, **fields: Any) -> Run:
    """Move ``run`` to ``to_status`` and set ``fields``, atomically and only from its current status.

    ``expected_lease`` additionally requires that the run is still held by that claim. Raises
    IllegalRunTransition when the move is illegal or the run changed in the meantime.
    """
    check_run_transition(from_status=run.status, to_status=to_status)
    # The database's time, not this host's: the re-queuer of another host compares these (evaluation.clock).
    if to_status in FINISHED_STATUSES:
        fields.setdefault("finished_at", Now())
    if to_status == RunStatus.QUEUED:
        fields.setdefault("queued_at", Now())
    conditions: dict[str, Any] = {"pk": run.pk, "status": run.status}
    if expected_lease is not None:
        conditions["lease"] = expected_lease
    with transaction.atomic():
        updated = Run.objects.filter(**conditions).update(status=to_status, **fields)
        if updated != 1:
            raise IllegalRunTransition(f"run {run.pk} changed under us (expected status {run.status})")
        if to_status in FINISHED_STATUSES:
            _verdict_landed(run_id=run.pk)
    run.refresh_from_db()
    return run


def _verdict_landed(*, run_id: int) -> None:
    """A verdict changes what the boards show: their best-verdict summary is refreshed in its transaction."""
    from leaderboard.best_verdicts import runs_changed  # leaderboard imports these services: import here

    runs_changed(run_ids=[run_id])


# --- Queueing -----------------------------------------------------------------------------------------


def run_enqueue(*, run: Run) -> None:
    """Send the run to its chip's queue once the surrounding transaction has committed.

    The task is named, not imported: tasks call these services, and a signature resolves to the registered
    task (eager mode included) without making the two modules import each other."""
    queue = run.chip.queue_name
    run_id = run.pk
    transaction.on_commit(lambda: signature(JUDGE_TASK, args=[run_id], queue=queue).apply_async())


def run_create(*, kernel: Any, chip: Chip, **fields: Any) -> Run:
    """A queued run of ``kernel`` on ``chip`` against its operator's current version, enqueued after commit."""
    run = Run.objects.create(kernel=kernel, chip=chip, operator_version=kernel.operator.version, **fields)
    run_enqueue(run=run)
    return run


def runs_create_for_kernels(*, kernels: Iterable[Any], chips: Iterable[Chip]) -> list[Run]:
    """One queued run per (kernel, chip), each enqueued after commit."""
    chips = list(chips)
    return [run_create(kernel=kernel, chip=chip) for kernel in kernels for chip in chips]


def run_rerun(*, run: Run, chip: Chip | None = None) -> Run:
    """Judge the run's kernel again (on ``chip`` or the same chip) as a new run: verdicts are never rewritten."""
    with transaction.atomic():
        return runs_create_for_kernels(kernels=[run.kernel], chips=[chip or run.chip])[0]


# --- Re-judging a set -----------------------------------------------------------------------------------


class RejudgeRefused(Exception):
    """A re-judgement that cannot be queued; the message says why, in words for the person who asked."""


def rejudge_resolve(*, set_slug: str, chip_slug: str) -> tuple[Any, Chip]:
    """The operator set and chip named by these slugs, or RejudgeRefused naming the ones that exist."""
    from leaderboard.models import OperatorSet  # leaderboard imports these services: import here

    operator_set = OperatorSet.objects.filter(slug=set_slug).first()
    if operator_set is None:
        known = ", ".join(OperatorSet.objects.order_by("slug").values_list("slug", flat=True)) or "none"
        raise RejudgeRefused(f"no operator set {set_slug!r} (sets: {known})")
    chip = Chip.objects.filter(slug=chip_slug).first()
    if chip is None:
        known = ", ".join(Chip.objects.order_by("slug").values_list("slug", flat=True)) or "none"
        raise RejudgeRefused(f"no chip {chip_slug!r} (chips: {known})")
    return operator_set, chip


def rejudge_candidates(*, operator_set: Any, chip: Chip, stale_only: bool = False) -> tuple[list[Run], int]:
    """The runs a re-judgement of ``operator_set`` on ``chip`` supersedes, and how many kernels are left out
    because a run of theirs is queued or running there already.

    Per method and operator, the kernels of its latest public submission (of a public method: what the
    boards count) that has a finished run on the chip; per kernel its latest run there, which must be
    finished. ``stale_only``: only those judged by an older judge or against an older operator version.
    """
    latest_run: dict[int, tuple[int, str]] = {}  # kernel -> (its latest run here, that run's status)
    facts: dict[int, tuple[int, int, int]] = {}  # kernel -> (method, operator, submission)
    judged: set[int] = set()  # kernels with a finished run here
    runs = (
        Run.objects.filter(
            chip=chip,
            kernel__operator__in=operator_set.operators.all(),
            kernel__submission__visibility="public",
            kernel__submission__method__public=True,
        )
        .order_by("pk")
        .values_list(
            "pk", "status", "kernel_id", "kernel__submission__method_id", "kernel__operator_id", "kernel__submission_id"
        )
    )
    for run_id, status, kernel_id, method_id, operator_id, submission_id in runs.iterator():
        latest_run[kernel_id] = (run_id, status)
        facts[kernel_id] = (method_id, operator_id, submission_id)
        if status in FINISHED_STATUSES:
            judged.add(kernel_id)
    newest_submission: dict[tuple[int, int], int] = {}
    for kernel_id in judged:
        method_id, operator_id, submission_id = facts[kernel_id]
        key = (method_id, operator_id)
        newest_submission[key] = max(newest_submission.get(key, 0), submission_id)
    chosen, pending = [], 0
    for kernel_id, (method_id, operator_id, submission_id) in facts.items():
        if kernel_id not in judged or newest_submission[(method_id, operator_id)] != submission_id:
            continue
        run_id, status = latest_run[kernel_id]
        if status not in FINISHED_STATUSES:
            pending += 1
            continue
        chosen.append(run_id)
    superseded = list(Run.objects.filter(pk__in=chosen).select_related("kernel__operator", "chip").order_by("pk"))
    if stale_only:
        superseded = [
            run
            for run in superseded
            if run_is_stale(
                operator_version=run.operator_version,
                current_operator_version=run.kernel.operator.version,
                judge_version=run.judge_version,
            )
        ]
    return superseded, pending


def rejudge_set(
    *, operator_set: Any, chip: Chip, stale_only: bool = False, requested_by: Any = None, require_worker: bool = True
) -> RejudgeBatch:
    """Queue a fresh judgement, by today's judge, of the kernels ``rejudge_candidates`` chooses: each a new
    run naming the run it supersedes, sent its ticket like any upload's (claimed fairly, owner by owner).
    Boards keep the superseded verdicts until the new ones land (a kernel's latest finished run counts).

    Raises RejudgeRefused when the chip has no live worker to judge them (unless not ``require_worker``: a
    chip judged through offline bundles) or there is nothing to re-judge.
    """
    from leaderboard.progress import chip_has_live_worker  # leaderboard imports these services: import here

    if require_worker and not chip_has_live_worker(chip=chip):
        raise RejudgeRefused(
            f"no live worker serves {chip.slug}: start one (manage.py worker --chip {chip.slug}) and ask again"
        )
    with transaction.atomic():
        superseded, pending = rejudge_candidates(operator_set=operator_set, chip=chip, stale_only=stale_only)
        if not superseded:
            what = "stale verdicts" if stale_only else "finished verdicts"
            waiting = f"; {pending} kernels already have a run queued or running there" if pending else ""
            raise RejudgeRefused(f"nothing to re-judge: no {what} of set {operator_set.slug} on {chip.slug}{waiting}")
        batch = RejudgeBatch.objects.create(
            operator_set=operator_set,
            set_slug=operator_set.slug,
            chip=chip,
            stale_only=stale_only,
            judge_version=JUDGE_VERSION,
            requested_by=requested_by if getattr(requested_by, "is_authenticated", False) else None,
            already_pending=pending,
        )
        for run in superseded:
            run_create(kernel=run.kernel, chip=chip, rejudge_of=run, rejudge_batch=batch)
    return batch


# --- Claiming and recording ---------------------------------------------------------------------------


def run_claim(*, run_id: int, worker: str, pid: int | None = None, lease: str | None = None) -> tuple[Run, str] | None:
    """Claim this queued run for this worker; None when another claim holds it or it is finished.

    A run still marked running by a process of *this* host that no longer exists (a worker child killed
    mid-run, its message redelivered) is taken over: the old claim's result can then never be recorded.
    Workers judging a chip's queue claim through ``run_claim_fairest``; this names the run itself.
    """
    try:
        run = Run.objects.select_related("chip", "kernel__operator").get(pk=run_id)
    except Run.DoesNotExist:
        logger.warning("run %s does not exist (deleted?): message dropped", run_id)
        return None
    if run.status == RunStatus.RUNNING and not _take_back_dead_claim(run=run, worker=worker):
        return None
    if run.status != RunStatus.QUEUED:
        return None
    lease = lease or secrets.token_hex(16)
    claim_fields = {
        "worker": worker,
        "worker_pid": pid,
        "lease": lease,
        "attempts": run.attempts + 1,
        "started_at": Now(),  # judged overdue by other hosts: the database's clock (evaluation.clock)
    }
    try:
        run = run_transition(run=run, to_status=RunStatus.RUNNING, **claim_fields)
    except IllegalRunTransition:
        return None
    return run, lease


def run_claim_fairest(
    *, run_id: int, worker: str, pid: int | None = None, lease: str | None = None
) -> tuple[Run, str] | None:
    """Claim, for this worker, the queued run of ``run_id``'s chip whose owner was served longest ago.

    A message on a chip's queue is a ticket for one judgement there, not for the run it names: choosing at
    claim time is what keeps one owner's 2,000 uploads from delaying another owner's first one by more than
    the judgements already running. Every queued run was sent a ticket, so every one is judged; a ticket
    left over (a re-send, a duplicate delivery) finds nothing queued and does nothing. An owner's own runs
    go oldest first. None when nothing on the chip is left to claim.

    ``lease`` makes a retry of this claim safe: when an earlier try committed its claim and then lost its
    connection before it could say so, the run it holds is returned instead of a second run being claimed
    (the first would stay running under a lease nobody holds until it was judged overdue).
    """
    if lease:
        held = (
            Run.objects.select_related("chip", "kernel__operator").filter(lease=lease, status=RunStatus.RUNNING).first()
        )
        if held is not None:
            _record_owner_turn(run=held)
            return held, lease
    named = Run.objects.select_related("chip", "kernel__operator").filter(pk=run_id).first()
    if named is None:
        logger.warning("run %s does not exist (deleted?): message dropped", run_id)
        return None
    if named.status == RunStatus.RUNNING:
        _take_back_dead_claim(run=named, worker=worker)  # its redelivered ticket: the run is queued again
    for _ in range(16):  # each miss is a race lost to another worker: choose again
        candidate = _fairest_queued_run_id(chip_id=named.chip_id, worker=worker)
        if candidate is None:
            return None
        claim = run_claim(run_id=candidate, worker=worker, pid=pid, lease=lease)
        if claim is not None:
            _record_owner_turn(run=claim[0])
            return claim
    return None


def _fairest_queued_run_id(*, chip_id: int, worker: str | None = None) -> int | None:
    """The oldest queued run of the owner whose last claim on this chip is oldest (never served: first).

    Runs ``worker`` itself claimed before and gave back (a judge error, a transient one included) come last,
    whoever owns them: it takes them only when nothing else is queued. A worker whose judge is broken then
    fails different runs, and stops after a few (worker_count_judgement), instead of spending one run's
    every claim in a second; the run it gave back goes to another worker first."""
    if worker is not None:
        fresh = _fairest_queued_run_id_of(
            Run.objects.filter(chip_id=chip_id, status=RunStatus.QUEUED).exclude(attempts__gt=0, worker=worker),
            chip_id,
        )
        if fresh is not None:
            return fresh
    return _fairest_queued_run_id_of(Run.objects.filter(chip_id=chip_id, status=RunStatus.QUEUED), chip_id)


def _fairest_queued_run_id_of(queued: Any, chip_id: int) -> int | None:
    heads = (
        queued.order_by()  # the model's default ordering would join the GROUP BY
        .values("kernel__submission__owner_id")
        .annotate(head=Min("pk"))
    )
    heads = {row["kernel__submission__owner_id"]: row["head"] for row in heads}
    if not heads:
        return None
    turns = dict(
        OwnerTurn.objects.filter(chip_id=chip_id, owner_id__in=list(heads)).values_list("owner_id", "last_claimed_at")
    )
    owner = min(heads, key=lambda owner: (owner in turns, turns.get(owner) or timezone.now(), heads[owner]))
    return heads[owner]


def _record_owner_turn(*, run: Run) -> None:
    owner_id = Run.objects.filter(pk=run.pk).values_list("kernel__submission__owner_id", flat=True).first()
    now = Now()  # compared with the re-queuer's "forgotten" bound: the database's clock (evaluation.clock)
    if OwnerTurn.objects.filter(chip_id=run.chip_id, owner_id=owner_id).update(last_claimed_at=now):
        return
    try:
        with transaction.atomic():
            OwnerTurn.objects.create(chip_id=run.chip_id, owner_id=owner_id, last_claimed_at=now)
    except IntegrityError:  # another worker created it first
        OwnerTurn.objects.filter(chip_id=run.chip_id, owner_id=owner_id).update(last_claimed_at=now)


def _take_back_dead_claim(*, run: Run, worker: str) -> bool:
    """Queue ``run`` again (in place) when the claim holding it is a dead process of this worker; True if
    it now is queued. Past the attempt bound it is given up as an error instead."""
    if not _claim_is_dead_on_this_host(run=run, worker=worker):
        return False
    try:
        if run.attempts >= settings.KGB_MAX_RUN_ATTEMPTS:
            run_transition(
                run=run,
                to_status=RunStatus.ERROR,
                expected_lease=run.lease,
                reason=f"gave up after {run.attempts} attempts: the worker died each time",
            )
            return False
        run_transition(run=run, to_status=RunStatus.QUEUED, expected_lease=run.lease)
    except IllegalRunTransition:
        return False
    return True


def _claim_is_dead_on_this_host(*, run: Run, worker: str) -> bool:
    if run.worker != worker or not run.worker_pid:
        return False
    try:
        os.kill(run.worker_pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def run_record_result(*, run: Run, lease: str, result: JudgeResult) -> bool:
    """Store the judge's verdict on the run, only if ``lease`` still holds it. True when recorded.

    Both speedups (PROTOCOL 6: the protocol's and the device-time one) and their intervals are stored side by
    side; on a chip whose timings mean nothing both are unknown."""
    speedup, speedup_ci = _stored_speedup(run, result.speedup, result.speedup_ci95)
    protocol, protocol_ci = _stored_speedup(run, result.protocol_speedup, result.protocol_speedup_ci95)
    case_results = [case.__dict__ if hasattr(case, "__dict__") else case for case in result.case_results]
    try:
        run_transition(
            run=run,
            to_status=result.status,
            expected_lease=lease,
            reason=result.reason[:20000],
            cases_total=result.cases_total,
            cases_passed=result.cases_passed,
            failed_case=result.failed_case,
            case_results=case_results,
            checks=[check.__dict__ if hasattr(check, "__dict__") else check for check in result.checks],
            speedup=speedup,
            speedup_ci_low=speedup_ci[0],
            speedup_ci_high=speedup_ci[1],
            protocol_speedup=protocol,
            protocol_speedup_ci_low=protocol_ci[0],
            protocol_speedup_ci_high=protocol_ci[1],
            protocol_launch_bound_share=launch_bound_share(case_results) if protocol is not None else None,
            flagged=result.flagged,
            environment=result.environment,
            stage_seconds=result.stage_seconds,
            judge_version=result.judge_version,
        )
    except IllegalRunTransition as exc:
        logger.warning("result for run %s not recorded: %s", run.pk, exc)
        return False
    return True


def launch_bound_share(case_results: list[Any]) -> float | None:
    """The share of a run's protocol-timed cases that its judge marked launch-bound (a side under one L2 flush:
    the figure is the race between the host's launch path and the flush, timing_protocol.launch_bound). None
    when no case carries a mark: none was protocol-timed, its judge came before the marks, or its loop has no
    flush to race (cuBLAS's back-to-back calls, the interpreter's host clock). A results bundle is JSON from
    another host: only a bool counts as a mark."""
    marks = [
        case["protocol_timing"]["launch_bound"]
        for case in case_results
        if isinstance(case, dict)
        and isinstance(case.get("protocol_timing"), dict)
        and isinstance(case["protocol_timing"].get("launch_bound"), bool)
    ]
    return sum(marks) / len(marks) if marks else None


def _finite_positive(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    value = float(value)
    return value if math.isfinite(value) and value > 0 else None


def _stored_speedup(run: Run, speedup: Any, interval: Any) -> tuple[float | None, tuple[float | None, float | None]]:
    """A speedup and its 95% interval as a run stores them: unknown on a chip whose timings mean nothing, and
    anything but a finite positive number (a results bundle is JSON from another host) stored as unknown; an
    interval only beside a known speedup, and only when both its ends are known."""
    speedup = _finite_positive(speedup) if run.chip.timings_meaningful else None
    if speedup is None or not isinstance(interval, list | tuple) or len(interval) != 2:
        return speedup, (None, None)
    low, high = _finite_positive(interval[0]), _finite_positive(interval[1])
    return speedup, ((low, high) if low is not None and high is not None else (None, None))


# Measured peaks are what torch's own kernels sustain, not what the chip can do: a good kernel may beat them
# by a little. A chip known only by measurement gets its roofline floor from them with this much headroom,
# so only the impossible is flagged.
MEASURED_PEAK_HEADROOM = 1.25


def chip_peaks(*, chip: Chip) -> tuple[float | None, dict[str, float]]:
    """The peaks a roofline floor is computed from: the chip's own (set by an admin, or filled in from a
    worker's measurement), else the datasheet's for a known chip, else none (no roofline check)."""
    from evaluation.judge.backends import peaks_for

    if chip.peak_bandwidth_bytes_per_s:
        return chip.peak_bandwidth_bytes_per_s, dict(chip.peak_flops_by_dtype or {})
    return peaks_for(chip.slug)


def chip_wants_measured_peaks(*, slug: str) -> bool:
    """Whether a measurement of the chip would be used: it has no datasheet entry (the harder bound, kept
    when there is one) and no peaks of its own."""
    from evaluation.judge.backends import peaks_for

    if peaks_for(slug)[0]:
        return False
    return not Chip.objects.filter(slug=slug, peak_bandwidth_bytes_per_s__isnull=False).exists()


def chip_record_measured_peaks(*, slug: str, measured: dict[str, Any]) -> bool:
    """A worker measured its device (``backends.measure_peaks``): fill the chip's peaks with them, plus
    headroom, when ``chip_wants_measured_peaks``. True when the chip changed."""
    if not chip_wants_measured_peaks(slug=slug):
        return False
    bandwidth = float(measured["bandwidth_bytes_per_s"]) * MEASURED_PEAK_HEADROOM
    flops = {name: float(value) * MEASURED_PEAK_HEADROOM for name, value in measured["flops_by_dtype"].items()}
    return bool(
        Chip.objects.filter(slug=slug, peak_bandwidth_bytes_per_s__isnull=True).update(
            peak_bandwidth_bytes_per_s=bandwidth, peak_flops_by_dtype=flops
        )
    )


def run_build_job(*, run: Run) -> JudgeJob:
    chip = run.chip
    bandwidth, flops = chip_peaks(chip=chip)
    return JudgeJob(
        operator_id=run.kernel.operator.operator_id,
        source_code=run.kernel.source_code,
        chip_slug=chip.slug,
        device_type=chip.device_type,
        tiers=chip.tiers,
        measure_timing=chip.timings_meaningful and chip.device_type != DeviceType.CPU,
        time_budget_s=settings.KGB_JUDGE_BUDGET_S,
        device_wait_limit_s=settings.KGB_DEVICE_WAIT_LIMIT_S,
        # Set by `manage.py worker --concurrency N` in the worker's environment (read here, at judging time).
        judges_sharing_device=max(1, int(os.environ.get("KGB_JUDGES_PER_DEVICE", "1") or 1)),
        run_id=str(run.pk),
        peak_bandwidth_bytes_per_s=bandwidth,
        peak_flops_by_dtype=flops,
    )


# --- Workers and chips --------------------------------------------------------------------------------

KNOWN_CHIPS: dict[str, dict[str, Any]] = {
    "cpu-interpreter": {
        "display_name": "CPU (Triton interpreter)",
        "vendor": "any",
        "device_type": DeviceType.CPU,
        "timings_meaningful": False,
    },
    "nvidia-h200": {
        "display_name": "NVIDIA H200",
        "vendor": "NVIDIA",
        "device_type": DeviceType.CUDA,
        "is_reference_platform": True,
    },
    "nvidia-h100": {"display_name": "NVIDIA H100", "vendor": "NVIDIA", "device_type": DeviceType.CUDA},
    "nvidia-a100": {"display_name": "NVIDIA A100", "vendor": "NVIDIA", "device_type": DeviceType.CUDA},
}


def chip_ensure(*, slug: str, device_type: str | None = None, display_name: str | None = None) -> Chip:
    """The chip ``slug``, created with known defaults (or the given device type) on first sight."""
    defaults = dict(KNOWN_CHIPS.get(slug, {}))
    if device_type:
        defaults.setdefault("device_type", device_type)
    defaults.setdefault("device_type", DeviceType.CUDA)
    defaults.setdefault("display_name", display_name or slug)
    chip, _ = Chip.objects.get_or_create(slug=slug, defaults=defaults)
    return chip


def worker_heartbeat(
    *, hostname: str, chip_slug: str, software: dict[str, Any] | None = None, device_type: str | None = None
) -> Worker:
    """Record that ``hostname`` is alive and serving ``chip_slug``; registers the chip on first sight.

    The beat is stamped with the database's time, not this host's: other hosts judge it stale against theirs
    (evaluation.clock), so a worker whose clock runs far behind still looks alive."""
    chip = chip_ensure(slug=chip_slug, device_type=device_type)
    now = Now()
    worker, created = Worker.objects.get_or_create(
        hostname=hostname,
        defaults={"chip": chip, "software": software or {}, "started_at": now, "last_heartbeat_at": now},
    )
    if not created:
        Worker.objects.filter(pk=worker.pk).update(
            chip=chip, last_heartbeat_at=now, **({"software": software} if software else {})
        )
    Chip.objects.filter(pk=chip.pk).update(
        last_heartbeat_at=now, last_worker_host=hostname, **({"software": software} if software else {})
    )
    worker.refresh_from_db()
    return worker


def worker_count_judgement(*, hostname: str, run_id: int, error_reason: str | None) -> bool:
    """Count one judgement (of run ``run_id``) by ``hostname`` for its health: an error of our side
    (``error_reason``; transient ones, JudgeResult.retryable, are not counted) adds one to its errors in a
    row unless the same run made the last one, any verdict clears them. Returns True when this error is the
    one that makes KGB_WORKER_ERROR_STREAK in a row: the worker must stop taking runs now (marked so here,
    once)."""
    if error_reason is None:
        Worker.objects.filter(hostname=hostname, consecutive_errors__gt=0).update(
            consecutive_errors=0, last_error_run_id=None
        )
        return False
    with transaction.atomic():
        worker = Worker.objects.select_for_update().filter(hostname=hostname).first()
        if worker is None:  # judged before its first heartbeat registered it: nothing to count against
            return False
        if worker.last_error_run_id == run_id:  # the same run again: evidence about it, not about the worker
            return False
        worker.consecutive_errors += 1
        worker.last_error_run_id = run_id
        stop = worker.consecutive_errors >= settings.KGB_WORKER_ERROR_STREAK and worker.stopped_taking_runs_at is None
        fields = ["consecutive_errors", "last_error_run_id"]
        if stop:
            worker.stopped_taking_runs_at = Now()
            worker.stopped_reason = (
                f"{worker.consecutive_errors} judge errors in a row; the last: {error_reason[:1500]}"
            )
            fields += ["stopped_taking_runs_at", "stopped_reason"]
        worker.save(update_fields=fields)
    if stop:
        logger.error("worker %s stops taking runs: %s", hostname, worker.stopped_reason)
    return stop


# The stop a worker puts on itself when its own heartbeat is stale; its heartbeat lifts it (and only that stop).
STALLED_HEARTBEAT_REASON = "its heartbeat stalled"


def worker_refuses_runs(*, hostname: str, now: Any = None) -> bool:
    """Before a claim, one read of this worker's row: True when it has stopped taking runs, or when its own
    last beat is older than KGB_WORKER_STALE_AFTER_S (then it is marked stopped for that, once): past that
    line every other worker's runs_requeue_stale takes its runs back, so a run it claimed now would be judged
    twice. False for a worker not registered yet (its first beat is under way)."""
    worker = Worker.objects.filter(hostname=hostname).only("last_heartbeat_at", "stopped_taking_runs_at").first()
    if worker is None:
        return False
    if worker.stopped_taking_runs_at is not None:
        return True
    if worker.last_heartbeat_at >= _stale_before(now):
        return False
    Worker.objects.filter(hostname=hostname, stopped_taking_runs_at__isnull=True).update(
        stopped_taking_runs_at=Now(), stopped_reason=STALLED_HEARTBEAT_REASON
    )
    logger.error("worker %s stops taking runs: its last heartbeat was at %s", hostname, worker.last_heartbeat_at)
    return True


def _stale_before(now: Any = None) -> Any:
    """Beats before this are stale: their worker counts as dead and its runs are taken back."""
    return (now or database_now()) - timedelta(seconds=settings.KGB_WORKER_STALE_AFTER_S)


def _stopped_for_stalled_heartbeat(hostname: str) -> Any:
    return Worker.objects.filter(
        hostname=hostname, stopped_taking_runs_at__isnull=False, stopped_reason=STALLED_HEARTBEAT_REASON
    )


def worker_stopped_for_stalled_heartbeat(*, hostname: str) -> str | None:
    """The queue of a worker stopped for a stale heartbeat (its chip's), else None."""
    worker = _stopped_for_stalled_heartbeat(hostname).select_related("chip").first()
    return worker.chip.queue_name if worker is not None else None


def worker_resume_after_stalled_heartbeat(*, hostname: str) -> bool:
    """After a beat landed: lift a stop this worker put on itself for a stale heartbeat (not one for judge
    errors). True when there was one: the caller asks the worker's consumer back."""
    return bool(_stopped_for_stalled_heartbeat(hostname).update(stopped_taking_runs_at=None, stopped_reason=""))


def worker_take_runs_again(*, hostname: str, stopped_before: Any = None) -> bool:
    """Clear a worker's stop and its count of errors (a restart, with ``stopped_before`` its birth so that a
    stop of the new process stands; or staff, from the admin). True when it had stopped."""
    stopped = Worker.objects.filter(hostname=hostname, stopped_taking_runs_at__isnull=False)
    if stopped_before is not None:
        stopped = stopped.filter(stopped_taking_runs_at__lt=stopped_before)
    cleared = stopped.update(
        stopped_taking_runs_at=None, stopped_reason="", consecutive_errors=0, last_error_run_id=None
    )
    if stopped_before is not None:
        Worker.objects.filter(hostname=hostname, stopped_taking_runs_at__isnull=True).update(
            consecutive_errors=0, last_error_run_id=None
        )
    return bool(cleared)


def run_pass_ticket_on(*, run_id: int) -> str | None:
    """Send the ticket a worker took for ``run_id``'s chip back to that chip's queue without judging anything
    (a worker that stopped taking runs got it before its consumer was cancelled): another worker claims the
    run the ticket stands for. A ticket is for one judgement on the chip, not for one run (run_claim_fairest).
    Returns the chip's queue, or None where the run is gone (the ticket is dropped, as a claim drops it)."""
    run = Run.objects.select_related("chip").filter(pk=run_id).first()
    if run is None:
        return None
    run_enqueue(run=run)
    return run.chip.queue_name


def run_retry_later(*, run: Run, lease: str, reason: str) -> str:
    """A judge ``error`` (our side failed, or a transient JudgeResult.retryable one: the GPU's memory full of
    other judgements', its lock held past the wait limit) goes back to its chip's queue instead of being
    recorded, while the run has claims left: another claim, often another worker's, judges it again. Returns
    "requeued", "exhausted" (record the error) or "stale" (the claim was superseded: record nothing)."""
    if run.attempts >= settings.KGB_MAX_RUN_ATTEMPTS:
        return "exhausted"
    try:
        _requeue(run=run, lease=lease, reason=f"re-queued after a judge error: {reason[:300]}")
    except IllegalRunTransition:
        return "stale"
    return "requeued"


def _requeue(*, run: Run, lease: str, reason: str) -> None:
    """Back to the chip's queue, only while ``lease`` still holds the run (IllegalRunTransition otherwise);
    the message is sent once the transaction commits."""
    with transaction.atomic():
        run_transition(run=run, to_status=RunStatus.QUEUED, expected_lease=lease, lease="", reason=reason)
        run_enqueue(run=run)


def _requeue_or_give_up(*, run: Run, requeued: str, gave_up: str) -> str | None:
    """A running run whose claim is dead: back to its queue, or past KGB_MAX_RUN_ATTEMPTS an error. Returns
    "requeued", "gave_up", or None when the run changed meanwhile (another claim or a verdict won)."""
    try:
        if run.attempts >= settings.KGB_MAX_RUN_ATTEMPTS:
            run_transition(
                run=run,
                to_status=RunStatus.ERROR,
                expected_lease=run.lease,
                reason=f"gave up after {run.attempts} attempts: {gave_up}",
            )
            return "gave_up"
        _requeue(run=run, lease=run.lease, reason=f"re-queued: {requeued}")
        return "requeued"
    except IllegalRunTransition:
        return None


def runs_reclaim_from_earlier_incarnation(*, hostname: str, started_before: Any) -> dict[str, int]:
    """A worker starting under ``hostname`` takes back the runs an earlier process of that name claimed.

    Celery node names are unique while their worker lives, so a run still marked running by ``hostname``
    and claimed before this process started belongs to a predecessor that died (a supervisor restarting a
    killed worker reuses its name). Waiting for the heartbeat to go stale would never catch it: the new
    process keeps the name alive. Runs out in offline bundles are not a worker's and stay as they are.
    """
    counts = {"requeued": 0, "gave_up": 0}
    orphaned = Run.objects.filter(status=RunStatus.RUNNING, worker=hostname, started_at__lt=started_before)
    for run in orphaned.exclude(lease__startswith=BUNDLE_LEASE_PREFIX).select_related("chip"):
        outcome = _requeue_or_give_up(
            run=run, requeued=f"worker {hostname} restarted mid-run", gave_up="the worker died each time"
        )
        if outcome:
            counts[outcome] += 1
    return counts


def runs_requeue_stale(*, now: Any = None) -> dict[str, int]:
    """Re-queue runs whose worker stopped heartbeating; after KGB_MAX_RUN_ATTEMPTS claims, mark them error.

    Also re-sends runs that sat queued far longer than a worker needs to pick them up (a message lost
    with a broker or a worker): redelivering is safe because claiming is atomic.
    """
    now = now or database_now()  # heartbeats and claims carry the database's time (evaluation.clock)
    stale_before = _stale_before(now)
    live_workers = set(Worker.objects.filter(last_heartbeat_at__gte=stale_before).values_list("hostname", flat=True))
    counts = {"requeued": 0, "gave_up": 0, "resent": 0}
    bundle_expired_before = now - timedelta(seconds=settings.KGB_BUNDLE_LEASE_S)
    for run in Run.objects.filter(status=RunStatus.RUNNING).select_related("chip"):
        if run.lease.startswith(BUNDLE_LEASE_PREFIX):
            # Out in an offline job bundle (evaluation.bundles): no worker heartbeats for it; it comes back
            # only when the bundle's lease has expired without its results being imported.
            if run.started_at and run.started_at > bundle_expired_before:
                continue
        else:
            overdue = run.started_at and run.started_at < now - timedelta(
                seconds=2 * settings.KGB_JUDGE_BUDGET_S + settings.KGB_DEVICE_WAIT_LIMIT_S + 120
            )
            if run.worker in live_workers and not overdue:
                continue
        outcome = _requeue_or_give_up(
            run=run, requeued=f"worker {run.worker} stopped heartbeating", gave_up="the worker stopped each time"
        )
        if outcome:
            counts[outcome] += 1
    # Lost tickets show as a chip with live workers, nothing running and queued runs on which nothing has
    # been claimed for a while (a broker restart, a worker killed with tickets prefetched: Redis gives those
    # back only after its visibility timeout, an hour): only then re-send. A flood waiting its fair turn is
    # not lost (its chip is busy), and a re-send that turns out to be a duplicate finds nothing to claim.
    forgotten_before = now - timedelta(seconds=max(60.0, 4 * settings.KGB_WORKER_STALE_AFTER_S))
    chips_served = set(Worker.objects.filter(last_heartbeat_at__gte=stale_before).values_list("chip_id", flat=True))
    for chip_id in chips_served:
        if Run.objects.filter(chip_id=chip_id, status=RunStatus.RUNNING).exists():
            continue
        if OwnerTurn.objects.filter(chip_id=chip_id, last_claimed_at__gte=forgotten_before).exists():
            continue
        for run in Run.objects.filter(
            chip_id=chip_id, status=RunStatus.QUEUED, queued_at__lt=forgotten_before
        ).select_related("chip"):
            with transaction.atomic():
                Run.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(queued_at=now)
                run_enqueue(run=run)
            counts["resent"] += 1
    return counts

"""Reads that build pages and API answers: leaderboards, submissions with their runs, access checks."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet

from evaluation.models import FINISHED_STATUSES, Chip, Run, RunStatus, Worker
from leaderboard.metrics import OperatorOutcome, Summary, summarize
from leaderboard.models import Method, Operator, OperatorSet, Submission, Visibility

SOURCE_VIEWS: tuple[str, ...] = ("overall", "aten", "vllm", "cublas")


@dataclass
class LeaderboardRow:
    method: Method
    summaries: dict[str, Summary] = field(default_factory=dict)  # view ("overall", "aten", ...) -> figures
    outcomes: dict[str, OperatorOutcome] = field(default_factory=dict)  # operator_id -> outcome


def counted_runs(*, chip: Chip, operator_ids: set[str] | None = None) -> QuerySet[Run]:
    """Finished runs that count for rankings on ``chip``: public submissions of public methods, written for
    this chip (or for no chip in particular), judged on it."""
    runs = Run.objects.filter(
        chip=chip,
        status__in=FINISHED_STATUSES,
        kernel__submission__visibility=Visibility.PUBLIC,
        kernel__submission__method__public=True,
    ).filter(Q(kernel__submission__target_chip__isnull=True) | Q(kernel__submission__target_chip=chip))
    if operator_ids is not None:
        runs = runs.filter(kernel__operator__operator_id__in=operator_ids)
    return runs


def method_outcomes(*, chip: Chip, operator_set: OperatorSet) -> dict[int, dict[str, OperatorOutcome]]:
    """Per method id, per operator id: solved (any kernel passed cleanly), best speedup, tokens of all tries."""
    operators = {op.operator_id: op for op in operator_set.operators.all()}
    rows = (
        counted_runs(chip=chip, operator_ids=set(operators))
        .order_by("kernel_id", "created_at")
        .values_list(
            "kernel_id", "status", "speedup", "flagged", "operator_version",
            "kernel__operator__operator_id", "kernel__operator__source", "kernel__operator__version",
            "kernel__submission__method_id", "kernel__total_tokens", "kernel__solve_seconds",
        )
    )
    latest_by_kernel: dict[int, tuple] = {}
    for row in rows:  # ordered by creation: the last one per kernel is its latest verdict
        latest_by_kernel[row[0]] = row
    outcomes: dict[int, dict[str, OperatorOutcome]] = defaultdict(dict)
    for (_, status, speedup, flagged, run_version, operator_id, source, current_version, method_id, tokens,
         seconds) in latest_by_kernel.values():
        outcome = outcomes[method_id].setdefault(operator_id, OperatorOutcome(operator_id, source))
        outcome.attempts += 1
        outcome.tokens += tokens or 0
        outcome.solve_seconds += seconds or 0.0
        if status != RunStatus.PASSED:
            continue
        better = not outcome.solved or (speedup is not None and (outcome.speedup or 0) < speedup)
        if better:
            outcome.solved = True
            outcome.speedup = speedup
            outcome.flagged = flagged
            outcome.stale = run_version < current_version
    return outcomes


def leaderboard_rows(*, chip: Chip, operator_set: OperatorSet) -> list[LeaderboardRow]:
    """One row per method with figures per source view, sorted by overall accuracy then speedup."""
    operators = list(operator_set.operators.values_list("operator_id", "source"))
    totals = {view: sum(1 for _, source in operators if view in ("overall", source)) for view in SOURCE_VIEWS}
    outcomes_by_method = method_outcomes(chip=chip, operator_set=operator_set)
    methods = Method.objects.in_bulk(list(outcomes_by_method))
    rows = []
    for method_id, outcomes in outcomes_by_method.items():
        row = LeaderboardRow(method=methods[method_id], outcomes=outcomes)
        for view in SOURCE_VIEWS:
            if totals[view] == 0:
                continue
            in_view = [o for o in outcomes.values() if view in ("overall", o.source)]
            row.summaries[view] = summarize(in_view, totals[view])
        rows.append(row)
    rows.sort(key=lambda r: (-r.summaries["overall"].accuracy_pct, -(r.summaries["overall"].speedup_geomean or 0),
                             str(r.method)))
    return rows


# --- Access -------------------------------------------------------------------------------------------


def can_view_code(*, user: AbstractBaseUser | AnonymousUser, submission: Submission) -> bool:
    """Public code is for everyone; private code for its owner and staff only."""
    if submission.visibility == Visibility.PUBLIC:
        return True
    return bool(user.is_authenticated and (user.is_staff or submission.owner_id == user.pk))


def visible_submissions(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Submission]:
    """Submissions a user may see listed: public ones, plus their own (all, for staff).

    A private submission's results are its owner's business: it is neither listed nor ranked for others.
    """
    submissions = Submission.objects.select_related("method", "owner", "target_chip")
    if user.is_authenticated and user.is_staff:
        return submissions
    if user.is_authenticated:
        return submissions.filter(Q(visibility=Visibility.PUBLIC) | Q(owner=user))
    return submissions.filter(visibility=Visibility.PUBLIC)


def submission_progress(*, submission: Submission) -> dict:
    """Counts and per-run statuses of a submission, for its page and its live-updating JSON."""
    runs = list(
        Run.objects.filter(kernel__submission=submission)
        .select_related("chip", "kernel__operator")
        .order_by("kernel__operator__operator_id", "chip__slug", "created_at")
    )
    finished = sum(1 for run in runs if run.is_finished)
    chips = {run.chip for run in runs}
    return {
        "runs": runs,
        "total": len(runs),
        "finished": finished,
        "passed": sum(1 for run in runs if run.status == RunStatus.PASSED),
        "chips_without_worker": sorted(chip.slug for chip in chips if not chip_has_live_worker(chip=chip)),
    }


def chip_has_live_worker(*, chip: Chip) -> bool:
    from datetime import timedelta

    from django.conf import settings
    from django.utils import timezone

    since = timezone.now() - timedelta(seconds=settings.KGB_WORKER_STALE_AFTER_S)
    return Worker.objects.filter(chip=chip, last_heartbeat_at__gte=since).exists()


def active_operators() -> QuerySet[Operator]:
    return Operator.objects.filter(active=True).order_by("source", "operator_id")

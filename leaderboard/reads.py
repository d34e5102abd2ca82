"""Reads behind the pages people cite and come back to: listed methods, per-operator rankings, a method's
runs per (operator, chip), an uploader's own submissions. Built on ``selectors``; ranking rules in ``ranking``.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from evaluation.models import FINISHED_STATUSES, Chip, Run, RunStatus
from leaderboard import selectors
from leaderboard.models import Method, Operator, OperatorSet, Submission, Visibility
from leaderboard.ranking import Rank, overlap_ranks


def listed_methods(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Method]:
    """Methods a user may see: public methods with at least one public submission, plus their own (staff: all).

    A method whose only work is private is its owner's business, like the work itself.
    """
    if user.is_authenticated and user.is_staff:
        return Method.objects.all()
    public_work = Submission.objects.filter(method=OuterRef("pk"), visibility=Visibility.PUBLIC)
    listed = Q(public=True) & Q(Exists(public_work))
    if user.is_authenticated:
        listed |= Q(owner=user)
    return Method.objects.filter(listed)


@dataclass
class OperatorStanding:
    """One method's best public verdict on an operator and chip, with its rank among the methods."""

    method: Method
    run: Run  # the deciding run: the best passing one, else the latest failure
    passed: bool
    attempts: int
    rank: Rank | None = None  # None for methods that did not pass


def operator_ranking(*, operator: Operator, chip: Chip) -> list[OperatorStanding]:
    """Every method with a public verdict on ``operator`` on ``chip`` (kernels written for that chip or for
    none), passers first ranked by speedup (overlapping 95% intervals share a rank), then the rest."""
    runs = (
        selectors.counted_runs(chip=chip, operator_ids={operator.operator_id})
        .select_related("kernel__submission__method")
        .order_by("pk")
    )
    by_method: dict[int, OperatorStanding] = {}
    for run in runs[:5000]:
        method = run.kernel.submission.method
        passed = run.status == RunStatus.PASSED and not run.flagged
        standing = by_method.get(method.pk)
        if standing is None:
            by_method[method.pk] = OperatorStanding(method, run, passed, 1)
            continue
        standing.attempts += 1
        if passed and (not standing.passed or (run.speedup or 0) > (standing.run.speedup or 0)):
            standing.run, standing.passed = run, True
        elif not standing.passed and not passed:
            standing.run = run  # the latest failure says most about where the method stands
    passers = sorted((s for s in by_method.values() if s.passed), key=lambda s: (-(s.run.speedup or 0), str(s.method)))
    intervals = [_speedup_interval(s.run) for s in passers]
    for standing, rank in zip(passers, overlap_ranks(intervals), strict=True):
        standing.rank = rank
    others = sorted((s for s in by_method.values() if not s.passed), key=lambda s: str(s.method))
    return passers + others


def _speedup_interval(run: Run) -> tuple[float, float]:
    """A run's 95% speedup interval; its point value when the judge gave none; (0, 0) when unknown, so every
    passer without a meaningful timing shares one rank."""
    if run.speedup is None:
        return 0.0, 0.0
    if run.speedup_ci_low is not None and run.speedup_ci_high is not None:
        return run.speedup_ci_low, run.speedup_ci_high
    return run.speedup, run.speedup


def matrix_run_links(*, method: Method, operator_set: OperatorSet, chips: list[Chip]) -> dict[tuple[str, int], int]:
    """(operator id, chip id) -> the run a pass-matrix cell stands for: the best public passing run of the
    method there, else its latest public finished run."""
    runs = (
        Run.objects.filter(
            kernel__submission__method=method,
            chip__in=chips,
            status__in=FINISHED_STATUSES,
            kernel__submission__visibility=Visibility.PUBLIC,
            kernel__operator__sets=operator_set,
        )
        .values_list("pk", "kernel__operator__operator_id", "chip_id", "status", "speedup")
        .order_by("pk")
    )
    best: dict[tuple[str, int], tuple[bool, float, int]] = {}
    for pk, operator_id, chip_id, status, speedup in runs:
        candidate = (status == RunStatus.PASSED, speedup or 0.0, pk)
        key = (operator_id, chip_id)
        if key not in best or candidate[:2] >= best[key][:2]:
            best[key] = candidate
    return {key: value[2] for key, value in best.items()}


def own_submissions(*, user: AbstractBaseUser) -> QuerySet[Submission]:
    """The user's submissions, public and private, newest first, with their run counts."""
    finished = Q(kernels__runs__status__in=FINISHED_STATUSES)
    return (
        Submission.objects.filter(owner=user)
        .select_related("method", "target_chip")
        .annotate(
            kernel_count=Count("kernels", distinct=True),
            run_count=Count("kernels__runs"),
            finished_count=Count("kernels__runs", filter=finished),
            passed_count=Count("kernels__runs", filter=Q(kernels__runs__status=RunStatus.PASSED)),
        )
        .order_by("-created_at", "-pk")
    )

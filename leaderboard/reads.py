"""Reads behind the pages people cite and come back to: listed methods, per-operator rankings, a method's
runs per (operator, chip), an uploader's own submissions. Rankings and links come from the best-verdict
summary (``leaderboard.best_verdicts``); ranking rules are in ``ranking``.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Exists, OuterRef, Q, QuerySet

from evaluation.models import FINISHED_STATUSES, Chip, Run, RunStatus
from leaderboard.models import BestVerdict, Method, Operator, OperatorSet, Submission, Visibility
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
    none), passers first ranked by speedup (overlapping 95% intervals share a rank), then the rest.

    A method's standing is its best clean pass over every run there, else its latest failure (kept in the
    best-verdict summary as ``standing_run``); its attempts are all those runs."""
    standings = list(
        BestVerdict.objects.filter(operator=operator, chip=chip, native=True).values_list(
            "method_id", "standing_run_id", "standing_passed", "runs"
        )
    )
    methods = Method.objects.in_bulk([method_id for method_id, _, _, _ in standings])
    runs = Run.objects.only(*STANDING_RUN_FIELDS).in_bulk([run_id for _, run_id, _, _ in standings])
    by_method = [
        OperatorStanding(methods[method_id], runs[run_id], passed, attempts)
        for method_id, run_id, passed, attempts in standings
        if method_id in methods and run_id in runs
    ]
    passers = sorted((s for s in by_method if s.passed), key=lambda s: (-(s.run.speedup or 0), str(s.method)))
    intervals = [_speedup_interval(s.run) for s in passers]
    for standing, rank in zip(passers, overlap_ranks(intervals), strict=True):
        standing.rank = rank
    others = sorted((s for s in by_method if not s.passed), key=lambda s: str(s.method))
    return passers + others


# What the operator page shows of a standing's run.
STANDING_RUN_FIELDS = (
    "id",
    "status",
    "flagged",
    "speedup",
    "speedup_ci_low",
    "speedup_ci_high",
    "protocol_speedup",
    "protocol_speedup_ci_low",
    "protocol_speedup_ci_high",
    "protocol_launch_bound_share",
    "operator_version",
)


def _speedup_interval(run: Run) -> tuple[float, float]:
    """A run's 95% speedup interval; its point value when the judge gave none; (0, 0) when unknown, so every
    passer without a meaningful timing shares one rank."""
    if run.speedup is None:
        return 0.0, 0.0
    if run.speedup_ci_low is not None and run.speedup_ci_high is not None:
        return run.speedup_ci_low, run.speedup_ci_high
    return run.speedup, run.speedup


def matrix_run_links(*, method: Method, operator_set: OperatorSet, chips: list[Chip]) -> dict[tuple[str, int], int]:
    """(operator id, chip id) -> the run a pass-matrix cell stands for: the fastest public passing run of the
    method there, else its latest public finished run (kernels written for the chip or ported alike)."""
    links = BestVerdict.objects.filter(method=method, chip__in=chips, operator__sets=operator_set).values_list(
        "operator__operator_id", "chip_id", "link_passed", "link_speedup", "link_run_id"
    )
    best: dict[tuple[str, int], tuple[bool, float, int]] = {}
    for operator_id, chip_id, passed, speedup, run_id in links:
        candidate = (passed, speedup or 0.0, run_id)
        key = (operator_id, chip_id)
        if key not in best or candidate > best[key]:
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

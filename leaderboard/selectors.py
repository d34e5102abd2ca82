"""Reads that build pages and API answers: leaderboards, submissions with their runs, access checks."""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, F, Max, Q, QuerySet

from evaluation.models import FINISHED_STATUSES, Chip, Run, RunStatus, Worker, run_is_stale
from evaluation.queue_estimates import queue_estimates
from leaderboard.metrics import MatchedSpeedup, OperatorOutcome, Summary, matched_speedups, ratio, summarize
from leaderboard.models import Method, Operator, OperatorSet, PaperCost, PaperResult, Submission, Visibility

SOURCE_VIEWS: tuple[str, ...] = ("overall", "aten", "vllm", "cublas")


@dataclass
class LeaderboardRow:
    method: Method
    summaries: dict[str, Summary] = field(default_factory=dict)  # view ("overall", "aten", ...) -> figures
    outcomes: dict[str, OperatorOutcome] = field(default_factory=dict)  # operator_id -> outcome


@dataclass(frozen=True)
class SetOperator:
    """What a board needs of an operator: its id, source and current definition version."""

    pk: int
    operator_id: str
    source: str
    version: int


@dataclass(frozen=True)
class MethodFilter:
    """Which methods a board shows: by kind (empty = all) and by model name (substring, case-insensitive)."""

    kinds: tuple[str, ...] = ()
    model: str = ""

    def admits(self, method: Method) -> bool:
        if self.kinds and method.kind not in self.kinds:
            return False
        return not self.model or self.model.lower() in method.model.lower()


NO_FILTER = MethodFilter()


def set_operators(*, operator_set: OperatorSet) -> dict[int, SetOperator]:
    return {
        pk: SetOperator(pk, operator_id, source, version)
        for pk, operator_id, source, version in operator_set.operators.values_list(
            "pk", "operator_id", "source", "version"
        )
    }


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


# One finished public verdict, as a plain tuple: the boards read tens of thousands of these per page, so they
# skip model instances entirely. Layout: (run id, kernel id, chip id, status, speedup, flagged, run's operator
# version, run's judge version, operator pk, method id, target chip id, tokens, solve seconds).
VERDICT_FIELDS = (
    "kernel_id",
    "chip_id",
    "status",
    "speedup",
    "flagged",
    "operator_version",
    "judge_version",
    "kernel__operator_id",
    "kernel__submission_id",
    "kernel__total_tokens",
    "kernel__solve_seconds",
)
# Below this many operators the set is filtered in SQL; above, in Python (cheaper than a long IN list).
SQL_OPERATOR_FILTER_MAX = 120
BOARD_CACHE_SECONDS = 60


def public_submission_facts(*, method_ids: list[int] | None = None) -> dict[int, tuple[int, int | None]]:
    """Submission id -> (method id, target chip id) for public submissions of public methods."""
    submissions = Submission.objects.filter(visibility=Visibility.PUBLIC, method__public=True)
    if method_ids is not None:
        submissions = submissions.filter(method_id__in=method_ids)
    return {
        pk: (method_id, target)
        for pk, method_id, target in submissions.order_by().values_list("pk", "method_id", "target_chip_id")
    }


def latest_public_verdicts(
    *, chip_ids: list[int], operator_pks: list[int], method_ids: list[int] | None = None
) -> list[tuple]:
    """The latest finished verdict of each (public kernel, chip): a re-run supersedes the run before it.

    One join (run -> kernel); which submissions count is decided in Python from a small lookup, which keeps
    the query on the (chip, status) index and cheap on SQLite and PostgreSQL alike.
    """
    submissions = public_submission_facts(method_ids=method_ids)
    runs = Run.objects.filter(chip_id__in=chip_ids, status__in=FINISHED_STATUSES)
    wanted = set(operator_pks)
    if len(wanted) <= SQL_OPERATOR_FILTER_MAX:
        runs = runs.filter(kernel__operator_id__in=operator_pks)
    if method_ids is not None:
        runs = runs.filter(kernel__submission__method_id__in=method_ids)
    latest: dict[tuple[int, int], tuple] = {}
    for (
        run_id,
        kernel_id,
        chip_id,
        status,
        speedup,
        flagged,
        version,
        judge_version,
        operator_pk,
        submission_id,
        tokens,
        seconds,
    ) in runs.order_by().values_list("id", *VERDICT_FIELDS).iterator(chunk_size=5000):
        facts = submissions.get(submission_id)
        if facts is None or operator_pk not in wanted:
            continue
        kept = latest.get((kernel_id, chip_id))
        if kept is None or kept[0] < run_id:  # ids grow with creation: the larger is the newer verdict
            latest[(kernel_id, chip_id)] = (
                run_id,
                kernel_id,
                chip_id,
                status,
                speedup,
                flagged,
                version,
                judge_version,
                operator_pk,
                facts[0],
                facts[1],
                tokens,
                seconds,
            )
    return list(latest.values())


def board_data_stamp() -> str:
    """Changes whenever a verdict lands, a run is added or deleted, an operator version, a submission or a method
    changes; each part is an index-only count or max (visibility flips are caught by the short memo lifetime)."""
    finished = Run.objects.filter(status__in=FINISHED_STATUSES).count()
    runs = Run.objects.aggregate(last=Max("id"))
    operators = Operator.objects.aggregate(last=Max("updated_at"))
    submissions = Submission.objects.aggregate(count=Count("id"), last=Max("id"))
    methods = Method.objects.aggregate(count=Count("id"), last=Max("id"))
    return "|".join(
        str(value)
        for value in (
            finished,
            runs["last"],
            operators["last"],
            submissions["count"],
            submissions["last"],
            methods["count"],
            methods["last"],
        )
    )


# Memo of board outcomes in this process: Django's cache would pickle ~10,000 objects per hit, which costs more
# than computing them. Small and short-lived; every web worker keeps its own.
_OUTCOME_MEMO: OrderedDict[str, tuple[float, tuple]] = OrderedDict()
OUTCOME_MEMO_SIZE = 32


def clear_board_memo() -> None:
    _OUTCOME_MEMO.clear()


Outcomes = dict[tuple[int, int], dict[str, OperatorOutcome]]


class BoardOutcomes(tuple):
    """(native, ported) outcomes, plus memoised summaries of them (they live as long as the outcomes do)."""

    summaries_memo: dict

    def summaries(self, key: tuple[int, int], totals: dict[str, int], *, ported: bool = False) -> dict[str, Summary]:
        memo_key = (key, ported, tuple(sorted(totals.items())))
        found = self.summaries_memo.get(memo_key)
        if found is None:
            found = self.summaries_memo[memo_key] = _summaries(self[1 if ported else 0][key], totals)
        return found


def cached_outcomes(*, chip_ids: list[int], operators: dict[int, SetOperator]) -> BoardOutcomes:
    """(native, ported) ``verdict_outcomes`` of the latest public verdicts on ``chip_ids``, memoised until the
    data changes (or a minute passes): every board reads them, and they are the expensive part of a page."""
    digest = hashlib.sha1(
        ",".join(f"{op.pk}:{op.version}" for op in sorted(operators.values(), key=lambda op: op.pk)).encode()
    )
    key = (
        "kgb-board:"
        + hashlib.sha1(f"{sorted(chip_ids)}|{digest.hexdigest()}|{board_data_stamp()}".encode()).hexdigest()
    )
    now = time.monotonic()
    memo = _OUTCOME_MEMO.get(key)
    if memo is not None and memo[0] > now:
        _OUTCOME_MEMO.move_to_end(key)
        return memo[1]
    verdicts = latest_public_verdicts(chip_ids=chip_ids, operator_pks=list(operators))
    outcomes = BoardOutcomes(
        (
            dict(verdict_outcomes(verdicts=verdicts, operators=operators)),
            dict(verdict_outcomes(verdicts=verdicts, operators=operators, native_only=False, foreign_only=True)),
        )
    )
    outcomes.summaries_memo = {}
    _OUTCOME_MEMO[key] = (now + BOARD_CACHE_SECONDS, outcomes)
    while len(_OUTCOME_MEMO) > OUTCOME_MEMO_SIZE:
        _OUTCOME_MEMO.popitem(last=False)
    return outcomes


def verdict_outcomes(
    *, verdicts: list[tuple], operators: dict[int, SetOperator], native_only: bool = True, foreign_only: bool = False
) -> dict[tuple[int, int], dict[str, OperatorOutcome]]:
    """Per (method id, chip id), per operator id: solved (any kernel passed cleanly), best speedup, all tokens.

    ``native_only`` keeps kernels written for the chip they were judged on (or for no chip in particular),
    as PROTOCOL 7 ranks; ``foreign_only`` keeps the opposite (kernels written for another chip: portability).
    """
    outcomes: dict[tuple[int, int], dict[str, OperatorOutcome]] = defaultdict(dict)
    for (
        _,
        _,
        chip_id,
        status,
        speedup,
        flagged,
        run_version,
        judge_version,
        operator_pk,
        method_id,
        target_chip_id,
        tokens,
        seconds,
    ) in verdicts:
        native = target_chip_id is None or target_chip_id == chip_id
        if (native_only and not native) or (foreign_only and native):
            continue
        operator = operators[operator_pk]
        by_operator = outcomes[(method_id, chip_id)]
        outcome = by_operator.get(operator.operator_id)
        if outcome is None:
            outcome = by_operator[operator.operator_id] = OperatorOutcome(operator.operator_id, operator.source)
        outcome.attempts += 1
        outcome.tokens += tokens or 0
        outcome.solve_seconds += seconds or 0.0
        if status != RunStatus.PASSED:
            continue
        if not outcome.solved or (speedup is not None and (outcome.speedup or 0) < speedup):
            outcome.solved = True
            outcome.speedup = speedup
            outcome.flagged = flagged
            outcome.stale = run_is_stale(
                operator_version=run_version, current_operator_version=operator.version, judge_version=judge_version
            )
    return outcomes


def method_outcomes(*, chip: Chip, operator_set: OperatorSet) -> dict[int, dict[str, OperatorOutcome]]:
    """Per method id, per operator id: solved (any kernel passed cleanly), best speedup, tokens of all tries."""
    operators = set_operators(operator_set=operator_set)
    verdicts = latest_public_verdicts(chip_ids=[chip.pk], operator_pks=list(operators))
    return {
        method_id: outcomes
        for (method_id, _), outcomes in verdict_outcomes(verdicts=verdicts, operators=operators).items()
    }


def _view_totals(operators: dict[int, SetOperator]) -> dict[str, int]:
    return {view: sum(1 for op in operators.values() if view in ("overall", op.source)) for view in SOURCE_VIEWS}


def _summaries(outcomes: dict[str, OperatorOutcome], totals: dict[str, int]) -> dict[str, Summary]:
    summaries = {}
    for view in SOURCE_VIEWS:
        if totals[view]:
            in_view = [o for o in outcomes.values() if view in ("overall", o.source)]
            summaries[view] = summarize(in_view, totals[view])
    return summaries


def _admitted_methods(method_ids, method_filter: MethodFilter) -> dict[int, Method]:
    methods = Method.objects.in_bulk(list(method_ids))
    return {pk: method for pk, method in methods.items() if method_filter.admits(method)}


# Sort keys a board accepts: "<view>.<figure>" or a method attribute; "-" in front reverses.
ROW_FIGURES = ("accuracy", "speedup", "fast_0.8", "fast_1", "fast_1.5", "tokens", "tokens_per_success", "hours")


def summary_figure(summary: Summary | None, figure: str) -> float | None:
    if summary is None:
        return None
    if figure.startswith("fast_"):
        return summary.fast_p.get(figure[5:])
    return {
        "accuracy": summary.accuracy_pct,
        "speedup": summary.speedup_geomean,
        "tokens": summary.tokens_total,
        "tokens_per_success": summary.tokens_per_success,
        "hours": summary.solve_hours,
    }.get(figure)


def sort_rows(rows: list, sort: str, figure_of) -> None:
    """Sort in place by ``sort`` ("-overall.accuracy", "method", ...); unknown figures sort last."""
    descending = sort.startswith("-")
    key = sort.lstrip("-")
    if key in ("method", "kind", "model"):
        rows.sort(
            key=lambda row: str(getattr(row.method, key) if key != "method" else row.method).lower(), reverse=descending
        )
        return
    known = [row for row in rows if figure_of(row, key) is not None]
    unknown = [row for row in rows if figure_of(row, key) is None]
    known.sort(key=lambda row: figure_of(row, key), reverse=descending)
    rows[:] = known + unknown


def leaderboard_rows(
    *, chip: Chip, operator_set: OperatorSet, method_filter: MethodFilter = NO_FILTER, sort: str = ""
) -> list[LeaderboardRow]:
    """One row per method with figures per source view, sorted by overall accuracy then speedup."""
    operators = set_operators(operator_set=operator_set)
    totals = _view_totals(operators)
    board = cached_outcomes(chip_ids=[chip.pk], operators=operators)
    outcomes_by_key = board[0]
    methods = _admitted_methods({method_id for method_id, _ in outcomes_by_key}, method_filter)
    rows = [
        LeaderboardRow(method=methods[key[0]], outcomes=outcomes, summaries=board.summaries(key, totals))
        for key, outcomes in outcomes_by_key.items()
        if key[0] in methods
    ]
    rows.sort(
        key=lambda r: (
            -r.summaries["overall"].accuracy_pct,
            -(r.summaries["overall"].speedup_geomean or 0),
            str(r.method),
        )
    )
    if sort:
        sort_rows(
            rows, sort, lambda row, key: summary_figure(row.summaries.get(key.split(".")[0]), key.partition(".")[2])
        )
    return rows


@dataclass
class ChipRow:
    """A method's figures on several chips (multi-chip and portability boards)."""

    method: Method
    per_chip: dict[int, Summary] = field(default_factory=dict)  # chip id -> figures over the set
    ported: dict[int, Summary] = field(default_factory=dict)  # chip id -> figures of kernels written elsewhere
    accuracy_ratio: dict[int, float | None] = field(default_factory=dict)  # against the reference chip
    speedup_ratio: dict[int, float | None] = field(default_factory=dict)


def multi_chip_rows(
    *,
    chips: list[Chip],
    operator_set: OperatorSet,
    method_filter: MethodFilter = NO_FILTER,
    sort: str = "",
    reference_chip: Chip | None = None,
) -> list[ChipRow]:
    """Per method, its figures on every chip, each from the kernels it wrote for that chip (PROTOCOL 7); ratios
    against ``reference_chip`` and figures of kernels written for other chips feed portability."""
    operators = set_operators(operator_set=operator_set)
    total = len(operators)
    chip_ids = [chip.pk for chip in chips]
    board = cached_outcomes(chip_ids=chip_ids, operators=operators)
    native, foreign = board
    overall_only = {view: (total if view == "overall" else 0) for view in SOURCE_VIEWS}
    methods = _admitted_methods(
        {method_id for method_id, _ in native} | {method_id for method_id, _ in foreign}, method_filter
    )
    rows: dict[int, ChipRow] = {}
    for method_id, chip_id in native:
        if method_id in methods:
            row = rows.setdefault(method_id, ChipRow(method=methods[method_id]))
            row.per_chip[chip_id] = board.summaries((method_id, chip_id), overall_only)["overall"]
    for method_id, chip_id in foreign:
        if method_id in methods:
            row = rows.setdefault(method_id, ChipRow(method=methods[method_id]))
            row.ported[chip_id] = board.summaries((method_id, chip_id), overall_only, ported=True)["overall"]
    reference_id = reference_chip.pk if reference_chip else None
    for row in rows.values():
        reference = row.per_chip.get(reference_id)
        for chip_id, summary in row.per_chip.items():
            row.accuracy_ratio[chip_id] = ratio(summary.accuracy_pct, reference.accuracy_pct if reference else None)
            row.speedup_ratio[chip_id] = ratio(
                summary.speedup_geomean, reference.speedup_geomean if reference else None
            )
    result = sorted(
        rows.values(),
        key=lambda r: (-(r.per_chip[reference_id].accuracy_pct if reference_id in r.per_chip else -1), str(r.method)),
    )
    if sort:
        slug_to_id = {chip.slug: chip.pk for chip in chips}
        sort_rows(
            result,
            sort,
            lambda row, key: summary_figure(row.per_chip.get(slug_to_id.get(key.split(".")[0])), key.partition(".")[2]),
        )
    return result


@dataclass
class MatchedRow:
    method: Method
    figure: MatchedSpeedup
    summary: Summary


def matched_rows(
    *,
    chip: Chip,
    operator_set: OperatorSet,
    method_filter: MethodFilter = NO_FILTER,
    method_ids: list[int] | None = None,
) -> tuple[list[str], list[MatchedRow]]:
    """Speedups over the operators every shown method solved on ``chip`` (like with like), with 95% intervals.

    Methods that solved nothing with a known speedup are left out: they would empty the common set.
    """
    rows = leaderboard_rows(chip=chip, operator_set=operator_set, method_filter=method_filter)
    if method_ids:
        rows = [row for row in rows if row.method.pk in method_ids]
    rows = [
        row for row in rows if any(o.solved and o.speedup is not None and not o.flagged for o in row.outcomes.values())
    ]
    common, figures = matched_speedups({row.method.pk: row.outcomes for row in rows})
    result = [MatchedRow(row.method, figures[row.method.pk], row.summaries["overall"]) for row in rows]
    result.sort(key=lambda r: (-(r.figure.speedup_geomean or 0), str(r.method)))
    return common, result


def operator_pass_matrix(*, method: Method, operator_set: OperatorSet, chips: list[Chip]) -> list[dict]:
    """Per operator of the set: this method's verdict on each chip (passed, failed, or none) and its speedup,
    over all its public kernels judged there: the ones written for that chip first, else ported ones."""
    operators = set_operators(operator_set=operator_set)
    native, ported = cached_outcomes(chip_ids=[chip.pk for chip in chips], operators=operators)
    matrix = []
    for operator in sorted(operators.values(), key=lambda op: op.operator_id):
        cells = []
        for chip in chips:
            candidates = [
                outcomes.get((method.pk, chip.pk), {}).get(operator.operator_id) for outcomes in (native, ported)
            ]
            outcome = next((o for o in candidates if o is not None and o.solved), None) or next(
                (o for o in candidates if o is not None), None
            )
            cells.append(
                {
                    "chip": chip,
                    "outcome": outcome,
                    "ported": outcome is not None and outcome is candidates[1],
                    "state": "none" if outcome is None else ("passed" if outcome.solved else "failed"),
                }
            )
        matrix.append({"operator_id": operator.operator_id, "cells": cells})
    return matrix


# --- The paper's layer ------------------------------------------------------------------------------------


def paper_results(*, table: str, platform: str | None = None) -> dict[tuple[str, str], dict]:
    """The paper's reported figures of one table: (method, model) -> {(view, platform): (accuracy, speedup)}.

    Never merged into verified rows: pages show it as its own, labelled layer.
    """
    query = PaperResult.objects.filter(table=table)
    if platform:
        query = query.filter(platform=platform)
    layer: dict[tuple[str, str], dict] = defaultdict(dict)
    for method, model, view, plat, accuracy, speedup in query.values_list(
        "method", "model", "view", "platform", "accuracy_pct", "speedup_geomean"
    ):
        layer[(method, model)][(view, plat)] = (accuracy, speedup)
    return dict(layer)


def paper_costs() -> list[PaperCost]:
    return list(PaperCost.objects.order_by("tokens_per_passed_operator_millions"))


# --- Catalog pages --------------------------------------------------------------------------------------


def operator_solvers(*, operator: Operator) -> list[dict]:
    """Who solved this operator on which chip, best public kernel first per chip (native kernels only)."""
    rows = (
        Run.objects.filter(
            kernel__operator=operator,
            status=RunStatus.PASSED,
            kernel__submission__visibility=Visibility.PUBLIC,
            kernel__submission__method__public=True,
        )
        .filter(Q(kernel__submission__target_chip__isnull=True) | Q(kernel__submission__target_chip=F("chip")))
        .select_related("chip", "kernel__submission__method")
        .order_by("chip__slug", F("speedup").desc(nulls_last=True), "created_at")
    )
    best: dict[int, dict] = {}
    for run in rows[:2000]:
        entry = best.setdefault(run.chip_id, {"chip": run.chip, "runs": [], "methods": set()})
        if run.kernel.submission.method_id in entry["methods"]:
            continue  # one line per method: its best kernel
        entry["methods"].add(run.kernel.submission.method_id)
        entry["runs"].append(run)
    return list(best.values())


def method_submissions(*, method: Method, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Submission]:
    return visible_submissions(user=user).filter(method=method)


def visible_methods(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Method]:
    """Public methods, plus the user's own (all, for staff)."""
    if user.is_authenticated and user.is_staff:
        return Method.objects.all()
    if user.is_authenticated:
        return Method.objects.filter(Q(public=True) | Q(owner=user))
    return Method.objects.filter(public=True)


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
    from datetime import timedelta

    from django.conf import settings
    from django.utils import timezone

    # Said as soon as three beats are missed, well before the re-queuer gives up on the worker (a minute).
    silent_after = min(settings.KGB_WORKER_STALE_AFTER_S, 3 * settings.KGB_HEARTBEAT_INTERVAL_S)
    since = timezone.now() - timedelta(seconds=silent_after)
    return Worker.objects.filter(chip=chip, last_heartbeat_at__gte=since).exists()


def active_operators() -> QuerySet[Operator]:
    return Operator.objects.filter(active=True).order_by("source", "operator_id")

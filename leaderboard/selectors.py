"""Reads that build the boards, plots, board downloads and the API's leaderboard (access rules are in
``leaderboard.access``, a submission's progress in ``leaderboard.progress``).

Boards read the summary kept by ``leaderboard.best_verdicts``, never the runs: a page's work depends on the
methods, operators and chips it shows, not on the history behind them. Its figures come from the set totals
(``BoardTotal``, by ``board_totals``); per-operator outcomes (``BestVerdict`` rows) are read only where a page
shows them.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict, defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

from django.db.models import Sum

from evaluation.judge.version import JUDGE_VERSION
from evaluation.models import Chip, run_is_stale
from leaderboard.metrics import (
    MatchedSpeedup,
    OperatorOutcome,
    OutcomeTotals,
    Summary,
    matched_set_speedups,
    ratio,
    summarize_totals,
)
from leaderboard.models import (
    BestVerdict,
    BoardGeneration,
    BoardTotal,
    Method,
    OperatorSet,
    PaperCost,
    PaperResult,
)

SOURCE_VIEWS: tuple[str, ...] = ("overall", "aten", "vllm", "cublas")

# The two speedups (PROTOCOL 6), never mixed: which one a speedup figure reads -> its ``BestVerdict`` column.
# "device": large cases, launch cost hidden (the judge's own); "protocol": the paper's, every timed case.
DEVICE_FIGURE, PROTOCOL_FIGURE = "device", "protocol"
SPEEDUP_FIGURES: dict[str, str] = {DEVICE_FIGURE: "speedup", PROTOCOL_FIGURE: "protocol_speedup"}


def speedup_figure(requested: str | None) -> str:
    """The figure a page was asked for (``?figure=``), the device-time one for anything else."""
    return requested if requested in SPEEDUP_FIGURES else DEVICE_FIGURE


@dataclass
class LeaderboardRow:
    method: Method
    summaries: dict[str, Summary] = field(default_factory=dict)  # view ("overall", "aten", ...) -> figures
    # operator_id -> outcome; filled only when the page asked for them (``leaderboard_rows(outcomes=True)``)
    outcomes: dict[str, OperatorOutcome] = field(default_factory=dict)


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


class BoardVerdict(NamedTuple):
    """One row of the best-verdict summary, as boards read it: a method's standing on an operator and chip."""

    method_id: int
    operator_pk: int
    chip_id: int
    native: bool  # its kernels were written for this chip or for none (ranked here); else ported
    attempts: int
    tokens: int
    solve_seconds: float
    solved: bool
    speedup: float | None
    flagged: bool
    operator_version: int | None  # the deciding run's
    judge_version: int | None
    protocol_speedup: float | None  # the deciding run's protocol speedup (PROTOCOL 6)
    protocol_launch_bound_share: float | None  # how much of it is the launch race (0-1)


BOARD_VERDICT_FIELDS = (
    "method_id",
    "operator_id",
    "chip_id",
    "native",
    "attempts",
    "tokens",
    "solve_seconds",
    "solved",
    "speedup",
    "flagged",
    "operator_version",
    "judge_version",
    "protocol_speedup",
    "protocol_launch_bound_share",
)


def board_verdicts(*, operators: dict[int, SetOperator], **filters) -> list[BoardVerdict]:
    """Summary rows on the ``operators`` matching ``filters`` (chip_id__in=..., method_id=..., native=...)."""
    rows = BestVerdict.objects.filter(operator_id__in=list(operators), **filters).order_by("operator_id", "chip_id")
    return [BoardVerdict._make(row) for row in rows.values_list(*BOARD_VERDICT_FIELDS)]


def verdict_outcome(verdict: BoardVerdict, operator: SetOperator) -> OperatorOutcome:
    """The outcome a board shows for one summary row: stale when its deciding verdict predates the operator's
    current version or the judge's."""
    return OperatorOutcome(
        operator.operator_id,
        operator.source,
        solved=verdict.solved,
        speedup=verdict.speedup,
        tokens=verdict.tokens,
        solve_seconds=verdict.solve_seconds,
        attempts=verdict.attempts,
        stale=verdict.solved
        and run_is_stale(
            operator_version=verdict.operator_version,
            current_operator_version=operator.version,
            judge_version=verdict.judge_version,
        ),
        flagged=verdict.flagged,
        protocol_speedup=verdict.protocol_speedup,
        protocol_launch_bound_share=verdict.protocol_launch_bound_share,
    )


BOARD_CACHE_SECONDS = 60


def board_data_stamp() -> str:
    """Changes whenever the boards' figures may have: every write to the summary bumps a generation in its
    transaction, and their sum only grows (one tiny table, read in one aggregate)."""
    return str(BoardGeneration.objects.aggregate(total=Sum("generation"))["total"])


# Memo of board figures in this process: small and short-lived; every web worker keeps its own.
_BOARD_MEMO: OrderedDict[str, tuple[float, object]] = OrderedDict()
BOARD_MEMO_SIZE = 32


def clear_board_memo() -> None:
    _BOARD_MEMO.clear()


def _memoised(parts: tuple, compute, *, stamp: str | None = None):
    """``compute()``, memoised until the summary changes (or a minute passes) for these key ``parts``; ``stamp``:
    the summary's ``board_data_stamp()`` where the caller read it already (for several lookups at once)."""
    key = hashlib.sha1(f"{parts!r}|{board_data_stamp() if stamp is None else stamp}".encode()).hexdigest()
    now = time.monotonic()
    memo = _BOARD_MEMO.get(key)
    if memo is not None and memo[0] > now:
        _BOARD_MEMO.move_to_end(key)
        return memo[1]
    value = compute()
    _BOARD_MEMO[key] = (now + BOARD_CACHE_SECONDS, value)
    while len(_BOARD_MEMO) > BOARD_MEMO_SIZE:
        _BOARD_MEMO.popitem(last=False)
    return value


# (native, method id, chip id) -> operator source -> totals over that source's operators of the set
BoardTotals = dict[tuple[bool, int, int], dict[str, OutcomeTotals]]


def board_totals(
    *, chip_ids: list[int], operator_set: OperatorSet, ported: bool = False, method_ids: list[int] | None = None
) -> BoardTotals:
    """Per method and chip, per operator source: the counts and sums its figures are made of, as kept for the
    set (``BoardTotal``), memoised. Kernels written for the chip only, or with ``ported`` those written for
    another chip too (keyed by nativeness); every method's, or those of ``method_ids`` only."""
    natives = (True, False) if ported else (True,)
    methods = tuple(sorted(method_ids)) if method_ids is not None else None
    return _memoised(
        ("totals", operator_set.pk, tuple(sorted(chip_ids)), natives, methods),
        lambda: _read_totals(chip_ids=chip_ids, operator_set=operator_set, natives=natives, method_ids=methods),
    )


class TotalRow(NamedTuple):
    """One ``BoardTotal`` row as boards read it: a method's sums over one source's operators of a set."""

    native: bool
    method_id: int
    chip_id: int
    source: str
    outcomes: int
    solved: int
    covered: int
    logged: int
    log_sum: float
    faster_than_0_8: int
    faster_than_1: int
    faster_than_1_5: int
    tokens: int
    solve_seconds: float
    stale_by_operator: int
    solved_by_judge: dict[str, int]  # judge version -> solved rows it decided
    protocol_covered: int
    protocol_logged: int
    protocol_log_sum: float
    protocol_faster_than_0_8: int
    protocol_faster_than_1: int
    protocol_faster_than_1_5: int
    protocol_launch_bound_covered: int
    protocol_launch_bound_sum: float


def _read_totals(
    *, chip_ids: list[int], operator_set: OperatorSet, natives: tuple[bool, ...], method_ids: tuple[int, ...] | None
) -> BoardTotals:
    totals: BoardTotals = defaultdict(dict)
    rows = BoardTotal.objects.filter(operator_set=operator_set, chip_id__in=chip_ids, native__in=natives).order_by()
    if method_ids is not None:
        rows = rows.filter(method_id__in=method_ids)
    for row in map(TotalRow._make, rows.values_list(*TotalRow._fields)):
        # Verdicts of an older judge are stale now, whatever they were when the totals were written.
        stale_by_judge = sum(
            count for judged, count in row.solved_by_judge.items() if judged and int(judged) < JUDGE_VERSION
        )
        totals[(row.native, row.method_id, row.chip_id)][row.source] = OutcomeTotals(
            outcomes=row.outcomes,
            solved=row.solved,
            covered=row.covered,
            logged=row.logged,
            log_sum=row.log_sum,
            fast=(row.faster_than_0_8, row.faster_than_1, row.faster_than_1_5),
            tokens=row.tokens,
            solve_seconds=row.solve_seconds,
            stale=row.stale_by_operator + stale_by_judge,
            protocol_covered=row.protocol_covered,
            protocol_logged=row.protocol_logged,
            protocol_log_sum=row.protocol_log_sum,
            protocol_fast=(row.protocol_faster_than_0_8, row.protocol_faster_than_1, row.protocol_faster_than_1_5),
            protocol_launch_bound_covered=row.protocol_launch_bound_covered,
            protocol_launch_bound_sum=row.protocol_launch_bound_sum,
        )
    return dict(totals)


def _view_totals(operators: dict[int, SetOperator]) -> dict[str, int]:
    return {view: sum(1 for op in operators.values() if view in ("overall", op.source)) for view in SOURCE_VIEWS}


def _summaries(by_source: dict[str, OutcomeTotals], totals: dict[str, int]) -> dict[str, Summary]:
    summaries = {}
    for view in SOURCE_VIEWS:
        if totals[view]:
            # A source's own view is its totals as they are; only "overall" adds (every board reads hundreds).
            in_view = [by_source[source] for source in sorted(by_source) if view in ("overall", source)]
            summaries[view] = summarize_totals(
                sum(in_view[1:], in_view[0]) if in_view else OutcomeTotals(), totals[view]
            )
    return summaries


def operator_outcomes(
    *, chip: Chip, operators: dict[int, SetOperator], method_ids: list[int]
) -> dict[int, dict[str, OperatorOutcome]]:
    """Per method id, per operator id: the methods' outcomes on ``chip`` (kernels written for it), memoised."""
    key = ("outcomes", chip.pk, _operators_key(operators), tuple(method_ids))
    return _memoised(key, lambda: _read_outcomes(chip=chip, operators=operators, method_ids=method_ids))


def clean_speedups(
    *, chip: Chip, operator_set: OperatorSet, method_ids: list[int], figure: str = DEVICE_FIGURE
) -> dict[int, dict[str, float]]:
    """Per method id, operator id -> the ``figure`` speedup (``SPEEDUP_FIGURES``) of its clean passes with a
    known one on ``chip`` (kernels written for it), memoised: all that speedup figures read (the matched board,
    the speedup plots)."""
    by_figure = clean_speedups_by_figure(chip=chip, operator_set=operator_set, method_ids=method_ids, figures=(figure,))
    return by_figure[figure]


# clean_speedups_by_figure's key for the launch-bound shares of the clean protocol passes, when asked for.
LAUNCH_BOUND_SHARES = "protocol_launch_bound_share"


def clean_speedups_by_figure(
    *,
    chip: Chip,
    operator_set: OperatorSet,
    method_ids: list[int],
    figures: tuple[str, ...],
    with_launch_bound_shares: bool = False,
) -> dict[str, dict[int, dict[str, float]]]:
    """``clean_speedups`` of each of ``figures``, by figure: memoised apart, the set and the summary's stamp
    read once for all (the plots page draws both speedups); with ``with_launch_bound_shares``, also
    ``clean_launch_bound_shares`` under LAUNCH_BOUND_SHARES. The protocol figure and the shares come from one
    read (``_read_clean_protocol``), memoised as one."""
    operators = set_operators(operator_set=operator_set)
    shown = sorted(method_ids)
    stamp = board_data_stamp()
    key = (chip.pk, _operators_key(operators), tuple(shown))
    found = {}
    for figure in figures:
        if figure == PROTOCOL_FIGURE:
            found[figure] = _clean_protocol(chip, operators, shown, key, stamp)[0]
        else:
            found[figure] = _memoised(
                ("clean speedups", figure, *key),
                lambda figure=figure: _read_clean_speedups(
                    chip=chip, operators=operators, method_ids=shown, figure=figure
                ),
                stamp=stamp,
            )
    if with_launch_bound_shares:
        found[LAUNCH_BOUND_SHARES] = _clean_protocol(chip, operators, shown, key, stamp)[1]
    return found


def _clean_protocol(
    chip: Chip, operators: dict[int, SetOperator], shown: list[int], key: tuple, stamp: str
) -> tuple[dict[int, dict[str, float]], dict[int, dict[str, float]]]:
    return _memoised(
        ("clean protocol", *key),
        lambda: _read_clean_protocol(chip=chip, operators=operators, method_ids=shown),
        stamp=stamp,
    )


def clean_launch_bound_shares(
    *, chip: Chip, operator_set: OperatorSet, method_ids: list[int]
) -> dict[int, dict[str, float]]:
    """Per method id, operator id -> the launch-bound share of its clean pass with a protocol speedup on
    ``chip`` (the deciding run's, as the summary carries it), where that run marked its cases; memoised. The
    matched board's protocol figure shows how much of it is the launch race, over its common operators."""
    return clean_speedups_by_figure(
        chip=chip, operator_set=operator_set, method_ids=method_ids, figures=(), with_launch_bound_shares=True
    )[LAUNCH_BOUND_SHARES]


def _read_clean_protocol(
    *, chip: Chip, operators: dict[int, SetOperator], method_ids: list[int]
) -> tuple[dict[int, dict[str, float]], dict[int, dict[str, float]]]:
    """Per method, operator id -> the protocol speedup of its clean passes on ``chip`` (kernels written for it)
    where it is known, and the launch-bound share beside it where the run marked its cases: one scan of the
    ``best_verdict_clean_protocol`` index, which carries both (at a million runs the share's own read of
    the table's rows cost the plots page a fifth of its time)."""
    speedups: dict[int, dict[str, float]] = defaultdict(dict)
    shares: dict[int, dict[str, float]] = defaultdict(dict)
    for method_id, operator_pk, speedup, share in _clean_rows(
        chip=chip, operators=operators, method_ids=method_ids, known="protocol_speedup"
    ).values_list("method_id", "operator_id", "protocol_speedup", "protocol_launch_bound_share"):
        operator_id = operators[operator_pk].operator_id
        speedups[method_id][operator_id] = speedup
        if share is not None:
            shares[method_id][operator_id] = share
    return dict(speedups), dict(shares)


def _operators_key(operators: dict[int, SetOperator]) -> str:
    """The operators and their versions (outcomes' staleness depends on them), as a memo key part."""
    listed = ",".join(f"{op.pk}:{op.version}" for op in sorted(operators.values(), key=lambda op: op.pk))
    return hashlib.sha1(listed.encode()).hexdigest()


def _read_outcomes(
    *, chip: Chip, operators: dict[int, SetOperator], method_ids: list[int]
) -> dict[int, dict[str, OperatorOutcome]]:
    filters = {"chip_id": chip.pk, "native": True, "method_id__in": method_ids}
    by_method: dict[int, dict[str, OperatorOutcome]] = defaultdict(dict)
    # The API's per-operator lists read every row of the chip (ten thousand at a million runs): built straight
    # from the columns, with ``verdict_outcome``'s staleness rule written out.
    rows = BestVerdict.objects.filter(operator_id__in=list(operators), **filters).order_by("operator_id")
    for (
        method_id,
        operator_pk,
        attempts,
        tokens,
        seconds,
        solved,
        speedup,
        flagged,
        version,
        judged,
        protocol,
        launch_bound_share,
    ) in rows.values_list(
        "method_id",
        "operator_id",
        "attempts",
        "tokens",
        "solve_seconds",
        "solved",
        "speedup",
        "flagged",
        "operator_version",
        "judge_version",
        "protocol_speedup",
        "protocol_launch_bound_share",
    ):
        operator = operators[operator_pk]
        by_method[method_id][operator.operator_id] = OperatorOutcome(  # positional: OperatorOutcome's order
            operator.operator_id,
            operator.source,
            solved,
            speedup,
            tokens,
            seconds,
            attempts,
            solved and (version < operator.version or (judged is not None and judged < JUDGE_VERSION)),
            flagged,
            protocol,
            launch_bound_share,
        )
    return dict(by_method)


def _read_clean_speedups(
    *, chip: Chip, operators: dict[int, SetOperator], method_ids: list[int], figure: str = DEVICE_FIGURE
) -> dict[int, dict[str, float]]:
    """Per method, operator id -> the ``figure`` speedup of its clean passes with a known one on ``chip``
    (kernels written for it): one scan of that figure's covering index, plain tuples (the matched board reads
    thousands)."""
    column = SPEEDUP_FIGURES[figure]
    by_method: dict[int, dict[str, float]] = defaultdict(dict)
    for method_id, operator_pk, value in _clean_rows(
        chip=chip, operators=operators, method_ids=method_ids, known=column
    ).values_list("method_id", "operator_id", column):
        by_method[method_id][operators[operator_pk].operator_id] = value
    return dict(by_method)


def _clean_rows(*, chip: Chip, operators: dict[int, SetOperator], method_ids: list[int], known: str):
    """The summary's clean passes on ``chip`` (kernels written for it) whose ``known`` column is set: the
    condition of that column's covering index (``best_verdict_clean_speedup`` / ``_protocol``)."""
    return BestVerdict.objects.filter(
        chip_id=chip.pk,
        native=True,
        method_id__in=method_ids,
        operator_id__in=list(operators),
        solved=True,
        flagged=False,
        **{f"{known}__isnull": False},
    ).order_by("operator_id")


def _admitted_methods(method_ids, method_filter: MethodFilter) -> dict[int, Method]:
    methods = Method.objects.in_bulk(list(method_ids))
    return {pk: method for pk, method in methods.items() if method_filter.admits(method)}


# Sort keys a board accepts: "<view>.<figure>" or a method attribute; "-" in front reverses.
ROW_FIGURES = (
    "accuracy",
    "speedup",
    "protocol_speedup",
    "fast_0.8",
    "fast_1",
    "fast_1.5",
    "protocol_fast_0.8",
    "protocol_fast_1",
    "protocol_fast_1.5",
    "protocol_launch_bound_share",
    "tokens",
    "tokens_per_success",
    "hours",
)


def summary_figure(summary: Summary | None, figure: str) -> float | None:
    if summary is None:
        return None
    if figure.startswith("fast_"):
        return summary.fast_p.get(figure[5:])
    if figure.startswith("protocol_fast_"):
        return summary.protocol_fast_p.get(figure[14:])
    return {
        "accuracy": summary.accuracy_pct,
        "speedup": summary.speedup_geomean,
        "protocol_speedup": summary.protocol_speedup_geomean,
        "protocol_launch_bound_share": summary.protocol_launch_bound_share,
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
    *,
    chip: Chip,
    operator_set: OperatorSet,
    method_filter: MethodFilter = NO_FILTER,
    sort: str = "",
    outcomes: bool = False,
) -> list[LeaderboardRow]:
    """One row per method with figures per source view, sorted by overall accuracy then speedup; with
    ``outcomes``, each row's per-operator outcomes too (by default none are read)."""
    operators = set_operators(operator_set=operator_set)
    totals = _view_totals(operators)
    board = board_totals(chip_ids=[chip.pk], operator_set=operator_set)
    methods = _admitted_methods({method_id for _, method_id, _ in board}, method_filter)
    rows = [
        LeaderboardRow(method=methods[method_id], summaries=_summaries(by_source, totals))
        for (_, method_id, _), by_source in board.items()
        if method_id in methods
    ]
    if outcomes and rows:
        found = operator_outcomes(chip=chip, operators=operators, method_ids=sorted(methods))
        for row in rows:
            row.outcomes = found.get(row.method.pk, {})
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
    method_ids: list[int] | None = None,
    with_ported: bool = False,
) -> list[ChipRow]:
    """Per method, its figures on every chip, each from the kernels it wrote for that chip (PROTOCOL 7); ratios
    against ``reference_chip`` and, with ``with_ported``, figures of kernels written for other chips
    (``ChipRow.ported``) feed portability. Every method's row, or only those of ``method_ids`` (a method's
    own page). Only the portability board asks for the ported figures: half the summary's rows at a million runs."""
    operators = set_operators(operator_set=operator_set)
    total = len(operators)
    board = board_totals(
        chip_ids=[chip.pk for chip in chips], operator_set=operator_set, ported=with_ported, method_ids=method_ids
    )
    overall_only = {view: (total if view == "overall" else 0) for view in SOURCE_VIEWS}
    methods = _admitted_methods({method_id for _, method_id, _ in board}, method_filter)
    rows: dict[int, ChipRow] = {}
    for native in (True, False):  # a method's row is made where its native figures are
        for (is_native, method_id, chip_id), by_source in board.items():
            if is_native != native or method_id not in methods:
                continue
            row = rows.setdefault(method_id, ChipRow(method=methods[method_id]))
            (row.per_chip if native else row.ported)[chip_id] = _summaries(by_source, overall_only)["overall"]
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
    figure: MatchedSpeedup  # over the common operators, by the board's speedup figure
    summary: Summary
    own_speedup: float | None = None  # the same figure's usual geomean, over the method's own passed operators
    own_covered: int = 0
    # By the protocol figure only: the mean launch-bound share over the common operators that have one (each
    # weighs the same, as in the geomean), and how many have one.
    launch_bound_share: float | None = None
    launch_bound_covered: int = 0


def own_speedup(summary: Summary, figure: str) -> tuple[float | None, int]:
    """A summary's geomean by the ``figure`` speedup, and how many passed operators have that figure."""
    if figure == PROTOCOL_FIGURE:
        return summary.protocol_speedup_geomean, summary.protocol_speedup_covered
    return summary.speedup_geomean, summary.speedup_covered


def matched_rows(
    *,
    chip: Chip,
    operator_set: OperatorSet,
    method_filter: MethodFilter = NO_FILTER,
    method_ids: list[int] | None = None,
    figure: str = DEVICE_FIGURE,
) -> tuple[list[str], list[MatchedRow]]:
    """Speedups over the operators every shown method solved on ``chip`` (like with like), with 95% intervals,
    by the ``figure`` speedup: the common set is made of the operators every method has that figure for.

    Methods with no clean pass with a known one are left out: they would empty the common set.
    """
    rows = leaderboard_rows(chip=chip, operator_set=operator_set, method_filter=method_filter)
    if method_ids:
        rows = [row for row in rows if row.method.pk in method_ids]
    rows = [row for row in rows if own_speedup(row.summaries["overall"], figure)[1]]
    shown = sorted(row.method.pk for row in rows)
    found = clean_speedups(chip=chip, operator_set=operator_set, method_ids=shown, figure=figure)
    common, figures = matched_set_speedups({pk: found.get(pk, {}) for pk in shown})
    shares = (
        clean_launch_bound_shares(chip=chip, operator_set=operator_set, method_ids=shown)
        if figure == PROTOCOL_FIGURE
        else {}
    )
    result = []
    for row in rows:
        known = [shares[row.method.pk][op] for op in common if op in shares.get(row.method.pk, {})]
        result.append(
            MatchedRow(
                row.method,
                figures[row.method.pk],
                row.summaries["overall"],
                *own_speedup(row.summaries["overall"], figure),
                launch_bound_share=sum(known) / len(known) if known else None,
                launch_bound_covered=len(known),
            )
        )
    result.sort(key=lambda r: (-(r.figure.speedup_geomean or 0), str(r.method)))
    return common, result


def operator_pass_matrix(*, method: Method, operator_set: OperatorSet, chips: list[Chip]) -> list[dict]:
    """Per operator of the set: this method's verdict on each chip (passed, failed, or none) and its speedup,
    over all its public kernels judged there: the ones written for that chip first, else ported ones."""
    operators = set_operators(operator_set=operator_set)
    found: dict[tuple[int, int, bool], OperatorOutcome] = {}
    for verdict in board_verdicts(operators=operators, method_id=method.pk, chip_id__in=[chip.pk for chip in chips]):
        found[(verdict.operator_pk, verdict.chip_id, verdict.native)] = verdict_outcome(
            verdict, operators[verdict.operator_pk]
        )
    matrix = []
    for operator in sorted(operators.values(), key=lambda op: op.operator_id):
        cells = []
        for chip in chips:
            candidates = [found.get((operator.pk, chip.pk, native)) for native in (True, False)]
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

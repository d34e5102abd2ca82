"""The boards' summary of the runs, and the service that keeps it in the transaction of every write that
changes it. Three tables, all derived from the runs:

- ``BestVerdict``: one row per (method, operator, chip, native) with counted work, by ``group_fields``;
- ``BoardTotal``: per (operator set, method, chip, native, source), the sums of those rows, by ``set_totals``;
- ``RooflinePoint``: the roofline plot's points (counted native passes with a known speedup).

The writes that change them, and what they call:

- a run reaching a finished status (a recorded verdict, an imported bundle's, a run given up as an error):
  ``evaluation.services.run_transition`` calls ``runs_changed``;
- the admin's edits and deletions of submissions (visibility, method, target chip), kernels (tokens, time,
  operator), methods (visibility), runs, chips (their targeted submissions) and accounts (their
  submissions): each wraps its write in ``kept``, which refreshes the groups its objects belonged to before
  and after it;
- a set's members (the admin, the catalog loader) and operator versions (the catalog loader):
  ``sets_changed`` and ``operators_changed`` recompute the totals they enter.

Nothing else needs to: a queued run (an upload, a re-run) has no verdict yet, and a newer judge makes older
verdicts stale when read (rows keep the versions that made them). Every write bumps a ``BoardGeneration``:
the boards' memo is keyed on their sum, and writers of one method queue on its row.

``rebuild`` recomputes everything from the runs (``manage.py rebuild_best_verdicts``, the data migration);
``differences`` compares what is stored with a rebuild, writing nothing (``--check``).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.apps import apps as global_apps
from django.db import IntegrityError, transaction
from django.db.models import F, Q

from leaderboard.metrics import geomean

# Literal values rather than imports of evaluation.models: the data migration runs this module against
# historical models, and these are what the database stores.
PASSED = "passed"
ERROR = "error"  # our side failed: shown and retried, never a kernel's verdict for or against its method
FINISHED = ("passed", "failed_compile", "failed_correctness", "failed_runtime", "timeout", "rejected", "error")
PUBLIC = "public"

# The fields of a row that a rebuild must reproduce (all but the id).
ROW_FIELDS = (
    "attempts",
    "tokens",
    "solve_seconds",
    "solved",
    "speedup",
    "log_speedup",
    "protocol_speedup",
    "log_protocol_speedup",
    "protocol_launch_bound_share",
    "flagged",
    "operator_version",
    "judge_version",
    "runs",
    "standing_run_id",
    "standing_passed",
    "link_run_id",
    "link_passed",
    "link_speedup",
)


class RunVerdict(NamedTuple):
    """One finished run of a public submission of a public method, with what its group needs of it."""

    run_id: int
    kernel_id: int
    method_id: int
    operator_id: int  # the operator's primary key
    chip_id: int
    target_chip_id: int | None
    status: str
    speedup: float | None  # device-time: what decides between kernels
    flagged: bool
    operator_version: int
    judge_version: int | None
    tokens: int | None
    solve_seconds: float | None
    protocol_speedup: float | None = None  # the protocol's (PROTOCOL 6), shown beside it
    protocol_launch_bound_share: float | None = None  # how much of it is the launch race (0-1)

    @property
    def native(self) -> bool:
        """Written for the chip it was judged on, or for no chip in particular (PROTOCOL 7)."""
        return self.target_chip_id is None or self.target_chip_id == self.chip_id

    @property
    def group(self) -> tuple[int, int, int, bool]:
        return (self.method_id, self.operator_id, self.chip_id, self.native)

    @property
    def clean_pass(self) -> bool:
        return self.status == PASSED and not self.flagged


def _decides_over(run: RunVerdict, best: RunVerdict) -> bool:
    """Whether passing ``run`` decides its operator rather than the passing ``best`` of earlier kernels."""
    if run.flagged != best.flagged:
        return best.flagged  # a clean pass beats a flagged one, however fast
    return run.speedup is not None and (best.speedup or 0) < run.speedup


def group_fields(runs: Sequence[RunVerdict]) -> dict[str, Any]:
    """A group's row from its finished runs, in id order (one method, operator, chip and nativeness).

    Per kernel its latest run counts (a re-judgement supersedes the run before it), except that an ``error``
    supersedes nothing: it says our side failed, not the kernel, so a kernel's verdict is its latest run that
    is not an error (an error stands only where the kernel has no other verdict). The operator is solved if
    a kernel's latest verdict passed and was not flagged (PROTOCOL 6-7): the deciding kernel is the fastest
    clean pass, else (the row is then flagged, so unsolved on boards) the fastest flagged one; an unknown
    speedup counts as 0 and ties go to the earlier kernel. Tokens and time are summed over every kernel.
    """
    latest: dict[int, RunVerdict] = {}
    for run in runs:
        earlier = latest.get(run.kernel_id)
        if run.status == ERROR and earlier is not None and earlier.status != ERROR:
            continue
        latest[run.kernel_id] = run
    tokens, seconds, best = 0, 0.0, None
    for kernel_id in sorted(latest):
        run = latest[kernel_id]
        tokens += run.tokens or 0
        seconds += run.solve_seconds or 0.0
        if run.status == PASSED and (best is None or _decides_over(run, best)):
            best = run
    # The pass matrix links the fastest passing run of all, else the latest one.
    link = max(runs, key=lambda run: (run.status == PASSED, run.speedup or 0.0, run.run_id))
    # The operator page's standing: the first clean pass that no later one beats, else the latest failure.
    standing, standing_passed = runs[0], runs[0].clean_pass
    for run in runs[1:]:
        if run.clean_pass and (not standing_passed or (run.speedup or 0) > (standing.speedup or 0)):
            standing, standing_passed = run, True
        elif not standing_passed and not run.clean_pass:
            standing = run
    speedup = best.speedup if best is not None else None
    protocol_speedup = best.protocol_speedup if best is not None else None
    # The same run's share of launch-bound cases: it says how much of that protocol figure is the launch race.
    protocol_launch_bound_share = best.protocol_launch_bound_share if best is not None else None
    return {
        "attempts": len(latest),
        "tokens": tokens,
        "solve_seconds": seconds,
        "solved": best is not None,
        "speedup": speedup,
        "log_speedup": _log(speedup),
        "protocol_speedup": protocol_speedup,
        "log_protocol_speedup": _log(protocol_speedup),
        "protocol_launch_bound_share": protocol_launch_bound_share,
        "flagged": best.flagged if best is not None else False,
        "operator_version": best.operator_version if best is not None else None,
        "judge_version": best.judge_version if best is not None else None,
        "runs": len(runs),
        "standing_run_id": standing.run_id,
        "standing_passed": standing_passed,
        "link_run_id": link.run_id,
        "link_passed": link.status == PASSED,
        "link_speedup": link.speedup,
    }


def _log(speedup: float | None) -> float | None:
    """What boards sum for a geometric mean: the natural logarithm of a positive speedup, else None."""
    return math.log(speedup) if speedup is not None and speedup > 0 else None


class _Models:
    """The models this module works on: the live ones, or a migration's historical ones."""

    def __init__(self, apps: Any = None) -> None:
        apps = apps or global_apps
        self.Run = apps.get_model("evaluation", "Run")
        self.Kernel = apps.get_model("leaderboard", "Kernel")
        self.Method = apps.get_model("leaderboard", "Method")
        self.BestVerdict = apps.get_model("leaderboard", "BestVerdict")
        self.RooflinePoint = apps.get_model("leaderboard", "RooflinePoint")
        self.BoardTotal = apps.get_model("leaderboard", "BoardTotal")
        self.BoardGeneration = apps.get_model("leaderboard", "BoardGeneration")
        self.Operator = apps.get_model("leaderboard", "Operator")
        self.OperatorSet = apps.get_model("leaderboard", "OperatorSet")
        self.SetMember = self.OperatorSet._meta.get_field("operators").remote_field.through


KERNELS_PER_QUERY = 2000


def counted_verdicts(
    models: _Models, *, method_id: int, operator_ids: Sequence[int] | None = None, chip_ids: Sequence[int] | None = None
) -> list[RunVerdict]:
    """The finished runs of a method (on these operators and chips) that count: its public submissions'
    runs, if the method is public; in id order. Read kernels first, then their runs by kernel: both queries
    follow an index on every database, whatever its statistics say."""
    kernels = models.Kernel.objects.filter(
        submission__method_id=method_id, submission__visibility=PUBLIC, submission__method__public=True
    )
    if operator_ids is not None:
        kernels = kernels.filter(operator_id__in=operator_ids)
    facts = {
        kernel_id: facts
        for kernel_id, *facts in kernels.order_by().values_list(
            "pk", "operator_id", "submission__target_chip_id", "total_tokens", "solve_seconds"
        )
    }
    wanted_chips = set(chip_ids) if chip_ids is not None else None
    ids = sorted(facts)
    verdicts = []
    for start in range(0, len(ids), KERNELS_PER_QUERY):
        runs = models.Run.objects.filter(kernel_id__in=ids[start : start + KERNELS_PER_QUERY]).order_by()
        for (
            run_id,
            kernel_id,
            chip_id,
            status,
            speedup,
            flagged,
            version,
            judge_version,
            protocol,
            launch_bound_share,
        ) in runs.values_list(
            "id",
            "kernel_id",
            "chip_id",
            "status",
            "speedup",
            "flagged",
            "operator_version",
            "judge_version",
            "protocol_speedup",
            "protocol_launch_bound_share",
        ):
            if status not in FINISHED or (wanted_chips is not None and chip_id not in wanted_chips):
                continue
            operator_id, target_chip_id, tokens, seconds = facts[kernel_id]
            verdicts.append(
                RunVerdict(
                    run_id,
                    kernel_id,
                    method_id,
                    operator_id,
                    chip_id,
                    target_chip_id,
                    status,
                    speedup,
                    flagged,
                    version,
                    judge_version,
                    tokens,
                    seconds,
                    protocol,
                    launch_bound_share,
                )
            )
    verdicts.sort(key=lambda verdict: verdict.run_id)
    return verdicts


def roofline_fraction(case_results: Any) -> float | None:
    """The geometric mean over a run's cases of roofline floor / measured time; None when no case gives both
    (or the mean is not finite)."""
    fraction = geomean(
        case["roofline_floor_ms"] / case["candidate_ms"]
        for case in case_results or []
        if isinstance(case, dict) and case.get("roofline_floor_ms") and case.get("candidate_ms")
    )
    return fraction if fraction is not None and math.isfinite(fraction) else None


def roofline_points(models: _Models, verdicts: Sequence[RunVerdict], *, fractions: dict[int, Any]) -> list:
    """Unsaved roofline points of the counted ``verdicts`` the plot may draw: native passes with a known
    speedup. ``fractions`` (run id -> fraction) are those known already; the others are read from the runs."""
    drawn = [v for v in verdicts if v.status == PASSED and v.speedup is not None and v.native]
    unknown = [v.run_id for v in drawn if v.run_id not in fractions]
    fractions = dict(fractions)
    for start in range(0, len(unknown), KERNELS_PER_QUERY):
        runs = models.Run.objects.filter(pk__in=unknown[start : start + KERNELS_PER_QUERY]).order_by()
        fractions.update((run_id, roofline_fraction(cases)) for run_id, cases in runs.values_list("id", "case_results"))
    return [
        models.RooflinePoint(
            run_id=v.run_id,
            chip_id=v.chip_id,
            method_id=v.method_id,
            operator_id=v.operator_id,
            speedup=v.speedup,
            fraction=fractions[v.run_id],
        )
        for v in drawn
    ]


def computed_rows(models: _Models, *, fractions: dict[int, Any], **scope: Any) -> tuple[list, list]:
    """Unsaved rows of every group with counted runs within ``scope`` (``counted_verdicts``'s arguments),
    and the roofline points of those runs (``fractions`` as for ``roofline_points``)."""
    verdicts = counted_verdicts(models, **scope)
    groups: dict[tuple[int, int, int, bool], list[RunVerdict]] = defaultdict(list)
    for verdict in verdicts:
        groups[verdict.group].append(verdict)
    rows = [
        models.BestVerdict(
            method_id=method_id, operator_id=operator_id, chip_id=chip_id, native=native, **group_fields(runs)
        )
        for (method_id, operator_id, chip_id, native), runs in groups.items()
    ]
    return rows, roofline_points(models, verdicts, fractions=fractions)


def _bump(models: _Models, key: str) -> None:
    """Count a write to ``key`` ("method:<id>", "set:<id>"): the boards' memo key moves on, and this
    transaction holds the key's row until it ends, so two writers of one key never interleave (two verdicts
    of one group recorded at once would otherwise each recompute it without the other's run)."""
    generations = models.BoardGeneration.objects.filter(key=key)
    if generations.update(generation=F("generation") + 1):
        return
    try:
        with transaction.atomic():
            models.BoardGeneration.objects.create(key=key, generation=1)
    except IntegrityError:  # another writer created it first: wait for its row like any writer
        generations.update(generation=F("generation") + 1)


# The totals a BoardTotal row keeps, in OutcomeTotals' terms.
TOTAL_FIELDS = (
    "outcomes",
    "solved",
    "covered",
    "logged",
    "log_sum",
    "protocol_covered",
    "protocol_logged",
    "protocol_log_sum",
    "faster_than_0_8",
    "faster_than_1",
    "faster_than_1_5",
    "protocol_faster_than_0_8",
    "protocol_faster_than_1",
    "protocol_faster_than_1_5",
    "protocol_launch_bound_covered",
    "protocol_launch_bound_sum",
    "tokens",
    "solve_seconds",
    "stale_by_operator",
    "solved_by_judge",
)
FAST_FIELDS = (("faster_than_0_8", 0.8), ("faster_than_1", 1.0), ("faster_than_1_5", 1.5))
PROTOCOL_FAST_FIELDS = tuple((f"protocol_{name}", threshold) for name, threshold in FAST_FIELDS)


class _Row(NamedTuple):
    """What a set's totals need of one best-verdict row."""

    method_id: int
    operator_id: int
    chip_id: int
    native: bool
    solved: bool
    flagged: bool
    speedup: float | None
    log_speedup: float | None
    tokens: int
    solve_seconds: float
    operator_version: int | None
    judge_version: int | None
    protocol_speedup: float | None
    log_protocol_speedup: float | None
    protocol_launch_bound_share: float | None


def set_totals(rows: Iterable[_Row], *, members: dict[int, set[int]], operators: dict[int, tuple[str, int]]) -> list:
    """(set, method, chip, native, source) -> the fields of its BoardTotal row, summed over ``rows`` of the
    sets' ``members`` in operator order; ``operators``: pk -> (source, current version)."""
    sets_of: dict[int, list[int]] = defaultdict(list)
    for set_id, operator_ids in members.items():
        for operator_id in operator_ids:
            sets_of[operator_id].append(set_id)
    totals: dict[tuple, dict[str, Any]] = {}
    for row in sorted(rows, key=lambda row: (row.operator_id, row.method_id, row.chip_id, row.native)):
        source, version = operators[row.operator_id]
        clean = row.solved and not row.flagged
        for set_id in sets_of.get(row.operator_id, ()):
            key = (set_id, row.method_id, row.chip_id, row.native, source)
            total = totals.get(key)
            if total is None:
                total = totals[key] = dict.fromkeys(TOTAL_FIELDS, 0)
                total.update(
                    log_sum=0.0,
                    protocol_log_sum=0.0,
                    protocol_launch_bound_sum=0.0,
                    solve_seconds=0.0,
                    solved_by_judge={},
                )
            total["outcomes"] += 1
            total["tokens"] += row.tokens
            total["solve_seconds"] += row.solve_seconds
            if clean:
                total["solved"] += 1
                if row.speedup is not None:
                    total["covered"] += 1
                    for name, threshold in FAST_FIELDS:
                        total[name] += row.speedup > threshold
                if row.log_speedup is not None:
                    total["logged"] += 1
                    total["log_sum"] += row.log_speedup
                # The protocol's speedup over the same clean passes (PROTOCOL 6), by the same rule.
                if row.protocol_speedup is not None:
                    total["protocol_covered"] += 1
                    for name, threshold in PROTOCOL_FAST_FIELDS:
                        total[name] += row.protocol_speedup > threshold
                    # How much of each figure is the launch race, summed for a mean over operators.
                    if row.protocol_launch_bound_share is not None:
                        total["protocol_launch_bound_covered"] += 1
                        total["protocol_launch_bound_sum"] += row.protocol_launch_bound_share
                if row.log_protocol_speedup is not None:
                    total["protocol_logged"] += 1
                    total["protocol_log_sum"] += row.log_protocol_speedup
            if row.solved:
                if row.operator_version < version:
                    total["stale_by_operator"] += 1
                else:
                    judged = "" if row.judge_version is None else str(row.judge_version)
                    total["solved_by_judge"][judged] = total["solved_by_judge"].get(judged, 0) + 1
    return [
        {"operator_set_id": k[0], "method_id": k[1], "chip_id": k[2], "native": k[3], "source": k[4], **fields}
        for k, fields in totals.items()
    ]


ROW_COLUMNS = _Row._fields
TOTAL_KEY = ("operator_set_id", "method_id", "chip_id", "native", "source")


def _memberships(models: _Models, *, set_ids: Iterable[int] | None = None, operator_ids: Iterable[int] | None = None):
    """Set id -> its operator pks, for the given sets or the sets holding the given operators (None: all)."""
    through = models.SetMember.objects.order_by()
    if operator_ids is not None:
        set_ids = set(through.filter(operator_id__in=list(operator_ids)).values_list("operatorset_id", flat=True))
    if set_ids is not None:
        through = through.filter(operatorset_id__in=list(set_ids))
    members: dict[int, set[int]] = {set_id: set() for set_id in (set_ids or ())}
    for set_id, operator_id in through.values_list("operatorset_id", "operator_id"):
        members.setdefault(set_id, set()).add(operator_id)
    return members


def _operator_facts(models: _Models, members: dict[int, set[int]]) -> dict[int, tuple[str, int]]:
    wanted = set().union(*members.values()) if members else set()
    return {
        pk: (source, version)
        for pk, source, version in models.Operator.objects.filter(pk__in=wanted).values_list("pk", "source", "version")
    }


def _write_totals(models: _Models, *, members: dict[int, set[int]], method_id: int | None, chip_ids) -> None:
    """Recompute the totals of these sets (for one method, on these chips; None: all) from the stored rows."""
    if not members:
        return
    totals = models.BoardTotal.objects.filter(operator_set_id__in=list(members))
    rows = models.BestVerdict.objects.filter(operator_id__in=list(set().union(*members.values())))
    if method_id is not None:
        totals, rows = totals.filter(method_id=method_id), rows.filter(method_id=method_id)
    if chip_ids is not None:
        totals, rows = totals.filter(chip_id__in=chip_ids), rows.filter(chip_id__in=chip_ids)
    totals.delete()
    found = set_totals(
        (_Row._make(row) for row in rows.order_by().values_list(*ROW_COLUMNS).iterator(chunk_size=5000)),
        members=members,
        operators=_operator_facts(models, members),
    )
    models.BoardTotal.objects.bulk_create([models.BoardTotal(**fields) for fields in found], batch_size=1000)


def sets_changed(*, set_ids: Iterable[int], apps: Any = None) -> None:
    """These sets' members changed (or were deleted): recompute their totals."""
    models = _Models(apps)
    set_ids = sorted(set(set_ids))
    if not set_ids:
        return
    with transaction.atomic():
        for set_id in set_ids:
            _bump(models, f"set:{set_id}")
        # Every method's totals in these sets are rewritten: no method's refresh may interleave.
        for method_id in models.Method.objects.order_by("pk").values_list("pk", flat=True):
            _bump(models, f"method:{method_id}")
        _write_totals(models, members=_memberships(models, set_ids=set_ids), method_id=None, chip_ids=None)


def operators_changed(*, operator_ids: Iterable[int]) -> None:
    """These operators' versions changed: which of their verdicts are stale did, in every set holding them."""
    models = _Models()
    sets_changed(set_ids=_memberships(models, operator_ids=list(operator_ids)))


Key = tuple[int, int, int]  # (method id, operator pk, chip id)


def refresh(
    keys: Iterable[Key] = (), *, methods: Iterable[int] = (), apps: Any = None, reread_fractions: bool = False
) -> None:
    """Recompute the rows and roofline points of the groups ``keys`` (both nativenesses) and of every group of
    ``methods``. A run's cases never change, so a point's fraction is carried over unless ``reread_fractions``."""
    models = _Models(apps)
    scopes: dict[int, tuple[set[int], set[int]] | None] = {method_id: None for method_id in methods}
    for method_id, operator_id, chip_id in keys:
        if method_id in scopes and scopes[method_id] is None:
            continue
        operators, chips = scopes.setdefault(method_id, (set(), set()))
        operators.add(operator_id)
        chips.add(chip_id)
    all_members = _memberships(models) if any(scope is None for scope in scopes.values()) else {}
    with transaction.atomic():
        for method_id in sorted(scopes):  # one order for every writer: no two wait on each other's rows
            _bump(models, f"method:{method_id}")
            rows = models.BestVerdict.objects.filter(method_id=method_id)
            points = models.RooflinePoint.objects.filter(method_id=method_id)
            narrowed = scopes[method_id]
            operators = chips = None
            if narrowed is not None:  # the cross product of the operators and chips: every group in it is redone
                operators, chips = sorted(narrowed[0]), sorted(narrowed[1])
                rows = rows.filter(operator_id__in=operators, chip_id__in=chips)
                points = points.filter(operator_id__in=operators, chip_id__in=chips)
            known = {} if reread_fractions else dict(points.values_list("run_id", "fraction"))
            rows.delete()
            points.delete()
            new_rows, new_points = computed_rows(
                models, fractions=known, method_id=method_id, operator_ids=operators, chip_ids=chips
            )
            models.BestVerdict.objects.bulk_create(new_rows, batch_size=500)
            models.RooflinePoint.objects.bulk_create(new_points, batch_size=500)
            members = _memberships(models, operator_ids=operators) if operators is not None else all_members
            _write_totals(models, members=members, method_id=method_id, chip_ids=chips)


def _keys(models: _Models, runs: Q) -> set[Key]:
    """The groups the finished runs within ``runs`` belong to, public or not (a write may make them public)."""
    return set(
        models.Run.objects.filter(runs, status__in=FINISHED)
        .order_by()
        .values_list("kernel__submission__method_id", "kernel__operator_id", "chip_id")
        .distinct()
    )


def runs_changed(*, run_ids: Iterable[int]) -> None:
    """These runs were finished (or changed behind the services' back): refresh their groups."""
    models = _Models()
    refresh(_keys(models, Q(pk__in=list(run_ids))))


@contextmanager
def kept(
    *,
    runs: Iterable[int] = (),
    kernels: Iterable[int] = (),
    submissions: Iterable[int] = (),
    methods: Iterable[int] = (),
    owners: Iterable[int] = (),
) -> Iterator[None]:
    """Wrap a write to these objects (ids): the groups their runs belong to, before and after it, are
    refreshed in its transaction. For edits that can move runs between groups (a submission's method or
    target chip, a kernel's operator) and deletions (the groups are read before the rows go)."""
    models = _Models()
    scope = Q(pk__in=list(runs)) | Q(kernel_id__in=list(kernels)) | Q(kernel__submission_id__in=list(submissions))
    scope |= Q(kernel__submission__owner_id__in=list(owners))
    methods = list(methods)
    with transaction.atomic():
        before = _keys(models, scope)
        yield
        refresh(before | _keys(models, scope), methods=methods)


def rebuild(*, apps: Any = None) -> int:
    """Recompute every row and roofline point from the runs, one method per transaction (fractions read
    from the runs' cases again); returns how many summary rows there are now."""
    models = _Models(apps)
    for method_id in models.Method.objects.order_by("pk").values_list("pk", flat=True).iterator():
        refresh(methods=[method_id], apps=apps, reread_fractions=True)
    return models.BestVerdict.objects.count()


@dataclass
class Differences:
    """Stored rows and points against a rebuild: those only stored, only rebuilt, and stored otherwise."""

    missing: list[tuple] = field(default_factory=list)  # a rebuild would add these
    unexpected: list[tuple] = field(default_factory=list)  # a rebuild would remove these
    changed: list[tuple[tuple, dict[str, tuple[Any, Any]]]] = field(default_factory=list)  # (key, field -> values)
    rows: int = 0  # summary rows a rebuild gives
    points: int = 0  # roofline points a rebuild gives
    totals: int = 0  # set totals a rebuild gives

    def __bool__(self) -> bool:
        return bool(self.missing or self.unexpected or self.changed)

    def summary(self, *, examples: int = 5) -> str:
        lines = [
            f"{len(self.missing)} missing, {len(self.unexpected)} unexpected, {len(self.changed)} changed "
            f"(of {self.rows} rows, {self.points} roofline points and {self.totals} set totals a rebuild gives); "
            "a row is named by (method, operator, chip, native), a point by ('point', run id), totals by "
            "('totals', set, method, chip, native, source)"
        ]
        lines += [f"  missing {key}" for key in self.missing[:examples]]
        lines += [f"  unexpected {key}" for key in self.unexpected[:examples]]
        for key, fields in self.changed[:examples]:
            told = ", ".join(
                f"{name}: stored {stored!r}, rebuilt {rebuilt!r}" for name, (stored, rebuilt) in fields.items()
            )
            lines.append(f"  changed {key}: {told}")
        return "\n".join(lines)


POINT_FIELDS = ("chip_id", "method_id", "operator_id", "speedup", "fraction")


def _compare(found: Differences, key: tuple, stored: dict[tuple, dict], values: dict[str, Any]) -> None:
    kept = stored.pop(key, None)
    if kept is None:
        found.missing.append(key)
    elif kept != values:
        found.changed.append(
            (key, {name: (kept[name], value) for name, value in values.items() if kept[name] != value})
        )


def differences(*, apps: Any = None) -> Differences:
    """Compare the stored rows and points with what a rebuild would write, writing nothing."""
    models = _Models(apps)
    stored: dict[tuple, dict] = {
        (row.method_id, row.operator_id, row.chip_id, row.native): {name: getattr(row, name) for name in ROW_FIELDS}
        for row in models.BestVerdict.objects.order_by().iterator(chunk_size=5000)
    }
    stored.update(
        (("point", point["run_id"]), {name: point[name] for name in POINT_FIELDS})
        for point in models.RooflinePoint.objects.order_by().values("run_id", *POINT_FIELDS).iterator(chunk_size=5000)
    )
    stored.update(
        (("totals", *(total[name] for name in TOTAL_KEY)), {name: total[name] for name in TOTAL_FIELDS})
        for total in models.BoardTotal.objects.order_by().values(*TOTAL_KEY, *TOTAL_FIELDS).iterator(chunk_size=5000)
    )
    members = _memberships(models)
    operators = _operator_facts(models, members)
    found = Differences()
    for method_id in models.Method.objects.order_by("pk").values_list("pk", flat=True).iterator():
        rows, points = computed_rows(models, fractions={}, method_id=method_id)
        for row in rows:
            found.rows += 1
            key = (row.method_id, row.operator_id, row.chip_id, row.native)
            _compare(found, key, stored, {name: getattr(row, name) for name in ROW_FIELDS})
        rows_for_totals = [_Row(*(getattr(row, name) for name in ROW_COLUMNS)) for row in rows]
        for total in set_totals(rows_for_totals, members=members, operators=operators):
            found.totals += 1
            key = ("totals", *(total[name] for name in TOTAL_KEY))
            _compare(found, key, stored, {name: total[name] for name in TOTAL_FIELDS})
        for point in points:
            found.points += 1
            _compare(found, ("point", point.run_id), stored, {name: getattr(point, name) for name in POINT_FIELDS})
    found.unexpected = sorted(stored, key=repr)
    found.missing.sort(key=repr)
    found.changed.sort(key=lambda item: repr(item[0]))
    return found

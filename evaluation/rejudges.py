"""What a re-judgement changed: each of its runs against the run it supersedes (``Run.rejudge_of``).

Reads only; the re-judgement itself is queued by ``evaluation.services.rejudge_set``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluation.models import FINISHED_STATUSES, RejudgeBatch, Run

# A speedup that moves by less than this (either way) with the same verdict is "unchanged": the same kernel
# timed twice on one H200 varies by up to 2 % for most operators and far more for host-synchronising
# baselines (NOTES.md, "Known debts"), so smaller moves say nothing about the judge.
MOVED_RATIO = 1.10

FLIPPED, MOVED, PENDING, UNKNOWN, UNCHANGED = "flipped", "moved", "pending", "unknown", "unchanged"
ORDER = (FLIPPED, MOVED, PENDING, UNKNOWN, UNCHANGED)


@dataclass(frozen=True)
class Side:
    """One verdict of the comparison: the superseded run's, or the re-judgement's."""

    run_id: int | None
    status: str | None  # None: the superseded run was deleted, or the re-judgement is not finished
    speedup: float | None  # the device-time speedup
    protocol_speedup: float | None  # the protocol's (PROTOCOL.md section 6); None where it was not measured
    judge_version: int | None
    operator_version: int | None
    reason: str


@dataclass(frozen=True)
class Change:
    method: str
    method_id: int
    operator_id: str
    round: int
    kernel_id: int
    before: Side
    after: Side
    kind: str  # one of ORDER


@dataclass
class RejudgeDiff:
    batch: RejudgeBatch
    changes: list[Change] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def finished(self) -> int:
        return len(self.changes) - self.counts.get(PENDING, 0)


def _side(run: Run | None, *, finished: bool = True) -> Side:
    if run is None:
        return Side(None, None, None, None, None, None, "")
    return Side(
        run.pk,
        run.status if finished else None,
        run.speedup if finished else None,
        run.protocol_speedup if finished else None,
        run.judge_version,
        run.operator_version,
        run.reason if finished else "",
    )


def speedup_moved(before: float | None, after: float | None) -> bool:
    """Known on one side only, or known on both and apart by more than MOVED_RATIO."""
    if before is None or after is None:
        return (before is None) != (after is None)
    if before <= 0 or after <= 0:
        return before != after
    return max(before / after, after / before) > MOVED_RATIO


def classify(before: Side, after: Side) -> str:
    """PENDING until judged; UNKNOWN when the superseded run was deleted since (nothing to compare with)."""
    if after.status is None:
        return PENDING
    if before.status is None:
        return UNKNOWN
    if before.status != after.status:
        return FLIPPED
    if speedup_moved(before.speedup, after.speedup) or protocol_speedup_moved(before, after):
        return MOVED
    return UNCHANGED


def protocol_speedup_moved(before: Side, after: Side) -> bool:
    """Measured on both sides and apart by more than MOVED_RATIO. A figure measured on one side only is not
    a move: the protocol stage is switched on per worker (KGB_PROTOCOL_TIMING), so its appearing or going
    says which workers judged, not what the kernel does."""
    if before.protocol_speedup is None or after.protocol_speedup is None:
        return False
    return speedup_moved(before.protocol_speedup, after.protocol_speedup)


def rejudge_diff(*, batch: RejudgeBatch) -> RejudgeDiff:
    """Every run of ``batch`` against the run it supersedes: flipped verdicts first, then moved speedups
    (device-time or protocol),
    then those still to be judged, those whose superseded run is gone, and the unchanged; by method,
    operator and round within each."""
    runs = batch.runs.select_related("rejudge_of", "kernel__operator", "kernel__submission__method").order_by("pk")
    changes = []
    for run in runs:
        kernel = run.kernel
        before = _side(run.rejudge_of)
        after = _side(run, finished=run.status in FINISHED_STATUSES)
        changes.append(
            Change(
                method=str(kernel.submission.method),
                method_id=kernel.submission.method_id,
                operator_id=kernel.operator.operator_id,
                round=kernel.round,
                kernel_id=kernel.pk,
                before=before,
                after=after,
                kind=classify(before, after),
            )
        )
    changes.sort(key=lambda change: (ORDER.index(change.kind), change.method, change.operator_id, change.round))
    counts = {kind: sum(1 for change in changes if change.kind == kind) for kind in ORDER}
    return RejudgeDiff(batch=batch, changes=changes, counts=counts)

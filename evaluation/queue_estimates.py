"""Where a queued run stands on its chip's queue, and about when it will start.

Workers claim round robin over owners (``services.run_claim_fairest``), each owner's runs oldest first, in
the order of the owners' last turns. So the run that is its owner's (k+1)-th queued run on a chip starts in
round k+1: before it come k runs of every other owner (or all they have queued, if fewer), k of its own,
and in its own round one run of each owner whose turn comes first and who has that many queued. The start
estimate divides that position by the chip's recent rate of judgements (runs finished in the last ten
minutes, which counts every worker and slot serving it); without recent judgements there is no estimate.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count
from django.db.models.functions import Now
from django.utils import timezone

from evaluation.models import FINISHED_STATUSES, OwnerTurn, Run, RunStatus

RATE_WINDOW = timedelta(minutes=10)


@dataclass(frozen=True)
class QueueEstimate:
    position: int  # judgements on the chip that will be claimed before this run (0: it is next)
    starts_in_s: float | None  # None: no judgement on the chip lately to estimate from

    def describe(self) -> str:
        ahead = "next in its chip's queue" if self.position == 0 else f"{self.position} ahead in its chip's queue"
        if self.starts_in_s is None:
            return ahead
        return f"{ahead}, starts in about {_duration(self.starts_in_s)}"


def queue_estimates(*, runs: list[Run]) -> dict[int, QueueEstimate]:
    """Run id -> its estimate, for the queued ones among ``runs`` (a few queries per chip, whatever the
    queue's length)."""
    queued = [run for run in runs if run.status == RunStatus.QUEUED]
    by_chip: dict[int, list[Run]] = defaultdict(list)
    for run in queued:
        by_chip[run.chip_id].append(run)
    estimates: dict[int, QueueEstimate] = {}
    now = timezone.now()
    for chip_id, chip_runs in by_chip.items():
        waiting = Run.objects.filter(chip_id=chip_id, status=RunStatus.QUEUED).order_by()
        per_owner = dict(
            waiting.values("kernel__submission__owner_id")
            .annotate(count=Count("pk"))
            .values_list("kernel__submission__owner_id", "count")
        )
        turns = dict(
            OwnerTurn.objects.filter(chip_id=chip_id, owner_id__in=list(per_owner)).values_list(
                "owner_id", "last_claimed_at"
            )
        )
        # The claim order of owners (services._fairest_queued_run_id): never served first, then longest ago.
        order = sorted(per_owner, key=lambda owner: (owner in turns, turns.get(owner) or now, owner))
        rank = {owner: index for index, owner in enumerate(order)}
        owners = {run.pk: owner for run, owner in _owners(chip_runs)}
        own_ahead = _own_runs_ahead(chip_id, chip_runs, owners)
        finished_lately = Run.objects.filter(
            chip_id=chip_id, status__in=FINISHED_STATUSES, finished_at__gte=Now() - RATE_WINDOW
        ).count()  # finished_at is the database's time (evaluation.clock), so is the window's start
        rate = finished_lately / RATE_WINDOW.total_seconds()
        for run in chip_runs:
            owner, k = owners[run.pk], own_ahead[run.pk]
            position = k
            for other, count in per_owner.items():
                if other == owner:
                    continue
                position += min(count, k + (1 if rank[other] < rank.get(owner, len(order)) else 0))
            estimates[run.pk] = QueueEstimate(position=position, starts_in_s=(position + 1) / rate if rate else None)
    return estimates


def _owners(runs: list[Run]) -> list[tuple[Run, int]]:
    owner_of = dict(
        Run.objects.filter(pk__in=[run.pk for run in runs]).values_list("pk", "kernel__submission__owner_id")
    )
    return [(run, owner_of[run.pk]) for run in runs]


def _own_runs_ahead(chip_id: int, runs: list[Run], owners: dict[int, int]) -> dict[int, int]:
    """Per run: how many queued runs of its owner on the chip are older (claimed before it)."""
    ahead: dict[int, int] = {}
    for owner in set(owners.values()):
        queued_ids = list(
            Run.objects.filter(chip_id=chip_id, status=RunStatus.QUEUED, kernel__submission__owner_id=owner)
            .order_by("pk")
            .values_list("pk", flat=True)
        )
        position = {pk: index for index, pk in enumerate(queued_ids)}
        for run in runs:
            if owners[run.pk] == owner:
                ahead[run.pk] = position.get(run.pk, 0)
    return ahead


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"

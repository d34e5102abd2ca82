"""``manage.py rejudge --set SLUG --chip SLUG [--stale-only]``: judge a set's latest public kernels on a chip
again, by today's judge (evaluation.services.rejudge_set); staff see what changed at /staff/rejudges/<id>/."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.urls import reverse

from evaluation import services


class Command(BaseCommand):
    help = "Queue a fresh judgement of a set's latest public kernels on a chip; prints where the diff is shown."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--set", required=True, dest="set_slug", help="Operator set slug, e.g. ms")
        parser.add_argument("--chip", required=True, help="Chip slug, e.g. nvidia-h200")
        parser.add_argument(
            "--stale-only",
            action="store_true",
            help="Only verdicts made by an older judge or against an older operator version",
        )
        parser.add_argument(
            "--without-worker",
            action="store_true",
            help="Queue even when no live worker serves the chip (its runs judged through export_jobs bundles)",
        )

    def handle(self, *args, **options) -> None:
        try:
            operator_set, chip = services.rejudge_resolve(set_slug=options["set_slug"], chip_slug=options["chip"])
            batch = services.rejudge_set(
                operator_set=operator_set,
                chip=chip,
                stale_only=options["stale_only"],
                require_worker=not options["without_worker"],
            )
        except services.RejudgeRefused as refused:
            raise CommandError(str(refused)) from None
        left_out = (
            f"; {batch.already_pending} left out (a run already queued or running)" if batch.already_pending else ""
        )
        self.stdout.write(
            f"re-judgement {batch.pk}: {batch.runs.count()} runs of {batch.set_slug} queued on {chip.slug}{left_out}; "
            f"the diff: {reverse('leaderboard:rejudge', args=[batch.pk])}"
        )

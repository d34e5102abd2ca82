"""``manage.py judge_reference_kernels``: queue the built-in reference kernels on a chip (idempotent).

``make run`` calls it after starting the worker, so a first visit finds verified, ranked rows.
"""

from django.core.management.base import BaseCommand, CommandError

from evaluation.models import Chip
from evaluation.services import chip_ensure
from leaderboard.reference_seed import reference_kernels_submit


class Command(BaseCommand):
    help = "Submit the catalog's reference kernels as the method 'Built-in reference kernels' (skips ones it has)."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--chip", action="append", default=[], help="Chip slug to judge on (repeatable; default: cpu-interpreter)"
        )
        parser.add_argument("--limit", type=int, default=None, help="At most this many kernels (quick ones first)")

    def handle(self, *args, **options) -> None:
        slugs = options["chip"] or ["cpu-interpreter"]
        chips = []
        for slug in slugs:
            chip = chip_ensure(slug=slug) if slug == "cpu-interpreter" else Chip.objects.filter(slug=slug).first()
            if chip is None:
                raise CommandError(f"unknown chip {slug!r}")
            chips.append(chip)
        result = reference_kernels_submit(chips=chips, limit=options["limit"])
        queued = sum(submission.kernels.count() for submission in result.submissions)
        self.stdout.write(
            f"reference kernels: {queued} queued on {', '.join(slugs)} in "
            f"{len(result.submissions)} submission(s); {result.skipped_existing} already submitted"
            + (
                f"; {len(result.skipped_unavailable)} operators cannot be judged now"
                if result.skipped_unavailable
                else ""
            )
        )

"""``manage.py rebuild_best_verdicts [--check]``: recompute the boards' best-verdict summary from the runs."""

import time

from django.core.management.base import BaseCommand, CommandError

from leaderboard import best_verdicts


class Command(BaseCommand):
    help = (
        "Recompute the best-verdict summary the boards read from every finished run. With --check, compare "
        "the stored rows with a rebuild instead, write nothing, and fail with a summary if they differ."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--check", action="store_true", help="compare without writing; exit non-zero on a difference"
        )

    def handle(self, *args, check: bool = False, **options) -> None:
        started = time.perf_counter()
        if check:
            found = best_verdicts.differences()
            if found:
                raise CommandError("the best-verdict summary differs from a rebuild: " + found.summary())
            seconds = time.perf_counter() - started
            self.stdout.write(f"best verdicts match a rebuild ({found.rows} rows, {seconds:.1f} s)")
            return
        rows = best_verdicts.rebuild()
        self.stdout.write(f"best verdicts rebuilt: {rows} rows in {time.perf_counter() - started:.1f} s")

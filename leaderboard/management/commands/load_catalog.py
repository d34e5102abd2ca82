"""``manage.py load_catalog``: mirror the operator records, built-in sets, known chips and paper numbers."""

from django.core.management.base import BaseCommand

from evaluation.services import KNOWN_CHIPS, chip_ensure
from leaderboard.catalog_loader import catalog_load, paper_results_load


class Command(BaseCommand):
    help = "Load or update the operator catalog, the built-in operator sets and the paper's published numbers."

    def handle(self, *args, **options) -> None:
        counts = catalog_load()
        self.stdout.write(
            f"operators: {counts['created']} created, {counts['updated']} updated, {counts['unchanged']} unchanged"
            f" ({counts['without_record']} without a catalog record yet)"
        )
        for slug in KNOWN_CHIPS:
            chip_ensure(slug=slug)
        self.stdout.write(f"paper numbers: {paper_results_load()} rows")

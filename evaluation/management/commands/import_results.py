"""``manage.py import_results RESULTS.json --chip SLUG``: record the verdicts of an offline-judged bundle."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.bundles import BundleRefused, results_import


class Command(BaseCommand):
    help = "Import a results bundle; refused whole if tampered with, foreign or judged on another chip."

    def add_arguments(self, parser) -> None:
        parser.add_argument("results", type=Path)
        parser.add_argument("--chip", required=True, help="The chip the bundle was exported for")

    def handle(self, *args, **options) -> None:
        try:
            document = json.loads(options["results"].read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise CommandError(f"cannot read {options['results']}: {exc}") from None
        try:
            report = results_import(document, chip_slug=options["chip"])
        except BundleRefused as refused:
            raise CommandError("refused: " + "; ".join(refused.problems)) from None
        self.stdout.write(json.dumps(report.to_json()))

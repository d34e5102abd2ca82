"""``manage.py export_jobs --chip SLUG [--limit N] --out BUNDLE.json``: claim a chip's queued runs as an offline
job bundle (see evaluation.bundles)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.bundles import BundleRefused, bundle_export


class Command(BaseCommand):
    help = "Export a chip's queued runs as a signed job bundle; the runs are claimed until the results return."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--chip", required=True, help="Chip slug, e.g. nvidia-h200")
        parser.add_argument("--limit", type=int, default=100, help="At most this many runs (default 100)")
        parser.add_argument("--out", required=True, type=Path, help="Where to write the bundle (JSON)")

    def handle(self, *args, **options) -> None:
        try:
            bundle = bundle_export(chip_slug=options["chip"], limit=options["limit"])
        except BundleRefused as refused:
            raise CommandError("; ".join(refused.problems)) from None
        options["out"].write_text(json.dumps(bundle))
        self.stdout.write(
            f"bundle {bundle['bundle_id']}: {len(bundle['jobs'])} runs of {bundle['chip']} -> {options['out']}"
        )

"""``manage.py judge_bundle BUNDLE.json --out RESULTS.json [--chip SLUG]``: the same as
``python -m evaluation.judge.bundle judge`` (which needs no Django settings or database)."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Judge every job of an offline bundle on this host and write the results bundle."

    def add_arguments(self, parser) -> None:
        parser.add_argument("bundle", type=Path)
        parser.add_argument("--out", required=True, type=Path)
        parser.add_argument("--chip", default=None, help="This host's chip (default: detected, or KGB_CHIP)")

    def handle(self, *args, **options) -> None:
        from evaluation.judge.bundle import run_judge_command

        code = run_judge_command(options["bundle"], options["out"], options["chip"])
        if code:
            raise SystemExit(code)

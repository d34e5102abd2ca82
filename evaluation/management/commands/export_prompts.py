"""``manage.py export_prompts --set SLUG --chip SLUG --out FILE.jsonl``: a prompt pack, one operator a line."""

import contextlib
import json
import sys

from django.core.management.base import BaseCommand, CommandError

from evaluation.catalog.prompts import prompt_pack_lines
from leaderboard.models import OperatorSet


class Command(BaseCommand):
    help = "Write one JSON object per operator of a set (operator_id, entry_points, prompt, ...)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--set", required=True, dest="set_slug", help="Operator set slug, e.g. kgb-mc")
        parser.add_argument("--chip", required=True, help="Chip slug the prompts target, e.g. nvidia-h200")
        parser.add_argument("--out", default="-", help="Output file (default: standard output)")

    def handle(self, *args, set_slug: str, chip: str, out: str, **options) -> None:
        try:
            operator_set = OperatorSet.objects.get(slug=set_slug)
        except OperatorSet.DoesNotExist:
            known = ", ".join(OperatorSet.objects.values_list("slug", flat=True))
            raise CommandError(f"unknown operator set {set_slug!r} (known: {known})") from None
        operator_ids = list(operator_set.operators.order_by("operator_id").values_list("operator_id", flat=True))
        with contextlib.ExitStack() as stack:
            handle = sys.stdout if out == "-" else stack.enter_context(open(out, "w", encoding="utf-8"))
            for line in prompt_pack_lines(operator_ids, chip):
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        if out != "-":
            self.stderr.write(f"wrote {len(operator_ids)} prompts to {out}")

"""``manage.py evaluate FILE --operator ID [--chip SLUG] [--json]``: judge one file locally, no server needed."""

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Judge one kernel file against one operator on this machine's chip. Exit 0 passed, 1 not, 2 bad usage."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="The kernel file (.py)")
        parser.add_argument("--operator", required=True, help="Operator id, e.g. aten::cos")
        parser.add_argument("--chip", default=None, help="Chip slug; default: the chip this machine has")
        parser.add_argument("--json", action="store_true", help="Print one JSON object")

    def handle(self, *args, **options) -> None:
        from evaluation.judge.cli import run_cli

        code = run_cli(options["file"], options["operator"], options["chip"], options["json"])
        if code:
            raise SystemExit(code)

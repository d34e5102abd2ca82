"""``manage.py worker [--chip SLUG]``: start a Celery worker on the queue of this machine's chip.

The chip is detected from the device (or KGB_CHIP / --chip); the worker consumes ``chip.<slug>`` only,
prefetches one message and acknowledges it after the run is recorded.
"""

import os

from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Start an evaluation worker for this machine's chip (one per GPU: set CUDA_VISIBLE_DEVICES)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--chip", default=None, help="Chip slug; default: detected from the device")
        parser.add_argument("--concurrency", type=int, default=1, help="Parallel judgements (1 per GPU)")
        parser.add_argument("--name", default=None, help="Celery node name (default: <chip>@<host>-<pid>)")
        parser.add_argument("--loglevel", default="INFO")

    def handle(self, *args, **options) -> None:
        from evaluation.judge.backends import detect_chip_isolated

        if options["chip"]:
            os.environ["KGB_CHIP"] = options["chip"]
        # Detected in a child interpreter: this process forks the pool, and a device it had initialised
        # would be unusable in every child. The answer is handed down, so nobody here touches the device.
        chip_slug, device_type = detect_chip_isolated()
        os.environ["KGB_CHIP"], os.environ["KGB_DEVICE_TYPE"] = chip_slug, device_type
        # Judgements at once on this worker's GPU: each keeps less device memory cached when there are many.
        os.environ.setdefault("KGB_JUDGES_PER_DEVICE", str(options["concurrency"]))
        name = options["name"] or f"{chip_slug}@{os.uname().nodename}-{os.getpid()}"
        argv = [
            "celery", "-A", "kgbweb", "worker", "-Q", f"chip.{chip_slug}", "-n", name,
            "--concurrency", str(options["concurrency"]), "--prefetch-multiplier", "1",
            "--without-gossip", "--without-mingle", "--loglevel", options["loglevel"],
        ]
        self.stdout.write(f"worker {name} on queue chip.{chip_slug}")
        self.stdout.flush()
        import sys

        from celery.__main__ import main as celery_main

        sys.argv = argv
        celery_main()

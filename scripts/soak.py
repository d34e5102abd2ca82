"""Soak: N runs through a real site, broker and workers while the infrastructure fails under them.

    python scripts/soak.py --runs 200 [--config embedded|postgres-redis] [--workers 2] [--seed 7]

Uploads N one-kernel submissions (a correct aten::cos, and every fifth a wrong one, so both verdicts occur)
to a fresh deployment (tests/e2e/stack.py: the same subprocesses the end-to-end tests run), judged by
``--workers`` workers consuming one chip's queue, and meanwhile injects a fault every few seconds:

- ``kill``: SIGKILL a worker's whole process group mid-run, then start a new one;
- ``term``: SIGTERM a worker (a graceful stop), then start a new one;
- ``broker``: restart the broker (postgres-redis: a private redis-server this script runs, append-only so
  queued messages survive as they would in production; embedded: the on-disk queue stays, the workers are
  restarted as if their host rebooted);
- ``db``: drop every database connection of the deployment (PostgreSQL's pg_terminate_backend; on SQLite,
  which has no server, the fault is skipped and says so).

It ends with one line, ``N runs, L lost, D doubled, S stuck`` (lost: an upload that left no run, a refused
request included; doubled: a kernel with two runs on one chip; stuck: a run not finished by the deadline),
and exits non-zero unless L = D = S = 0. A verdict recorded twice for one run is not counted from outside:
recording is conditional on the run's lease (tests/evaluation/test_run_services.py).

Not injected: a worker's skewed clock. Heartbeats carry the worker's own time, so a clock far behind makes a
live worker look stale to the others: its runs would be re-queued and judged again (recorded once, by the
lease), costing time, not verdicts.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.stack import Stack  # noqa: E402  (the deployment harness the end-to-end tests use)

KERNELS = ROOT / "tests" / "fixtures" / "kernels"
POSTGRES_URL = os.environ.get("KGB_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class PrivateRedis:
    """A redis-server of the soak's own (restartable without touching anyone else's), append-only."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.port, self.process = folder, free_port(), None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--dir", str(self.folder), "--appendonly", "yes"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return
            time.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)


class Soak:
    def __init__(self, args: argparse.Namespace, folder: Path) -> None:
        self.args, self.folder, self.random = args, folder, random.Random(args.seed)
        self.redis: PrivateRedis | None = None
        self.database = ""
        if args.config == "postgres-redis":
            import psycopg

            self.database = "kgb_soak_" + secrets.token_hex(4)
            with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
                connection.execute(f'CREATE DATABASE "{self.database}"')
            self.redis = PrivateRedis(folder / "redis")
            (folder / "redis").mkdir()
            self.redis.start()
            database_url, broker_url = POSTGRES_URL.rsplit("/", 1)[0] + "/" + self.database, self.redis.url
        else:
            database_url, broker_url = f"sqlite:///{folder / 'db.sqlite3'}", "filesystem://"
        self.stack = Stack(data_dir=folder, database_url=database_url, broker_url=broker_url)
        self.workers = 0
        self.faults: dict[str, int] = {}

    def close(self) -> None:
        self.stack.stop()
        if self.redis is not None:
            self.redis.stop()
        if self.database:
            import psycopg

            with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
                connection.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')

    def start_worker(self) -> None:
        self.workers += 1
        self.stack.start_worker(f"worker{self.workers}")

    def live_workers(self) -> list[str]:
        return [name for name in self.stack.processes if name.startswith("worker")]

    def inject(self) -> None:
        fault = self.random.choice(["kill", "kill", "term", "broker", "db"])
        workers = self.live_workers()
        if fault in ("kill", "term") and workers:
            self.stack.kill(self.random.choice(workers), signal.SIGKILL if fault == "kill" else signal.SIGTERM)
            self.start_worker()
        elif fault == "broker":
            if self.redis is not None:
                self.redis.stop()
                time.sleep(1.0)
                self.redis.start()
            else:  # the on-disk queue outlives anything; its consumers are what a reboot takes away
                for name in workers:
                    self.stack.kill(name)
                for _ in workers:
                    self.start_worker()
        elif fault == "db":
            if not self.database:
                fault = "db (skipped: SQLite has no server)"
            else:
                import psycopg

                with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
                    connection.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = %s AND pid <> pg_backend_pid()",
                        [self.database],
                    )
        self.faults[fault] = self.faults.get(fault, 0) + 1

    def tally(self) -> dict:
        script = (
            "import json; from collections import Counter; from evaluation.models import Run;"
            "from leaderboard.models import Kernel;"
            "runs = list(Run.objects.values('kernel_id', 'chip_id', 'status', 'attempts'));"
            "pairs = Counter((r['kernel_id'], r['chip_id']) for r in runs);"
            "print(json.dumps({'kernels': Kernel.objects.count(), 'runs': len(runs),"
            "'kernels_with_runs': len({r['kernel_id'] for r in runs}),"
            "'doubled': sum(n - 1 for n in pairs.values() if n > 1),"
            "'unfinished': sum(1 for r in runs if r['status'] in ('queued', 'running')),"
            "'errors': sum(1 for r in runs if r['status'] == 'error'),"
            "'max_attempts': max([r['attempts'] for r in runs] or [0]),"
            "'statuses': dict(Counter(r['status'] for r in runs))}))"
        )
        return json.loads(self.stack.manage("shell", "-c", script).stdout.strip().splitlines()[-1])

    def run(self) -> int:
        started = time.monotonic()
        self.stack.prepare()
        self.stack.start_site()
        for _ in range(self.args.workers):
            self.start_worker()
        session = self.stack.login()
        uploaded = 0
        next_fault = time.monotonic() + self.args.fault_every
        for index in range(self.args.runs):
            kernel = KERNELS / ("aten__cos_wrong.py" if index % 5 == 4 else "aten__cos_correct.py")
            submission, _ = self.stack.upload(session, kernel, scaffold=f"Soak {index % 7}")
            uploaded += bool(submission)
            if time.monotonic() > next_fault:
                self.inject()
                next_fault = time.monotonic() + self.args.fault_every
        deadline = time.monotonic() + self.args.deadline
        while time.monotonic() < deadline:
            tally = self.tally()
            if tally["runs"] >= uploaded and not tally["unfinished"]:
                break
            if time.monotonic() > next_fault and time.monotonic() < deadline - 3 * self.args.fault_every:
                self.inject()  # faults keep coming while runs are judged, not only while uploading
                next_fault = time.monotonic() + self.args.fault_every
            time.sleep(2.0)
        tally = self.tally()
        lost = self.args.runs - tally["kernels_with_runs"]
        doubled, stuck = tally["doubled"], tally["unfinished"]
        print(
            f"config {self.args.config}, {self.args.workers} workers on one queue, faults {self.faults}, "
            f"statuses {tally['statuses']}, most attempts of a run {tally['max_attempts']}, "
            f"{time.monotonic() - started:.0f} s"
        )
        print(f"{self.args.runs} runs, {lost} lost, {doubled} doubled, {stuck} stuck")
        return 0 if lost == doubled == stuck == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--config", choices=["embedded", "postgres-redis"], default="embedded")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--fault-every", type=float, default=8.0, help="seconds between injected faults")
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds to finish after the uploads")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.config == "postgres-redis" and shutil.which("redis-server") is None:
        parser.error("postgres-redis needs redis-server on PATH (apt-get install -y redis-server)")
    folder = Path(tempfile.mkdtemp(prefix="kgb-soak-"))
    soak = Soak(args, folder)
    try:
        return soak.run()
    finally:
        soak.close()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

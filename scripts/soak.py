"""Soak: N runs through a real site, broker and workers while the infrastructure fails under them.

    python scripts/soak.py --runs 200 [--config embedded|postgres-redis] [--workers 2] [--fault-every 10]

Uploads N one-kernel submissions (a correct aten::cos, and every fifth a wrong one, so both verdicts occur)
through the site's upload form to a fresh deployment (tests/e2e/stack.py: the same subprocesses the
end-to-end tests run), judged by ``--workers`` workers consuming one chip's queue (the CPU interpreter). The
uploads keep at most ``--ahead`` runs unfinished, so they go on while runs are judged, and every
``--fault-every`` judged runs one fault is injected (faults in proportion to the runs, whatever the pace):

- ``kill``: SIGKILL a worker's whole process group mid-run, then start a new one;
- ``term``: SIGTERM a worker (a graceful stop), then start a new one;
- ``broker``: restart the broker (postgres-redis: a private redis-server this script runs, append-only so
  queued messages survive as they would in production; embedded: the on-disk queue stays, the workers are
  restarted as if their host rebooted);
- ``db``: drop every database connection of the deployment (PostgreSQL's pg_terminate_backend; on SQLite,
  which has no server, the fault is skipped and says so);
- ``clock``: stop a worker gracefully and start its replacement with its wall clock 20 minutes behind or
  ahead (``scripts/skewed_clock/sitecustomize.py``; the monotonic clock stays true, as on a real host).
  Heartbeats and claims carry the database's time (evaluation.clock), so nothing may change: before that, a
  clock behind made the live worker look stale and its runs were judged again. On SQLite, where every
  process shares one host's clock, it is skipped and says so.

It ends with one line, ``N runs, L lost, D doubled, S stuck`` (lost: an upload that left no run, a refused
request included; doubled: a kernel with two runs on one chip; stuck: a run not finished by the deadline),
and exits non-zero unless L = D = S = 0. A verdict recorded twice for one run is not counted from outside:
recording is conditional on the run's lease (tests/evaluation/test_run_services.py).

A progress line is printed every 50 judged runs (``--runs 1000`` took 25 minutes on a shared 2-core host).
"""

from __future__ import annotations

import argparse
import contextlib
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
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.e2e.stack import Stack  # noqa: E402  (the deployment harness the end-to-end tests use)

KERNELS = ROOT / "tests" / "fixtures" / "kernels"
SKEWED_CLOCK = ROOT / "scripts" / "skewed_clock"  # a sitecustomize that shifts a worker's wall clock
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
        self.skews = 0

    def close(self) -> None:
        self.stack.stop()
        if self.redis is not None:
            self.redis.stop()
        if self.database:
            import psycopg

            with psycopg.connect(POSTGRES_URL, autocommit=True) as connection:
                connection.execute(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')

    def start_worker(self, env: dict[str, str] | None = None) -> None:
        self.workers += 1
        self.stack.start_worker_with(f"worker{self.workers}", env=env)

    def live_workers(self) -> list[str]:
        return [name for name in self.stack.processes if name.startswith("worker")]

    def inject(self) -> None:
        fault = self.random.choice(["kill", "kill", "term", "broker", "db", "clock"])
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
        elif fault == "clock":
            if not self.database:
                fault = "clock (skipped: SQLite shares one host's clock)"
            elif workers:
                self.skews += 1
                path = os.pathsep.join(filter(None, [str(SKEWED_CLOCK), os.environ.get("PYTHONPATH", "")]))
                self.stack.kill(self.random.choice(workers), signal.SIGTERM)
                self.start_worker({"PYTHONPATH": path, "KGB_SKEW_CLOCK_S": "-1200" if self.skews % 2 else "1200"})
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
        """Counts read straight from the deployment's database (a query, not a Django process per poll)."""
        sql = "SELECT r.kernel_id, r.chip_id, r.status, r.attempts FROM evaluation_run r"
        if self.database:
            import psycopg

            with psycopg.connect(POSTGRES_URL.rsplit("/", 1)[0] + "/" + self.database) as connection:
                rows = connection.execute(sql).fetchall()
                kernels = connection.execute("SELECT COUNT(*) FROM leaderboard_kernel").fetchone()[0]
        else:
            import sqlite3

            connection = sqlite3.connect(self.folder / "db.sqlite3", timeout=60)
            try:
                rows = connection.execute(sql).fetchall()
                kernels = connection.execute("SELECT COUNT(*) FROM leaderboard_kernel").fetchone()[0]
            finally:
                connection.close()
        pairs = Counter((kernel, chip) for kernel, chip, _, _ in rows)
        statuses = Counter(status for _, _, status, _ in rows)
        unfinished = statuses["queued"] + statuses["running"]
        return {
            "kernels": kernels,
            "runs": len(rows),
            "kernels_with_runs": len({kernel for kernel, _, _, _ in rows}),
            "doubled": sum(n - 1 for n in pairs.values() if n > 1),
            "unfinished": unfinished,
            "finished": len(rows) - unfinished,
            "max_attempts": max([attempts for _, _, _, attempts in rows] or [0]),
            "statuses": dict(statuses),
        }

    def run(self) -> int:
        started = time.monotonic()
        self.stack.prepare()
        self.stack.start_site()
        for _ in range(self.args.workers):
            self.start_worker()
        session = self.stack.login()
        uploaded, next_fault, next_report = 0, self.args.fault_every, 50
        progress_at, finished_before = time.monotonic(), -1
        while True:
            tally = self.tally()
            if tally["finished"] != finished_before:
                progress_at, finished_before = time.monotonic(), tally["finished"]
            if uploaded >= self.args.runs and tally["runs"] >= uploaded and not tally["unfinished"]:
                break
            if time.monotonic() - progress_at > self.args.stall:
                break  # nothing judged for that long: what is left unfinished is stuck
            if tally["finished"] >= next_report:
                print(
                    f"{time.monotonic() - started:.0f} s: {uploaded} uploaded, {tally['finished']} judged, "
                    f"faults {self.faults}",
                    flush=True,
                )
                next_report += 50
            if tally["finished"] >= next_fault and (uploaded < self.args.runs or tally["unfinished"]):
                self.inject()
                next_fault += self.args.fault_every
            room = min(self.args.runs - uploaded, self.args.ahead - (uploaded - tally["finished"]))
            for _ in range(max(0, min(room, 5))):
                index = uploaded
                kernel = KERNELS / ("aten__cos_wrong.py" if index % 5 == 4 else "aten__cos_correct.py")
                try:
                    submission, _ = self.stack.upload(session, kernel, scaffold=f"Soak {index % 7}")
                except Exception as exc:  # a refused or broken request is a lost run, counted as such
                    print(f"upload {index} failed: {exc!r}", flush=True)
                    submission = 0
                uploaded += 1
                if not submission:
                    print(f"upload {index} made no submission", flush=True)
            if room <= 0:
                time.sleep(2.0)
        tally = self.tally()
        lost = self.args.runs - tally["kernels_with_runs"]
        doubled, stuck = tally["doubled"], tally["unfinished"]
        print(
            f"config {self.args.config}, {self.args.workers} workers on one queue, a fault every "
            f"{self.args.fault_every} judged runs: faults {self.faults}, statuses {tally['statuses']}, most "
            f"attempts of a run {tally['max_attempts']}, {time.monotonic() - started:.0f} s",
            flush=True,
        )
        print(f"{self.args.runs} runs, {lost} lost, {doubled} doubled, {stuck} stuck", flush=True)
        return 0 if lost == doubled == stuck == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--config", choices=["embedded", "postgres-redis"], default="embedded")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--fault-every", type=int, default=10, help="judged runs between injected faults")
    parser.add_argument("--ahead", type=int, default=30, help="most runs uploaded and not yet judged")
    parser.add_argument("--stall", type=float, default=600.0, help="seconds without a judged run: the rest is stuck")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.config == "postgres-redis" and shutil.which("redis-server") is None:
        parser.error("postgres-redis needs redis-server on PATH (apt-get install -y redis-server)")
    folder = Path(tempfile.mkdtemp(prefix="kgb-soak-"))
    # A soak started in the background (nohup ... &) ignores SIGINT: SIGTERM must still take the deployment
    # down with it (its processes, its database, its folder).
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    soak = Soak(args, folder)
    try:
        return soak.run()
    finally:
        soak.close()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

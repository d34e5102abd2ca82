"""Server time of every board, plot and export page on a synthetic history, on SQLite and PostgreSQL.

Fills a fresh database with a history shaped like a busy site's: methods that submit many times (rounds of
Pass@K, kernels for one chip or for none, some private), kernels judged on their chip and some ported to
another, re-judgements, operators whose definitions were bumped and runs of an older judge version, a few
runs still queued. Kernels and runs are written with COPY (PostgreSQL) or executemany (SQLite), then the
best-verdict summary is rebuilt from them (``leaderboard.best_verdicts.rebuild``, as the data migration
does). Each page is then timed through Django's test client (URL routing, middleware, selectors, template
rendering; no network): cold with the boards' memo cleared, warm with it kept. Prints one table and ends
with ``slowest cold page: N ms``.

    .venv/bin/python scripts/bench_leaderboard.py                                   # both, 63,000 runs
    .venv/bin/python scripts/bench_leaderboard.py --databases sqlite --runs 200000
    .venv/bin/python scripts/bench_leaderboard.py --databases postgresql --runs 1000000
    .venv/bin/python scripts/bench_leaderboard.py --databases postgresql --runs 1000000 --keep
    .venv/bin/python scripts/bench_leaderboard.py --databases postgresql --reuse kgb_bench_1a2b3c4d

PostgreSQL: postgres://postgres@127.0.0.1:5432 with trust auth (KGB_BENCH_POSTGRES); a fresh database
``kgb_bench_<hex>`` is created and dropped afterwards, or kept with ``--keep`` (its name is printed, the
fill's figures stored as the database's comment). ``--reuse NAME`` times a kept database again without
refilling: it migrates it first (new indexes and columns), and with ``--rebuild`` rebuilds the summary from
its runs (after a change to what the summary keeps); the database is kept.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POSTGRES_SERVER = os.environ.get("KGB_BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432")
TARGET_MS = 100.0
CHIPS = [
    ("nvidia-h200", "NVIDIA H200", True),
    ("platform-a", "Platform A", False),
    ("platform-b", "Platform B", False),
    ("platform-c", "Platform C", False),
    ("platform-d", "Platform D", False),
    ("platform-e", "Platform E", False),
]
HISTORY_START = datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
HISTORY_DAYS = 300
FLUSH_RUNS = 20_000  # rows written per transaction


class TableWriter:
    """Rows straight into a table: COPY on PostgreSQL, executemany on SQLite (both far faster than the ORM)."""

    def __init__(self, model, columns: list[str]) -> None:
        from django.db import connection

        self.connection = connection
        self.table = model._meta.db_table
        self.columns = [model._meta.get_field(name).column for name in columns]

    def write(self, rows: list[tuple]) -> None:
        if not rows:
            return
        quoted = ", ".join(self.connection.ops.quote_name(column) for column in self.columns)
        with self.connection.cursor() as cursor:
            if self.connection.vendor == "postgresql":
                with cursor.cursor.copy(
                    f"COPY {self.connection.ops.quote_name(self.table)} ({quoted}) FROM STDIN"
                ) as copy:
                    for row in rows:
                        copy.write_row(row)
            else:
                marks = ", ".join("?" for _ in self.columns)
                cursor.cursor.executemany(
                    f"INSERT INTO {self.table} ({quoted}) VALUES ({marks})",
                    [tuple(_sqlite_value(value) for value in row) for row in rows],
                )


def _sqlite_value(value):
    if isinstance(value, datetime.datetime):  # as Django stores it: naive UTC text
        return value.astimezone(datetime.UTC).replace(tzinfo=None).isoformat(sep=" ")
    return value


SUBMISSION_COLUMNS = ["id", "owner", "method", "target_chip", "visibility", "notes", "created_at"]
KERNEL_COLUMNS = [
    "id",
    "submission",
    "operator",
    "source_code",
    "sha256",
    "filename",
    "input_tokens",
    "output_tokens",
    "cache_creation_tokens",
    "cache_read_tokens",
    "total_tokens",
    "solve_seconds",
    "round",
    "created_at",
]
RUN_COLUMNS = [
    "id",
    "kernel",
    "chip",
    "operator_version",
    "judge_version",
    "status",
    "reason",
    "cases_total",
    "cases_passed",
    "failed_case",
    "case_results",
    "checks",
    "speedup",
    "speedup_ci_low",
    "speedup_ci_high",
    "protocol_speedup",
    "protocol_speedup_ci_low",
    "protocol_speedup_ci_high",
    "protocol_launch_bound_share",
    "flagged",
    "environment",
    "stage_seconds",
    "worker",
    "worker_pid",
    "lease",
    "attempts",
    "created_at",
    "queued_at",
    "started_at",
    "finished_at",
]
CHECKS = json.dumps(
    [
        {"name": "static_scan", "outcome": "passed", "detail": ""},
        {"name": "inputs_unchanged", "outcome": "passed", "detail": ""},
        {"name": "triton_launched", "outcome": "passed", "detail": "2 launches"},
    ]
)
ENVIRONMENT = json.dumps({"device": "synthetic", "torch": "2.11.0", "triton": "3.6.0", "driver": "580.159.04"})
STAGES = json.dumps({"start": 0.06, "compile": 1.9, "correctness": 2.4, "timing": 6.1})


def _cases(rng: random.Random, passed: bool, speedup: float | None) -> tuple[int, int, str]:
    """A run's per-case results: timed public cases with roofline floors when it passed, fewer when not."""
    count = 6 if passed else 3
    cases = []
    for index in range(count):
        candidate = rng.uniform(0.02, 5.0)
        cases.append(
            {
                "case_id": f"c{index}",
                "tier": "public",
                "passed": passed or index < count - 1,
                "reference_ms": round(candidate * (speedup or 1.0), 5),
                "candidate_ms": round(candidate, 5),
                "speedup": round(speedup, 4) if speedup else None,
                "roofline_floor_ms": round(candidate * rng.uniform(0.05, 0.9), 5),
            }
        )
    return count, count if passed else count - 1, json.dumps(cases)


def fill(*, runs: int, methods: int, operators: int, chips: int, seed: int = 42) -> dict:
    """A history of about ``runs`` runs (see the module's docstring); deterministic for a seed."""
    from django.contrib.auth.models import User
    from django.core.management.color import no_style
    from django.db import connection, transaction

    from evaluation.judge.version import JUDGE_VERSION
    from evaluation.models import Chip, DeviceType, Run, RunStatus
    from leaderboard.models import Kernel, Method, MethodKind, Operator, OperatorSet, Submission, Visibility

    rng = random.Random(seed)
    owners = User.objects.bulk_create([User(username=f"bench{i}", password="!") for i in range(10)])
    chip_objects = [
        Chip.objects.create(
            slug=slug,
            display_name=name,
            public_alias=name if not ref else "",
            device_type=DeviceType.CUDA,
            is_reference_platform=ref,
            timings_meaningful=True,
        )
        for slug, name, ref in CHIPS[:chips]
    ]
    reference = chip_objects[0]
    sources = ["aten"] * round(operators * 110 / 210) + ["vllm"] * round(operators * 50 / 210)
    sources += ["cublas"] * (operators - len(sources))
    # Operator definitions bumped during the history: a run carries the version current when it was judged.
    bumps = [sorted(rng.random() for _ in range(rng.choices((0, 1, 2), (70, 20, 10))[0])) for _ in sources]
    ops = Operator.objects.bulk_create(
        [
            Operator(
                operator_id=f"{'vllm13' if s == 'vllm' else s}::op{i}",
                source=s,
                name=f"op{i}",
                in_mc=s == "aten",
                entry_points=[{"name": f"op{i}"}],
                description="synthetic",
                version=1 + len(bumps[i]),
            )
            for i, s in enumerate(sources)
        ]
    )
    ms = OperatorSet.objects.create(slug="kgb-ms", title="KernelGenBench-MS", builtin=True, position=1)
    mc = OperatorSet.objects.create(slug="kgb-mc", title="KernelGenBench-MC", builtin=True, position=2)
    curated = OperatorSet.objects.create(slug="curated", title="Curated 40", position=10)
    ms.operators.set(ops)
    mc.operators.set([op for op in ops if op.in_mc])
    curated.operators.set(ops[:40])
    kinds = [MethodKind.AGENT, MethodKind.PASS_AT_K, MethodKind.SINGLE_SHOT]
    private_methods = max(1, methods // 10)
    method_objects = Method.objects.bulk_create(
        [
            Method(
                scaffold=f"Scaffold {i % 10}",
                model=f"Model-{i}",
                kind=kinds[i % 3],
                owner=owners[i % len(owners)],
                public=i < methods,
            )
            for i in range(methods + private_methods)
        ]
    )
    skill = {method.pk: rng.uniform(0.2, 0.9) for method in method_objects}
    hardness = {chip.pk: (1.0 if chip.is_reference_platform else rng.uniform(0.3, 0.9)) for chip in chip_objects}
    failures = [RunStatus.FAILED_CORRECTNESS, RunStatus.FAILED_COMPILE, RunStatus.FAILED_RUNTIME, RunStatus.TIMEOUT]
    submission_writer = TableWriter(Submission, SUBMISSION_COLUMNS)
    kernel_writer, run_writer = TableWriter(Kernel, KERNEL_COLUMNS), TableWriter(Run, RUN_COLUMNS)
    submission_rows: list[tuple] = []
    kernel_rows: list[tuple] = []
    run_rows: list[tuple] = []
    counts = {"runs": 0, "kernels": 0, "submissions": 0, "rejudged": 0, "ported": 0, "unfinished": 0, "private": 0}

    def flush() -> None:
        with transaction.atomic():
            submission_writer.write(submission_rows)
            kernel_writer.write(kernel_rows)
            run_writer.write(run_rows)
        submission_rows.clear()
        kernel_rows.clear()
        run_rows.clear()

    def run_row(kernel_id: int, submission: Submission, op_index: int, chip: Chip, at: float, ported: bool) -> None:
        counts["runs"] += 1
        when = HISTORY_START + datetime.timedelta(days=HISTORY_DAYS * at)
        version = 1 + sum(1 for bump in bumps[op_index] if bump < at)
        unfinished = at > 0.995 and rng.random() < 0.5
        chance = skill[submission.method_id] * hardness[chip.pk] * (0.6 if ported else 1.0)
        passed = not unfinished and rng.random() < chance
        speedup = rng.lognormvariate(-0.2, 0.6) if passed else None
        if unfinished:
            counts["unfinished"] += 1
            status = rng.choice([RunStatus.QUEUED, RunStatus.RUNNING])
        elif passed:
            status = RunStatus.PASSED
        else:
            status = RunStatus.ERROR if rng.random() < 0.02 else rng.choice(failures)
        total, good, cases = _cases(rng, passed, speedup) if not unfinished else (0, 0, "[]")
        # The protocol speedup (call latency, launch cost included) of the runs a current judge made; the older
        # ones have none, as on a site judged before it. Derived, not drawn: the history's draws are as before.
        protocol = speedup * 0.85 if speedup and at >= 0.4 else None
        # Its launch-bound share, as on the H200 (most ATen and vLLM cases; cuBLAS's loop has no flush: none).
        # Derived from the speedup's digits, not drawn, for the same reason.
        launch_bound = (
            None if protocol is None or ops[op_index].source == "cublas" else 0.5 + 0.5 * ((speedup * 1000) % 1.0)
        )
        finished = None if unfinished else when + datetime.timedelta(seconds=rng.uniform(5, 600))
        run_rows.append(
            (
                counts["runs"],
                kernel_id,
                chip.pk,
                version,
                None if unfinished else (JUDGE_VERSION - 1 if at < 0.4 and JUDGE_VERSION > 1 else JUDGE_VERSION),
                status,
                "" if passed or unfinished else "c2: wrong result (max abs error 0.5 > atol 1e-05)",
                total,
                good,
                None,
                cases,
                CHECKS if not unfinished else "[]",
                speedup,
                speedup * 0.97 if speedup else None,
                speedup * 1.03 if speedup else None,
                protocol,
                protocol * 0.97 if protocol else None,
                protocol * 1.03 if protocol else None,
                launch_bound,
                passed and rng.random() < 0.01,
                ENVIRONMENT if not unfinished else "{}",
                STAGES if not unfinished else "{}",
                "celery@bench" if status != RunStatus.QUEUED else "",
                None,
                "",
                0 if status == RunStatus.QUEUED else 1,
                when,
                when,
                None if status == RunStatus.QUEUED else when,
                finished,
            )
        )

    kernel_id = 0
    while counts["runs"] < runs:
        at = counts["runs"] / runs  # where in the history this submission lands
        method = rng.choice(method_objects)
        target = rng.choices([None, reference, *chip_objects[1:]], [20, 40, *([40 / max(1, chips - 1)] * (chips - 1))])[
            0
        ]
        private = not method.public or rng.random() < 0.1
        counts["private"] += private
        counts["submissions"] += 1
        submission = Submission(id=counts["submissions"], owner_id=method.owner_id, method=method, target_chip=target)
        submission_rows.append(
            (
                submission.pk,
                method.owner_id,
                method.pk,
                target.pk if target else None,
                Visibility.PRIVATE if private else Visibility.PUBLIC,
                "",
                HISTORY_START + datetime.timedelta(days=HISTORY_DAYS * at),
            )
        )
        chosen = (
            range(len(ops))
            if rng.random() < 0.3
            else sorted(rng.sample(range(len(ops)), min(len(ops), rng.randint(10, 80))))
        )
        rounds = 3 if method.kind == MethodKind.PASS_AT_K else 1
        for op_index in chosen:
            for round_number in range(1, rounds + 1):
                kernel_id += 1
                counts["kernels"] += 1
                tokens = rng.randint(10_000, 3_000_000)
                kernel_rows.append(
                    (
                        kernel_id,
                        submission.pk,
                        ops[op_index].pk,
                        "# synthetic\n",
                        "0" * 64,
                        f"{ops[op_index].operator_id.replace('::', '__')}.py",
                        tokens // 2,
                        tokens // 2,
                        None,
                        None,
                        tokens,
                        rng.uniform(60, 1800),
                        round_number,
                        HISTORY_START + datetime.timedelta(days=HISTORY_DAYS * at),
                    )
                )
                judged_on = [target] if target else [reference, rng.choice(chip_objects[1:] or [reference])]
                for chip in dict.fromkeys(judged_on):
                    run_row(kernel_id, submission, op_index, chip, at, ported=False)
                    if rng.random() < 0.2:  # judged again later (a re-run, or a newer judge)
                        counts["rejudged"] += 1
                        run_row(kernel_id, submission, op_index, chip, min(0.999, at + rng.uniform(0, 0.3)), False)
                if target and chips > 1 and rng.random() < 0.15:  # tried on a chip it was not written for
                    counts["ported"] += 1
                    other = rng.choice([chip for chip in chip_objects if chip != target])
                    run_row(kernel_id, submission, op_index, other, at, ported=True)
        if len(run_rows) >= FLUSH_RUNS:
            flush()
    flush()
    with connection.cursor() as cursor:
        for statement in connection.ops.sequence_reset_sql(no_style(), [Submission, Kernel, Run]):
            cursor.execute(statement)
    return {
        **counts,
        "methods": methods,
        "private_methods": private_methods,
        "operators": len(ops),
        "chips": len(chip_objects),
        "method_pk": method_objects[0].pk,
        "operator_id": ops[0].operator_id,
    }


def pages(facts: dict) -> list[tuple[str, str]]:
    method, operator = facts["method_pk"], facts["operator_id"]
    return [
        ("multi-source (/)", "/?chip=nvidia-h200&set=kgb-ms"),
        ("multi-source, sorted + filtered", "/?chip=platform-c&set=kgb-ms&sort=-aten.speedup&kind=agent"),
        ("curated set", "/sets/curated/?chip=nvidia-h200"),
        ("multi-chip (6 chips, MC)", "/boards/multi-chip/?set=kgb-mc"),
        ("cost", "/boards/cost/?chip=nvidia-h200&set=kgb-ms"),
        ("matched-set speedup", "/boards/matched/?chip=nvidia-h200&set=kgb-ms&model=Model-1"),
        ("matched-set speedup, all", "/boards/matched/?chip=nvidia-h200&set=kgb-ms"),
        ("matched-set, protocol speedup", "/boards/matched/?chip=nvidia-h200&set=kgb-ms&figure=protocol"),
        ("portability + pass matrix", f"/boards/portability/?set=kgb-mc&method={method}"),
        ("plots (8 figures)", "/plots/?chip=nvidia-h200&set=kgb-ms"),
        ("method page", f"/methods/{method}/"),
        ("operator page", f"/operators/{operator}/"),
        ("export: multi-source CSV", "/?chip=nvidia-h200&set=kgb-ms&format=csv"),
        ("export: multi-source JSON", "/?chip=nvidia-h200&set=kgb-ms&format=json"),
        ("export: multi-chip CSV", "/boards/multi-chip/?set=kgb-mc&format=csv"),
        ("export: cost CSV", "/boards/cost/?chip=nvidia-h200&set=kgb-ms&format=csv"),
        ("export: matched JSON", "/boards/matched/?chip=nvidia-h200&set=kgb-ms&format=json"),
        ("API leaderboard JSON", "/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&format=json"),
        ("API leaderboard CSV", "/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&format=csv"),
        ("API leaderboard + operators", "/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&operators=1&format=json"),
    ]


def child(args: argparse.Namespace) -> None:
    """Runs inside a fresh process whose DATABASE_URL points at an empty database."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgbweb.settings")
    django.setup()
    from django.conf import settings

    # Static URLs from the source folders, as the tests have them: no collectstatic needed before a bench.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from leaderboard import best_verdicts, selectors
    from leaderboard.models import BestVerdict

    call_command("migrate", verbosity=0)
    if args.reuse:  # filled by an earlier --keep: its figures are the database's comment
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = current_database()"
            )
            facts = json.loads(cursor.fetchone()[0])
    else:
        started = time.perf_counter()
        facts = fill(runs=args.runs, methods=args.methods, operators=args.operators, chips=args.chips)
        with connection.cursor() as cursor:  # statistics, as a database in service has them
            cursor.execute("ANALYZE")
        facts["write_s"] = round(time.perf_counter() - started, 1)
    if not args.reuse or args.rebuild:
        started = time.perf_counter()
        facts["summary_rows"] = best_verdicts.rebuild()
        facts["summary_s"] = round(time.perf_counter() - started, 1)
    with connection.cursor() as cursor:  # statistics (and PostgreSQL's visibility map) as a settled database has
        cursor.execute("VACUUM ANALYZE" if connection.vendor == "postgresql" else "ANALYZE")
    facts["fill_s"] = round(facts["write_s"] + facts["summary_s"], 1)
    assert BestVerdict.objects.count() == facts["summary_rows"]
    if args.keep and not args.reuse:
        with connection.cursor() as cursor:
            comment = connection.ops.quote_name(connection.settings_dict["NAME"])
            cursor.execute(f"COMMENT ON DATABASE {comment} IS %s", [json.dumps(facts)])
    client = Client()
    results = []
    for _, url in pages(facts):  # imports, templates and the connection, once: the timings are the data's
        client.get(url)
    facts["load_before"] = os.getloadavg()[0]
    for name, url in pages(facts):
        cold, warm, cold_cpu = [], [], []
        for _ in range(args.repeat):
            for timings in (cold, warm):  # cold: the boards' memoised figures cleared first; warm: kept
                if timings is cold:
                    selectors.clear_board_memo()
                start, start_cpu = time.perf_counter(), time.process_time()
                response = client.get(url)
                if getattr(response, "streaming", False):
                    b"".join(response.streaming_content)
                timings.append((time.perf_counter() - start) * 1000)
                if timings is cold:
                    cold_cpu.append((time.process_time() - start_cpu) * 1000)
                if response.status_code != 200:
                    raise SystemExit(f"{url}: HTTP {response.status_code}")
        results.append(
            {
                "page": name,
                "url": url,
                "cold_ms": statistics.median(cold),
                "warm_ms": statistics.median(warm),
                "cold_cpu_ms": statistics.median(cold_cpu),
            }
        )
    facts["load_after"] = os.getloadavg()[0]
    print("RESULT " + json.dumps({"facts": facts, "results": results}))


def run_backend(backend: str, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as data_dir:
        env = {
            **os.environ,
            "KGB_DATA_DIR": data_dir,
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_hex(16),
            "DJANGO_SETTINGS_MODULE": "kgbweb.settings",
            "CELERY_BROKER_URL": "memory://",
        }
        database = None
        if backend == "sqlite":
            env["DATABASE_URL"] = f"sqlite:///{data_dir}/bench.sqlite3"
        elif args.reuse:
            env["DATABASE_URL"] = f"{POSTGRES_SERVER}/{args.reuse}"
        else:
            import psycopg

            database = "kgb_bench_" + secrets.token_hex(4)
            with psycopg.connect(POSTGRES_SERVER + "/postgres", autocommit=True) as connection:
                connection.execute(f'CREATE DATABASE "{database}"')
            env["DATABASE_URL"] = f"{POSTGRES_SERVER}/{database}"
        try:
            command = [sys.executable, __file__, "--child"]
            for option in ("runs", "methods", "operators", "chips", "repeat"):
                command += [f"--{option}", str(getattr(args, option))]
            command += ["--keep"] if args.keep else []
            command += ["--reuse", args.reuse] if args.reuse else []
            command += ["--rebuild"] if args.rebuild else []
            completed = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
            line = next((ln for ln in completed.stdout.splitlines() if ln.startswith("RESULT ")), None)
            if line is None:
                raise SystemExit(f"{backend} failed:\n{completed.stdout}\n{completed.stderr}")
            return json.loads(line[len("RESULT ") :])
        finally:
            if database and args.keep:
                print(f"kept database {database} (time it again with --reuse {database})")
            elif database:
                import psycopg

                with psycopg.connect(POSTGRES_SERVER + "/postgres", autocommit=True) as connection:
                    connection.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--databases", default="sqlite,postgresql", help="comma-separated: sqlite, postgresql")
    parser.add_argument("--runs", type=int, default=63_000, help="about this many runs in the history")
    parser.add_argument("--methods", type=int, default=50, help="public methods (a tenth as many private ones)")
    parser.add_argument("--operators", type=int, default=210)
    parser.add_argument("--chips", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the filled PostgreSQL database; print its name")
    parser.add_argument("--reuse", metavar="NAME", help="time a PostgreSQL database kept by --keep, not refilled")
    parser.add_argument("--rebuild", action="store_true", help="with --reuse: rebuild the summary from the runs")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    only_postgresql = args.databases.strip() in ("postgresql", "postgres", "pg")
    if (args.reuse or args.keep) and not args.child and not only_postgresql:
        parser.error("--keep and --reuse are for one PostgreSQL database: pass --databases postgresql")
    if args.reuse and not args.reuse.replace("_", "").isalnum():
        parser.error(f"--reuse: {args.reuse!r} is not a database name this script makes")
    sys.path.insert(0, str(ROOT))
    if args.child:
        child(args)
        return
    aliases = {"postgres": "postgresql", "pg": "postgresql"}
    backends = [aliases.get(name.strip(), name.strip()) for name in args.databases.split(",") if name.strip()]
    figures = {backend: run_backend(backend, args) for backend in backends}
    for backend in backends:
        facts = figures[backend]["facts"]
        print(
            f"{backend}: {facts['runs']:,} runs ({facts['unfinished']:,} unfinished, {facts['rejudged']:,} "
            f"re-judgements, {facts['ported']:,} ported), {facts['kernels']:,} kernels, {facts['submissions']:,} "
            f"submissions ({facts['private']:,} private) of {facts['methods']} public + {facts['private_methods']} "
            f"private methods, {facts['operators']} operators, {facts['chips']} chips; {facts['summary_rows']:,} "
            f"summary rows"
        )
        print(
            f"{backend}: fill {facts['fill_s']} s (rows written {facts['write_s']} s, summary rebuilt "
            f"{facts['summary_s']} s)"
        )
    loads = ", ".join(
        f"{b} {figures[b]['facts']['load_before']:.1f} to {figures[b]['facts']['load_after']:.1f}" for b in backends
    )
    print(f"machine: {os.cpu_count()} cores, load average while timing: {loads}")
    print(f"median of {args.repeat} requests; target {TARGET_MS:.0f} ms cold ('!' = over)")
    print("cold = the boards' memo cleared first; warm = memoised (data unchanged since); cpu = the cold")
    print("request's processor time in the site's process (not the database's): what a loaded machine stretches")
    header = f"{'page':<34}" + "".join(f"{b + ' cold':>20}{b + ' warm':>18}{'cpu':>9}" for b in backends)
    print(header)
    print("-" * len(header))
    for index, result in enumerate(figures[backends[0]]["results"]):
        cells = ""
        for backend in backends:
            row = figures[backend]["results"][index]
            for figure, width in (("cold_ms", 17), ("warm_ms", 15), ("cold_cpu_ms", 6)):
                flag = "!" if figure == "cold_ms" and row[figure] > TARGET_MS else " "
                cells += f"{row[figure]:>{width}.0f} ms{flag}"
        print(f"{result['page']:<34}{cells}")
    slowest = {backend: max(figures[backend]["results"], key=lambda r: r["cold_ms"]) for backend in backends}
    if len(backends) > 1:
        for backend, row in slowest.items():
            print(f"slowest cold page on {backend}: {row['cold_ms']:.0f} ms ({row['page']})")
    worst = max(slowest.values(), key=lambda r: r["cold_ms"])
    print(f"slowest cold page: {worst['cold_ms']:.0f} ms")


if __name__ == "__main__":
    main()

"""Server time of each leaderboard page on a synthetic benchmark-sized database, on SQLite and PostgreSQL.

Fills a fresh database with 50 methods x 210 operators x 6 chips (one kernel and one finished run per
method, operator and chip: 63,000 runs, bulk-created), then times each page through Django's test client
(URL routing, middleware, selectors, template rendering; no network). Prints one table of figures.

    .venv/bin/python scripts/bench_leaderboard.py                  # both databases
    .venv/bin/python scripts/bench_leaderboard.py --databases sqlite --methods 10

PostgreSQL: postgres://postgres@127.0.0.1:5432 with trust auth; a fresh database is created and dropped.
"""

from __future__ import annotations

import argparse
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
TARGET_MS = 200.0
CHIPS = [
    ("nvidia-h200", "NVIDIA H200", True),
    ("platform-a", "Platform A", False),
    ("platform-b", "Platform B", False),
    ("platform-c", "Platform C", False),
    ("platform-d", "Platform D", False),
    ("platform-e", "Platform E", False),
]


def fill(*, methods: int, operators: int, chips: int, seed: int = 42) -> dict:
    """Synthetic but shaped like the real thing: per-method skill, per-chip difficulty, log-normal speedups."""
    from django.contrib.auth.models import User

    from evaluation.models import Chip, DeviceType, Run, RunStatus
    from leaderboard.models import Kernel, Method, MethodKind, Operator, OperatorSet, Submission

    rng = random.Random(seed)
    owner = User.objects.create_user("bench", password=None)
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
    sources = ["aten"] * round(operators * 110 / 210) + ["vllm"] * round(operators * 50 / 210)
    sources += ["cublas"] * (operators - len(sources))
    ops = Operator.objects.bulk_create(
        [
            Operator(
                operator_id=f"{'vllm13' if s == 'vllm' else s}::op{i}",
                source=s,
                name=f"op{i}",
                in_mc=s == "aten",
                entry_points=[{"name": f"op{i}"}],
                description="synthetic",
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
    method_objects = Method.objects.bulk_create(
        [
            Method(scaffold=f"Scaffold {i % 10}", model=f"Model-{i}", kind=kinds[i % 3], owner=owner)
            for i in range(methods)
        ]
    )
    submissions = Submission.objects.bulk_create(
        [Submission(owner=owner, method=method, target_chip=chip) for method in method_objects for chip in chip_objects]
    )
    kernels = Kernel.objects.bulk_create(
        [
            Kernel(
                submission=submission,
                operator=op,
                source_code="# synthetic\n",
                sha256="0" * 64,
                total_tokens=rng.randint(10_000, 3_000_000),
                solve_seconds=rng.uniform(60, 1800),
            )
            for submission in submissions
            for op in ops
        ],
        batch_size=5000,
    )
    skill = {method.pk: rng.uniform(0.2, 0.9) for method in method_objects}
    hardness = {chip.pk: (1.0 if chip.is_reference_platform else rng.uniform(0.3, 0.9)) for chip in chip_objects}
    submission_by_pk = {submission.pk: submission for submission in submissions}
    failures = [RunStatus.FAILED_CORRECTNESS, RunStatus.FAILED_COMPILE, RunStatus.FAILED_RUNTIME, RunStatus.TIMEOUT]
    runs = []
    for kernel in kernels:
        submission = submission_by_pk[kernel.submission_id]
        passed = rng.random() < skill[submission.method_id] * hardness[submission.target_chip_id]
        speedup = rng.lognormvariate(-0.2, 0.6) if passed else None
        runs.append(
            Run(
                kernel=kernel,
                chip_id=submission.target_chip_id,
                operator_version=1,
                status=RunStatus.PASSED if passed else rng.choice(failures),
                speedup=speedup,
                cases_total=10,
                cases_passed=10 if passed else 3,
                case_results=[
                    {
                        "case_id": "c0",
                        "candidate_ms": 1.0,
                        "roofline_floor_ms": rng.uniform(0.05, 0.9),
                        "reference_ms": speedup or 1.0,
                        "speedup": speedup,
                        "passed": passed,
                    }
                ],
            )
        )
    Run.objects.bulk_create(runs, batch_size=5000)
    return {
        "runs": len(runs),
        "kernels": len(kernels),
        "methods": len(method_objects),
        "operators": len(ops),
        "chips": len(chip_objects),
        "method_pk": method_objects[0].pk,
        "operator_id": ops[0].operator_id,
    }


def pages(facts: dict) -> list[tuple[str, str]]:
    return [
        ("multi-source (/)", "/?chip=nvidia-h200&set=kgb-ms"),
        ("multi-source, sorted + filtered", "/?chip=platform-c&set=kgb-ms&sort=-aten.speedup&kind=agent"),
        ("multi-chip (6 chips, MC)", "/boards/multi-chip/?set=kgb-mc"),
        ("cost", "/boards/cost/?chip=nvidia-h200&set=kgb-ms"),
        ("matched-set speedup", "/boards/matched/?chip=nvidia-h200&set=kgb-ms&model=Model-1"),
        ("portability + pass matrix", f"/boards/portability/?set=kgb-mc&method={facts['method_pk']}"),
        ("curated set", "/sets/curated/?chip=nvidia-h200"),
        ("plots (6 figures)", "/plots/?chip=nvidia-h200&set=kgb-ms"),
        ("operator page", f"/operators/{facts['operator_id']}/"),
        ("method page", f"/methods/{facts['method_pk']}/"),
    ]


def child(args: argparse.Namespace) -> None:
    """Runs inside a fresh process whose DATABASE_URL points at an empty database."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kgbweb.settings")
    django.setup()
    from django.core.management import call_command
    from django.test import Client

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    facts = fill(methods=args.methods, operators=args.operators, chips=args.chips)
    facts["fill_s"] = round(time.perf_counter() - started, 1)
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    client = Client()
    results = []
    from leaderboard import selectors

    client.get("/")  # load templates and open the connection once
    for name, url in pages(facts):
        cold, warm = [], []
        for _ in range(args.repeat):
            for timings in (cold, warm):  # cold: the boards' memoised outcomes cleared first; warm: kept
                if timings is cold:
                    selectors.clear_board_memo()
                start = time.perf_counter()
                response = client.get(url)
                timings.append((time.perf_counter() - start) * 1000)
                if response.status_code != 200:
                    raise SystemExit(f"{url}: HTTP {response.status_code}")
        results.append(
            {"page": name, "url": url, "cold_ms": statistics.median(cold), "warm_ms": statistics.median(warm)}
        )
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
        else:
            import psycopg

            database = "kgb_bench_" + secrets.token_hex(4)
            with psycopg.connect(POSTGRES_SERVER + "/postgres", autocommit=True) as connection:
                connection.execute(f'CREATE DATABASE "{database}"')
            env["DATABASE_URL"] = f"{POSTGRES_SERVER}/{database}"
        try:
            command = [
                sys.executable,
                __file__,
                "--child",
                "--methods",
                str(args.methods),
                "--operators",
                str(args.operators),
                "--chips",
                str(args.chips),
                "--repeat",
                str(args.repeat),
            ]
            completed = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
            line = next((ln for ln in completed.stdout.splitlines() if ln.startswith("RESULT ")), None)
            if line is None:
                raise SystemExit(f"{backend} failed:\n{completed.stdout}\n{completed.stderr}")
            return json.loads(line[len("RESULT ") :])
        finally:
            if database:
                import psycopg

                with psycopg.connect(POSTGRES_SERVER + "/postgres", autocommit=True) as connection:
                    connection.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--databases", default="sqlite,postgres")
    parser.add_argument("--methods", type=int, default=50)
    parser.add_argument("--operators", type=int, default=210)
    parser.add_argument("--chips", type=int, default=6)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    if args.child:
        child(args)
        return
    figures = {backend: run_backend(backend, args) for backend in args.databases.split(",")}
    backends = list(figures)
    facts = next(iter(figures.values()))["facts"]
    print(
        f"{facts['runs']} runs = {facts['methods']} methods x {facts['operators']} operators x {facts['chips']} "
        f"chips; median of {args.repeat} requests; target {TARGET_MS:.0f} ms ('!' = over)"
    )
    print("cold = board outcomes computed from the database; warm = memoised (data unchanged since)")
    print("fill time: " + ", ".join(f"{b} {figures[b]['facts']['fill_s']} s" for b in backends))
    header = f"{'page':<34}" + "".join(f"{b + ' cold':>18}{b + ' warm':>16}" for b in backends)
    print(header)
    print("-" * len(header))
    for index, result in enumerate(figures[backends[0]]["results"]):
        cells = ""
        for backend in backends:
            row = figures[backend]["results"][index]
            for figure, width in (("cold_ms", 15), ("warm_ms", 13)):
                flag = "!" if row[figure] > TARGET_MS else " "
                cells += f"{row[figure]:>{width}.0f} ms{flag}"
        print(f"{result['page']:<34}{cells}")


if __name__ == "__main__":
    main()

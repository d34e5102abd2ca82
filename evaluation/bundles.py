"""Offline judging: queued runs of a chip go out as a signed job bundle, come back as a results bundle.

For vendors' machines that cannot reach our broker or database:

1. the server exports a chip's queued runs as a **job bundle** (``manage.py export_jobs`` or
   ``POST /api/bundles/export/``); the runs are claimed with the bundle id as their lease, so no online
   worker judges them meanwhile;
2. a host with the chip judges it with the same judge and no database:
   ``python -m evaluation.bundles judge BUNDLE --out RESULTS`` (or ``manage.py judge_bundle``);
3. the results bundle is imported back (``manage.py import_results`` or ``POST /api/bundles/import/``). The
   import refuses a bundle whose jobs were changed (HMAC over the jobs with a key derived from SECRET_KEY),
   results for runs that were not in the bundle or whose job digest differs, and results judged on another
   chip than the one asked for; each accepted result is recorded exactly once through
   ``evaluation.services.run_record_result`` under the bundle's lease.

The judging half (``judge_bundle`` and the command line below) imports no Django: it runs on a bare host
with only this repository, torch and triton.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import secrets
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from evaluation.judge.job import VERDICTS, JudgeJob, JudgeResult

JOB_BUNDLE_FORMAT = "kgb-job-bundle/1"
RESULT_BUNDLE_FORMAT = "kgb-result-bundle/1"
BUNDLE_LEASE_PREFIX = "bundle-"  # a run whose lease starts with this is out in an offline bundle
BUNDLE_WORKER_PREFIX = "bundle:"


class BundleRefused(Exception):
    """The bundle or its results cannot be accepted; ``problems`` says why. Nothing was recorded."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


# --- Format: digests and signatures (no Django) ------------------------------------------------------------


def canonical(value: Any) -> bytes:
    """One byte string per JSON value, whatever the key order or spacing it travelled with."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def job_digest(job: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(job)).hexdigest()


def sign_bundle(*, key: bytes, bundle_id: str, chip: str, jobs: list[dict[str, Any]]) -> str:
    """HMAC-SHA256 over the bundle id, its chip and every job entry (run id, digest, job)."""
    return hmac.new(key, canonical({"bundle_id": bundle_id, "chip": chip, "jobs": jobs}), hashlib.sha256).hexdigest()


# --- Judging a bundle (no Django) ----------------------------------------------------------------------------


def judge_bundle(
    bundle: dict[str, Any],
    *,
    judged_chip: str,
    judge: Callable[[JudgeJob], JudgeResult] | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> dict[str, Any]:
    """Judge every job of a job bundle; return the results bundle (which carries the job bundle back).

    ``judged_chip`` is the chip this host has: the server refuses results whose chip is not the bundle's.
    """
    if bundle.get("format") != JOB_BUNDLE_FORMAT:
        raise BundleRefused([f"not a job bundle (format {bundle.get('format')!r}, expected {JOB_BUNDLE_FORMAT})"])
    if judge is None:
        from evaluation.judge import judge as default_judge

        judge = default_judge
    results = []
    total = len(bundle["jobs"])
    for index, entry in enumerate(bundle["jobs"], start=1):
        job = JudgeJob.from_json(entry["job"])
        started = time.monotonic()
        try:
            result = judge(job)
        except Exception:  # the judge promises not to raise for a kernel's faults: this one is ours
            result = JudgeResult(status="error", reason="the judge failed:\n" + traceback.format_exc(limit=20))
        result.stage_seconds.setdefault("bundle_total", round(time.monotonic() - started, 3))
        results.append(
            {"run_id": entry["run_id"], "job_digest": entry["digest"], "chip": judged_chip, "result": result.to_json()}
        )
        if progress:
            progress(index, total, result.status)
    return {
        "format": RESULT_BUNDLE_FORMAT,
        "bundle_id": bundle["bundle_id"],
        "chip": bundle["chip"],
        "judged_on": {"chip": judged_chip, "host": _hostname(), "finished_at": _now_iso()},
        "bundle": bundle,
        "results": results,
    }


def _hostname() -> str:
    import platform

    return platform.node()


def _now_iso() -> str:
    return datetime.now(UTC).isoformat()


# --- Server side: export and import (Django, imported lazily) ---------------------------------------------


def bundle_key() -> bytes:
    """The signing key: derived from SECRET_KEY, never equal to it, never sent anywhere."""
    from django.conf import settings

    return hashlib.sha256(b"kgb-job-bundle-signing-key/1\0" + settings.SECRET_KEY.encode("utf-8")).digest()


def bundle_export(*, chip_slug: str, limit: int = 100) -> dict[str, Any]:
    """Claim up to ``limit`` queued runs of the chip for a new bundle and return the signed job bundle."""
    from django.conf import settings
    from django.utils import timezone as django_timezone

    from evaluation.models import Chip, Run, RunStatus
    from evaluation.services import IllegalRunTransition, run_build_job, run_transition

    try:
        chip = Chip.objects.get(slug=chip_slug)
    except Chip.DoesNotExist:
        raise BundleRefused([f"unknown chip {chip_slug!r}"]) from None
    bundle_id = BUNDLE_LEASE_PREFIX + secrets.token_hex(12)
    now = django_timezone.now()
    jobs = []
    queued = (
        Run.objects.filter(chip=chip, status=RunStatus.QUEUED)
        .select_related("chip", "kernel__operator")
        .order_by("queued_at", "pk")[: max(0, limit)]
    )
    for run in queued:
        try:
            run = run_transition(
                run=run,
                to_status=RunStatus.RUNNING,
                lease=bundle_id,
                worker=BUNDLE_WORKER_PREFIX + bundle_id,
                worker_pid=None,
                attempts=run.attempts + 1,
                started_at=now,
            )
        except IllegalRunTransition:
            continue  # an online worker claimed it first
        job = run_build_job(run=run).to_json()
        jobs.append({"run_id": run.pk, "digest": job_digest(job), "job": job})
    expires = now + timedelta(seconds=settings.KGB_BUNDLE_LEASE_S)
    return {
        "format": JOB_BUNDLE_FORMAT,
        "bundle_id": bundle_id,
        "chip": chip.slug,
        "created_at": now.isoformat(),
        "expires_at": expires.isoformat(),
        "jobs": jobs,
        "signature": sign_bundle(key=bundle_key(), bundle_id=bundle_id, chip=chip.slug, jobs=jobs),
    }


@dataclass
class ImportReport:
    bundle_id: str
    recorded: list[int] = field(default_factory=list)
    already_recorded: list[int] = field(default_factory=list)  # a second import of the same results
    not_held: list[int] = field(default_factory=list)  # the bundle's claim expired and the run went elsewhere
    missing: list[int] = field(default_factory=list)  # runs of the bundle with no result in this import

    def to_json(self) -> dict[str, Any]:
        return {
            "bundle_id": self.bundle_id,
            "recorded": self.recorded,
            "already_recorded": self.already_recorded,
            "not_held": self.not_held,
            "missing": self.missing,
        }


def check_results_bundle(document: Any, *, chip_slug: str) -> list[str]:
    """Every reason to refuse this results bundle as a whole (empty when it may be imported)."""
    if not isinstance(document, dict) or document.get("format") != RESULT_BUNDLE_FORMAT:
        return [f"not a results bundle (expected format {RESULT_BUNDLE_FORMAT})"]
    bundle = document.get("bundle")
    if not isinstance(bundle, dict) or not isinstance(bundle.get("jobs"), list):
        return ["the results do not carry their job bundle"]
    try:
        expected = sign_bundle(
            key=bundle_key(), bundle_id=str(bundle.get("bundle_id")), chip=str(bundle.get("chip")), jobs=bundle["jobs"]
        )
    except (TypeError, ValueError):
        return ["the job bundle is malformed"]
    if not hmac.compare_digest(expected, str(bundle.get("signature", ""))):
        return ["the job bundle's signature does not match: it was changed, or was not issued by this server"]
    problems = []
    if bundle["chip"] != chip_slug:
        problems.append(f"the bundle is for chip {bundle['chip']!r}, not {chip_slug!r}")
    judged_on = document.get("judged_on") or {}
    if judged_on.get("chip") != bundle["chip"]:
        problems.append(f"the results were judged on chip {judged_on.get('chip')!r}, not {bundle['chip']!r}")
    if document.get("bundle_id") != bundle["bundle_id"]:
        problems.append("the results name another bundle than the one they carry")
    jobs = {entry["run_id"]: entry for entry in bundle["jobs"]}
    seen: set = set()
    results = document.get("results")
    if not isinstance(results, list):
        return problems + ["no results list"]
    for index, item in enumerate(results):
        label = f"result {index}"
        if not isinstance(item, dict):
            problems.append(f"{label}: not an object")
            continue
        run_id = item.get("run_id")
        label = f"result for run {run_id}"
        if run_id not in jobs:
            problems.append(f"{label}: that run was not in bundle {bundle['bundle_id']}")
            continue
        if run_id in seen:
            problems.append(f"{label}: given twice")
            continue
        seen.add(run_id)
        if (
            item.get("job_digest") != jobs[run_id]["digest"]
            or job_digest(jobs[run_id]["job"]) != jobs[run_id]["digest"]
        ):
            problems.append(f"{label}: job digest does not match the bundle's job")
        if item.get("chip") != bundle["chip"]:
            problems.append(f"{label}: judged on chip {item.get('chip')!r}, not {bundle['chip']!r}")
        problem = _check_result(item.get("result"))
        if problem:
            problems.append(f"{label}: {problem}")
    return problems


def _check_result(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "no result object"
    if data.get("status") not in VERDICTS:
        return f"unknown verdict {data.get('status')!r}"
    try:
        JudgeResult.from_json(data)
    except (TypeError, ValueError) as exc:
        return f"malformed result ({exc})"
    return None


def results_import(document: Any, *, chip_slug: str) -> ImportReport:
    """Check the whole results bundle, then record each result once under the bundle's lease."""
    from evaluation.models import Run
    from evaluation.services import run_record_result

    problems = check_results_bundle(document, chip_slug=chip_slug)
    if problems:
        raise BundleRefused(problems)
    bundle = document["bundle"]
    bundle_id = bundle["bundle_id"]
    report = ImportReport(bundle_id=bundle_id)
    given = {item["run_id"]: item for item in document["results"]}
    runs = Run.objects.select_related("chip").in_bulk([entry["run_id"] for entry in bundle["jobs"]])
    for entry in bundle["jobs"]:
        run_id = entry["run_id"]
        run = runs.get(run_id)
        if run_id not in given:
            report.missing.append(run_id)
            continue
        if run is None or run.lease != bundle_id:
            report.not_held.append(run_id)
            continue
        if run.is_finished:
            report.already_recorded.append(run_id)
            continue
        result = JudgeResult.from_json(given[run_id]["result"])
        if run_record_result(run=run, lease=bundle_id, result=result):
            report.recorded.append(run_id)
        else:  # finished meanwhile by a concurrent import of the same results
            report.already_recorded.append(run_id)
    return report


# --- Command line: judge a bundle on this host (no Django) -------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evaluation.bundles", description="Judge an offline job bundle on this host, without a database."
    )
    commands = parser.add_subparsers(dest="command", required=True)
    judge_parser = commands.add_parser("judge", help="judge every job of BUNDLE and write the results bundle")
    judge_parser.add_argument("bundle", type=Path)
    judge_parser.add_argument("--out", type=Path, required=True, help="where to write the results bundle")
    judge_parser.add_argument("--chip", default=None, help="this host's chip slug (default: detected, or KGB_CHIP)")
    args = parser.parse_args(argv)
    return run_judge_command(args.bundle, args.out, args.chip)


def run_judge_command(bundle_path: Path, out_path: Path, chip: str | None) -> int:
    bundle = json.loads(Path(bundle_path).read_text())
    if chip is None:
        from evaluation.judge.backends import detect_chip

        chip = detect_chip()[0]
    if chip != bundle.get("chip"):
        print(
            f"warning: this host is {chip!r} but the bundle is for {bundle.get('chip')!r}; the server will "
            "refuse these results",
            file=sys.stderr,
        )

    def show(done: int, total: int, verdict: str) -> None:
        print(f"[{done}/{total}] {verdict}", file=sys.stderr, flush=True)

    try:
        results = judge_bundle(bundle, judged_chip=chip, progress=show)
    except BundleRefused as refused:
        print("refused: " + "; ".join(refused.problems), file=sys.stderr)
        return 2
    out_path = Path(out_path)
    out_path.write_text(json.dumps(results))
    verdicts: dict[str, int] = {}
    for item in results["results"]:
        verdicts[item["result"]["status"]] = verdicts.get(item["result"]["status"], 0) + 1
    print(f"judged {len(results['results'])} jobs on {chip}: {verdicts}; results in {out_path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

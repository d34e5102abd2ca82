"""Offline judging: queued runs of a chip go out as a signed job bundle, come back as a results bundle.

For vendors' machines that cannot reach our broker or database:

1. the server exports a chip's queued runs as a **job bundle** (``manage.py export_jobs`` or
   ``POST /api/bundles/export/``); the runs are claimed with the bundle id as their lease, so no online
   worker judges them meanwhile;
2. a host with the chip judges it with the same judge and no database:
   ``python -m evaluation.judge.bundle judge BUNDLE --out RESULTS`` (or ``manage.py judge_bundle``);
3. the results bundle is imported back (``manage.py import_results`` or ``POST /api/bundles/import/``). The
   import refuses a bundle whose jobs were changed (HMAC over the jobs with a key derived from SECRET_KEY),
   results for runs that were not in the bundle or whose job digest differs, and results judged on another
   chip than the one asked for; each accepted result is recorded exactly once through
   ``evaluation.services.run_record_result`` under the bundle's lease.

This module is the server's half (Django): export and import. The format and the judging half, which import
no Django, are evaluation.judge.bundle.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings

from evaluation.clock import database_now
from evaluation.judge.bundle import (
    BUNDLE_LEASE_PREFIX,
    BUNDLE_WORKER_PREFIX,
    JOB_BUNDLE_FORMAT,
    RESULT_BUNDLE_FORMAT,
    BundleRefused,
    job_digest,
    result_problem,
    sign_bundle,
)
from evaluation.judge.job import JudgeResult
from evaluation.models import Chip, Run, RunStatus
from evaluation.services import IllegalRunTransition, run_build_job, run_record_result, run_transition


def bundle_key() -> bytes:
    """The signing key: derived from SECRET_KEY, never equal to it, never sent anywhere."""
    return hashlib.sha256(b"kgb-job-bundle-signing-key/1\0" + settings.SECRET_KEY.encode("utf-8")).digest()


def bundle_export(*, chip_slug: str, limit: int = 100) -> dict[str, Any]:
    """Claim up to ``limit`` queued runs of the chip for a new bundle and return the signed job bundle."""
    try:
        chip = Chip.objects.get(slug=chip_slug)
    except Chip.DoesNotExist:
        raise BundleRefused([f"unknown chip {chip_slug!r}"]) from None
    bundle_id = BUNDLE_LEASE_PREFIX + secrets.token_hex(12)
    now = database_now()  # the re-queuer compares the claims' start with its own database time
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
        problem = result_problem(item.get("result"))
        if problem:
            problems.append(f"{label}: {problem}")
    return problems


def results_import(document: Any, *, chip_slug: str) -> ImportReport:
    """Check the whole results bundle, then record each result once under the bundle's lease."""
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

"""The offline bundle format and its judging, with no Django: it runs on a bare host with only this
repository, torch and triton.

A job bundle carries a chip's queued runs out (signed by the server, see evaluation.bundles); this module
judges every job of one with the same judge as the online workers and writes the results bundle that the
server imports back: ``python -m evaluation.judge.bundle judge BUNDLE --out RESULTS`` (or ``manage.py
judge_bundle``, or ``kgb judge-bundle``).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
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


def result_problem(data: Any) -> str | None:
    """Why one result of a results bundle cannot be recorded (None when it can)."""
    if not isinstance(data, dict):
        return "no result object"
    if data.get("status") not in VERDICTS:
        return f"unknown verdict {data.get('status')!r}"
    try:
        JudgeResult.from_json(data)
    except (TypeError, ValueError) as exc:
        return f"malformed result ({exc})"
    return None


# --- Command line: judge a bundle on this host (no Django) -------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m evaluation.judge.bundle",
        description="Judge an offline job bundle on this host, without a database.",
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

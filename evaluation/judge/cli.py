"""Command line: judge one file, print a summary or one JSON object. Exit 0 passed, 1 not passed, 2 usage."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from evaluation.judge.job import JudgeJob, JudgeResult


def build_job(source: str, operator_id: str, chip: str | None) -> JudgeJob:
    from evaluation.judge.backends import detect_chip, peaks_for

    detected_slug, device_type = detect_chip()
    slug = chip or detected_slug
    if slug == "cpu-interpreter":
        device_type = "cpu"
    on_gpu = device_type != "cpu"
    bandwidth, flops = peaks_for(slug)
    return JudgeJob(
        operator_id=operator_id,
        source_code=source,
        chip_slug=slug,
        device_type=device_type,
        tiers=("public", "held_out") if on_gpu else ("smoke",),
        measure_timing=on_gpu,
        time_budget_s=1800.0 if on_gpu else 600.0,
        peak_bandwidth_bytes_per_s=bandwidth,
        peak_flops_by_dtype=flops,
    )


def summary(result: JudgeResult) -> str:
    lines = [
        f"status:  {result.status}",
        f"reason:  {result.reason}",
        f"cases:   {result.cases_passed}/{result.cases_total} passed",
    ]
    if result.failed_case:
        lines.append(f"failed:  {result.failed_case['case_id']}: {result.failed_case['message'][:500]}")
    speedup = "n/a" if result.speedup is None else f"{result.speedup:.3f}x"
    if result.speedup_ci95:
        speedup += f" (95% CI {result.speedup_ci95[0]:.3f}-{result.speedup_ci95[1]:.3f})"
    lines.append(f"speedup: {speedup}{'  [FLAGGED: below roofline]' if result.flagged else ''}")
    lines.append("checks:")
    lines += [f"  {check.outcome:8s} {check.name}: {check.detail[:200]}" for check in result.checks]
    return "\n".join(lines)


def as_cli_json(result: JudgeResult) -> dict:
    data = result.to_json()
    data["failed_case"] = result.failed_case
    data["checks"] = [{"name": c.name, "outcome": c.outcome, "detail": c.detail} for c in result.checks]
    return data


def run_cli(path: str, operator_id: str, chip: str | None, as_json: bool) -> int:
    from evaluation.judge.records import find_operator
    from evaluation.judge.runner import judge

    try:
        find_operator(operator_id)
    except KeyError as error:
        print(f"error: {error.args[0]}", file=sys.stderr)
        return 2
    file = Path(path)
    if not file.is_file():
        print(f"error: no such file: {path}", file=sys.stderr)
        return 2
    result = judge(build_job(file.read_text(errors="replace"), operator_id, chip))
    print(json.dumps(as_cli_json(result), default=str) if as_json else summary(result))
    return 0 if result.status == "passed" else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evaluation.judge", description=__doc__)
    parser.add_argument("file")
    parser.add_argument("--operator", required=True)
    parser.add_argument("--chip", default=None)
    parser.add_argument("--json", action="store_true")
    try:
        options = parser.parse_args(argv)
    except SystemExit as error:
        return 2 if error.code else 0
    return run_cli(options.file, options.operator, options.chip, options.json)

"""Summarise reference-kernel runs (the JSON judge_reference_kernels.py writes under $OUT) as a Markdown table.

    python3 scripts/gpu/summarise_reference_kernels.py RUN.json [LATER_RUN.json ...] [--compact OUT.json]

A later file's verdict for a kernel replaces an earlier one's (a recheck after a fix), except that an
``error`` (the judge's failure, not a verdict) never replaces a verdict; within one file (a kernel judged
twice in one submission) a failure is kept over the repeat's pass; the table says which run each row
comes from. ``--compact`` also writes the per-kernel figures and the timed cases' medians, small
enough to keep in the repository (the raw files hold every case's evidence: megabytes).
"""

from __future__ import annotations

import argparse
import gzip
import json
from pathlib import Path


def compact_row(entry: dict, run: str) -> dict:
    result = entry["result"]
    timed = [
        {
            "case_id": case["case_id"],
            "reference_ms": case["reference_ms"],
            "candidate_ms": case["candidate_ms"],
            "speedup": case["speedup"],
            "iterations": (case.get("spread") or {}).get("iterations"),
        }
        for case in result.get("case_results", [])
        if case.get("timed")
    ]
    return {
        "file": entry["file"],
        "run": run,
        "status": result["status"],
        "cases_passed": result["cases_passed"],
        "cases_total": result["cases_total"],
        "speedup": result.get("speedup"),
        "speedup_ci95": result.get("speedup_ci95"),
        "seconds": round(entry["seconds"], 1),
        "timing_baseline": result.get("environment", {}).get("timing_baseline", ""),
        "reason": "" if result["status"] == "passed" else result["reason"][:300],
        "timed_cases": timed,
        "stage_seconds": result.get("stage_seconds", {}),
        "stage_breakdown": result.get("environment", {}).get("stage_breakdown", {}),
        "triton_compilations": result.get("environment", {}).get("triton_compilations", 0),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--compact", type=Path, default=None)
    args = parser.parse_args()
    rows: dict[str, dict] = {}
    for index, path in enumerate(args.runs, start=1):
        text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
        for entry in json.loads(text)["results"]:
            row = compact_row(entry, f"run {index}")
            earlier = rows.get(entry["file"])
            if row["status"] == "error" and earlier is not None and earlier["status"] != "error":
                continue  # the judge's own failure says nothing about the kernel: keep the earlier verdict
            if earlier is not None and earlier["run"] == row["run"] and earlier["status"] != "passed":
                continue  # judged twice in one run (a 110-kernel submission): its repeat must not hide a failure
            rows[entry["file"]] = row
    print("| kernel | verdict | cases | speedup (95% CI) | timed against | s | run |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in sorted(rows, key=lambda name: (name.split("__")[0], name)):
        row = rows[name]
        ci = row["speedup_ci95"]
        speedup = "-" if row["speedup"] is None else f"{row['speedup']:.3f}"
        if ci and row["speedup"] is not None:
            speedup += f" ({ci[0]:.3f}-{ci[1]:.3f})"
        verdict = row["status"] if row["status"] == "passed" else f"**{row['status']}**: {row['reason'][:140]}"
        print(
            f"| {name.removesuffix('.py')} | {verdict} | {row['cases_passed']}/{row['cases_total']} | {speedup} | "
            f"{row['timing_baseline']} | {row['seconds']} | {row['run']} |"
        )
    passed = sum(1 for row in rows.values() if row["status"] == "passed")
    print(f"\n{passed} of {len(rows)} judged kernels passed.")
    if args.compact:
        args.compact.write_text(json.dumps(sorted(rows.values(), key=lambda row: row["file"]), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""How far each operator's speedups move between whole submissions judged on different machines, device-time
against protocol, the protocol's split by how much of the operator's grid races the L2 flush.

    python3 scripts/gpu/protocol_repeatability.py RUN.json.gz RUN.json.gz [RUN.json.gz ...]

Reads judge_reference_kernels.py's JSON (run_all.sh submission: ``reference_kernels_<chip>.json.gz``), each
run judged by the same judge version with the protocol stage on. For every pair of runs, over the operators
both passed: the median relative change of the operator's speedup between the two, and how many moved less
than 10 %, for

- the device-time speedup (a few large cases, device time alone);
- the protocol speedup of cuBLAS operators (the original's back-to-back loop: no flush, nothing to race);
- the protocol speedup of operators whose timed cases are mostly launch-bound (``LAUNCH_BOUND_SHARE`` or more
  of them marked ``launch_bound``: a side under one L2 flush, timing_protocol.launch_bound);
- the protocol speedup of the others.

An operator's class is read from the newest run that carries the marks (the last file given that has any).
Kernels judged twice in one run (the submission's repeats) count once, by their first judgement.
"""

from __future__ import annotations

import gzip
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

LAUNCH_BOUND_SHARE = 0.9
WITHIN = 0.10


def load(path: str | Path) -> dict[str, dict[str, Any]]:
    """file -> {device, protocol, cases, launch_bound} of each kernel's first judgement in the run."""
    raw = Path(path).read_bytes()
    data = json.loads(gzip.decompress(raw) if str(path).endswith(".gz") else raw)
    kernels: dict[str, dict[str, Any]] = {}
    for row in data["results"]:
        result = row["result"]
        if row["file"] in kernels or result.get("status") != "passed":
            continue
        timed = [case["protocol_timing"] for case in result["case_results"] if case.get("protocol_timing")]
        marked = [timing["launch_bound"] for timing in timed if "launch_bound" in timing]
        kernels[row["file"]] = {
            "device": result.get("speedup"),
            "protocol": result.get("protocol_speedup"),
            "cases": len(timed),
            "launch_bound": sum(marked) if marked else None,  # None: a judge before the marks
        }
    return kernels


def classes(runs: list[dict[str, dict[str, Any]]]) -> dict[str, str]:
    """file -> "cublas", "launch-bound" or "other", from the last run that carries launch-bound marks."""
    marked = [run for run in runs if any(kernel["launch_bound"] is not None for kernel in run.values())]
    if not marked:
        raise SystemExit("no run carries launch-bound marks: judge one with this checkout's protocol stage")
    found = {}
    for name, kernel in marked[-1].items():
        if name.startswith("cublas__"):
            found[name] = "cublas"
        elif kernel["cases"] and (kernel["launch_bound"] or 0) >= LAUNCH_BOUND_SHARE * kernel["cases"]:
            found[name] = "launch-bound"
        else:
            found[name] = "other"
    return found


def moves(
    first: dict[str, dict[str, Any]], second: dict[str, dict[str, Any]], kinds: dict[str, str]
) -> dict[str, list[float]]:
    """Per figure ("device", "protocol cublas", ...), each shared operator's |ln(second / first)|."""
    found: dict[str, list[float]] = {}
    for name, kernel in first.items():
        other = second.get(name)
        if other is None or name not in kinds:
            continue
        for figure, label in (("device", "device"), ("protocol", f"protocol {kinds[name]}")):
            a, b = kernel[figure], other[figure]
            if a and b and a > 0 and b > 0:
                found.setdefault(label, []).append(abs(math.log(b / a)))
    return found


def summary(changes: list[float]) -> tuple[int, float, int]:
    """(operators, median relative change, how many moved less than WITHIN)."""
    return (
        len(changes),
        math.exp(statistics.median(changes)) - 1,
        sum(1 for change in changes if change < math.log(1 + WITHIN)),
    )


def _named(path: str) -> str:
    return f"{Path(path).parent.name}/{Path(path).name}"


def main(paths: list[str]) -> None:
    if len(paths) < 2:
        raise SystemExit(__doc__)
    runs = [load(path) for path in paths]
    kinds = classes(runs)
    counts = {kind: sum(1 for value in kinds.values() if value == kind) for kind in ("cublas", "launch-bound", "other")}
    print(f"operators by class (launch-bound: {LAUNCH_BOUND_SHARE:.0%} of timed cases or more): {counts}")
    for i, first in enumerate(runs):
        for j in range(i + 1, len(runs)):
            print(f"{_named(paths[i])} vs {_named(paths[j])}")
            for label, changes in sorted(moves(first, runs[j], kinds).items()):
                operators, median, within = summary(changes)
                print(f"  {label:24s} {operators:4d} operators  median change {median:7.1%}  within 10 %: {within}")


if __name__ == "__main__":
    main(sys.argv[1:])

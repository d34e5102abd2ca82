"""What the run page says about a verdict: who failed (the kernel, the reference or the judge), how many
cases ran, and the kernel-file lines an error names, as links into the code view."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from evaluation.models import Run, RunStatus

# Lines of the candidate's file: the sandbox loads it as candidate_kernel.py; the static scan and Python's
# syntax errors say "(line N)".
KERNEL_LINE = re.compile(r'candidate_kernel\.py", line (\d+)|\(line (\d+)\)|\bline (\d+) of the kernel')
REFERENCE_WORDS = ("the reference", "reference raised", "reference failed")

FAULT_LABELS = {
    "kernel": "kernel",
    "reference": "reference",
    "judge": "judge (infrastructure)",
}


@dataclass
class RunReport:
    fault: str  # "kernel", "reference", "judge" or "" (passed, or not finished)
    cases_line: str  # "18 of 18 ran, 18 passed" / "1 of 18 ran, 0 passed (17 never ran)"
    kernel_lines: list[int] = field(default_factory=list)  # lines of the kernel file the reason names
    reason_parts: list[tuple[str, int | None]] = field(default_factory=list)  # text, line link (or None)


def fault_of(run: Run) -> str:
    if run.status in (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.PASSED):
        return ""
    if run.status == RunStatus.ERROR:
        text = (run.reason or "").lower()
        return "reference" if any(word in text for word in REFERENCE_WORDS) else "judge"
    return "kernel"


def cases_line(run: Run) -> str:
    """Cases that ran are those with a result; a verdict that stopped early says how many never ran."""
    total = run.cases_total
    ran = len(run.case_results) if run.case_results else (total if run.status == RunStatus.PASSED else 0)
    passed = run.cases_passed
    if not total:
        return "no cases ran" if run.is_finished else "not judged yet"
    line = f"{ran} of {total} ran, {passed} passed"
    if ran < total and run.is_finished:
        line += f" ({total - ran} never ran: judging stops at the first failure)"
    return line


def run_report(run: Run, *, code_visible: bool) -> RunReport:
    """Reason split into text and kernel-line links (links only when the viewer may see the code)."""
    parts: list[tuple[str, int | None]] = []
    lines: list[int] = []
    reason = run.reason or ""
    position = 0
    for match in KERNEL_LINE.finditer(reason):
        number = int(next(group for group in match.groups() if group))
        lines.append(number)
        parts.append((reason[position : match.start()], None))
        parts.append((match.group(0), number if code_visible else None))
        position = match.end()
    parts.append((reason[position:], None))
    return RunReport(
        fault=fault_of(run),
        cases_line=cases_line(run),
        kernel_lines=lines,
        reason_parts=[part for part in parts if part[0]],
    )


# --- Per-case timings: the run page's table and its download --------------------------------------------

# One line per case: both timings side by side, never mixed (PROTOCOL 6). ``protocol_*``: the protocol's (the
# paper's) timing: call latency as a caller sees it, timed as the paper's harness times each source, every
# timed case of the original's grid.
# ``device_*``: the device-time timing of the large cases, launch cost hidden.
CASE_COLUMNS: tuple[str, ...] = (
    "case_id",
    "tier",
    "passed",
    "protocol_reference_ms",
    "protocol_candidate_ms",
    "protocol_speedup",
    "protocol_iterations",
    "protocol_stop_reason",
    "protocol_reference_rse",
    "protocol_candidate_rse",
    "protocol_launch_bound",
    "device_timed",
    "device_reference_ms",
    "device_candidate_ms",
    "device_speedup",
    "roofline_floor_ms",
    "below_roofline",
    "params",
    "message",
)
PROTOCOL_FIGURES = ("reference_ms", "candidate_ms", "speedup", "iterations", "reference_rse", "candidate_rse")


def _number(value: object) -> float | int | None:
    """A stored figure as a number, or None: case results are JSON the judge wrote, shown as numbers only."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def _text(value: object, limit: int = 2000) -> str:
    return value[:limit] if isinstance(value, str) else ""


def case_rows(run: Run) -> list[dict[str, object]]:
    """Every case of the run with its protocol and device-time figures (None where a case has none)."""
    rows = []
    for case in run.case_results or []:
        if not isinstance(case, dict):
            continue
        protocol = case.get("protocol_timing")
        protocol = protocol if isinstance(protocol, dict) else {}
        params = case.get("params")
        rows.append(
            {
                "case_id": _text(case.get("case_id"), 200),
                "tier": _text(case.get("tier"), 40),
                "passed": bool(case.get("passed")),
                **{f"protocol_{name}": _number(protocol.get(name)) for name in PROTOCOL_FIGURES},
                "protocol_stop_reason": _text(protocol.get("stop_reason"), 200) or None,
                # A side under one L2 flush: the figure is the launch race's outcome (timing_protocol.launch_bound).
                "protocol_launch_bound": protocol["launch_bound"]
                if isinstance(protocol.get("launch_bound"), bool)
                else None,
                "device_timed": bool(case.get("timed")),
                "device_reference_ms": _number(case.get("reference_ms")),
                "device_candidate_ms": _number(case.get("candidate_ms")),
                "device_speedup": _number(case.get("speedup")),
                "roofline_floor_ms": _number(case.get("roofline_floor_ms")),
                "below_roofline": bool(case.get("below_roofline")),
                "params": params if isinstance(params, dict) else {},
                "message": _text(case.get("message")),
            }
        )
    return rows


def case_download_meta(run: Run) -> dict[str, object]:
    """What a JSON download says of the run its cases belong to, both speedups labelled."""
    return {
        "run": run.pk,
        "operator_id": run.kernel.operator.operator_id,
        "chip": run.chip.slug,
        "status": run.status,
        "judge_version": run.judge_version,
        "protocol_speedup": run.protocol_speedup,
        "protocol_speedup_ci95": _interval(run.protocol_speedup_ci_low, run.protocol_speedup_ci_high),
        "speedup": run.speedup,
        "speedup_ci95": _interval(run.speedup_ci_low, run.speedup_ci_high),
        "columns": {
            "protocol_*": "the protocol's (the paper's) timing: every timed case, call latency as a caller sees "
            "it, timed as the paper's harness times each source",
            "device_*": "the device-time timing: large cases, launch cost hidden",
            "protocol_launch_bound": "a side's caller latency under one L2 flush: the figure is the race between "
            "the host's launch path and the flush, which moves from one process to the next in do_bench too "
            "(null where the timer has no flush)",
        },
    }


def _interval(low: float | None, high: float | None) -> list[float] | None:
    return [low, high] if low is not None and high is not None else None

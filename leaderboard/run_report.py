"""What the run page says about a verdict: who failed (the kernel, the reference or the judge), how many
cases ran, and the kernel-file lines an error names, as links into the code view."""

from __future__ import annotations

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

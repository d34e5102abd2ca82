"""The judge: one kernel file against one operator on one chip, in a sandbox. No Django in here.

``judge(job)`` is the one entry point the Django side calls (evaluation.judge.runner has the details). It is
imported lazily so that ``evaluation.judge.job`` (the boundary types) can be used without importing torch.
"""

from typing import Any

from evaluation.judge.job import CaseResult, CheckOutcome, JudgeJob, JudgeResult

__all__ = ["CaseResult", "CheckOutcome", "JudgeJob", "JudgeResult", "judge"]


def __getattr__(name: str) -> Any:
    if name == "judge":
        from evaluation.judge.runner import judge

        return judge
    raise AttributeError(name)

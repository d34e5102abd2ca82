"""The judge: one kernel file against one operator on one chip, in a sandbox. No Django in here.

``judge(job)`` is the one entry point the Django side calls (evaluation.judge.runner has the details).
"""

from evaluation.judge.job import CaseResult, CheckOutcome, JudgeJob, JudgeResult
from evaluation.judge.runner import judge

__all__ = ["CaseResult", "CheckOutcome", "JudgeJob", "JudgeResult", "judge"]

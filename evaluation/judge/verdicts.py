"""Verdicts and seeds: how a judgement stops with a verdict, the seeds it draws from its secret, and what
an error message says about whose fault a failure was."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

from evaluation.catalog.spec import Case
from evaluation.judge.backends import device_memory_used_share


class Verdict(Exception):
    """Raised inside a judgement to stop it with a verdict."""

    def __init__(
        self,
        status: str,
        reason: str,
        *,
        check: str = "",
        case: Case | None = None,
        tier: str = "",
        message: str = "",
        retryable: bool = False,
        interpreter_dtype: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.status, self.reason, self.check, self.case, self.tier = status, reason, check, case, tier
        self.message = message or reason
        self.retryable = retryable  # see JudgeResult.retryable
        # A failure the reason blames on a known CPU-interpreter defect of this dtype ("bfloat16"): the
        # correctness stage then runs the cases without it before the verdict stands (correctness.py).
        self.interpreter_dtype = interpreter_dtype


def derive_seed(secret: bytes, *parts: object) -> int:
    digest = hashlib.sha256(secret + "\x00".join(str(part) for part in parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") & ((1 << 63) - 1)


def check_integrity(violations: list[str], case: Case | None, tier: str) -> None:
    """The sandbox's own report that its harness was tampered with (timers, hooks, threads): a rejection."""
    if violations:
        raise Verdict(
            "rejected",
            f"harness integrity: {violations[0]}",
            check="harness_integrity",
            case=case,
            tier=tier,
            message="; ".join(violations),
        )


DEVICE_FULL = (
    "the GPU had no memory left for a modest allocation: other judgements held it, not this kernel (judge again)"
)
_OOM_FIGURES = re.compile(r"Tried to allocate ([\d.]+) (\w?i?B)\b.*? of which ([\d.]+) (\w?i?B) is free", re.S)
_UNITS = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4}


def device_was_full(error: str, device_type: str, used_share: Callable[[], float | None] | None = None) -> bool:
    """True for a CUDA out-of-memory error where the device as a whole was nearly exhausted (under 1 GiB
    free, less than the allocation asked for): with several judges on one GPU that is the neighbours'
    memory, not the kernel's (seen on the H200, 2026-11-30: 165 MiB free, 256 MiB asked for, 16 judges).
    A kernel asking for more than the device has fails with plenty still free and stays ``failed_runtime``.

    The message is the kernel's process's text, which a kernel can raise itself to turn its failure into a
    retried ``error``: it counts only on a device shared by judges (never the CPU interpreter), and only where
    the trusted side's own reading of the device (``used_share``: the share of its memory in use now, None
    where no tool reads it) finds it at least half full."""
    if device_type == "cpu":
        return False
    found = _OOM_FIGURES.search(error)
    if not found:
        return False
    asked = float(found.group(1)) * _UNITS.get(found.group(2), 1)
    free = float(found.group(3)) * _UNITS.get(found.group(4), 1)
    if not (free < asked and free < 1024**3):
        return False
    share = used_share() if used_share is not None else None
    return share is None or share >= 0.5


def device_was_full_by_our_reading(error: str, device_type: str) -> bool:
    """``device_was_full`` with the trusted side's own reading of the device: what every judgement asks."""
    return device_was_full(error, device_type, lambda: device_memory_used_share(device_type))


def import_failure_reason(error: str) -> str:
    """The exception first (pages and the API truncate reasons), then the traceback's tail."""
    lines = [line for line in error.strip().splitlines() if line.strip()]
    summary = lines[-1].strip() if lines else "unknown error"
    return f"the kernel file raised on import: {summary[:500]}\n" + error.strip()[-3000:]

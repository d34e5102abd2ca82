"""Tie a process's life to its parent's (Linux ``PR_SET_PDEATHSIG``): when the judging process dies, even by
SIGKILL (a Celery worker child killed for a time limit or memory), its zygote and sandboxes die with it.

The kernel clears the setting on every uid/gid change, so callers arm it *after* dropping privileges, and
then compare ``getppid()`` with the parent they expect: a parent that died before the arming would
otherwise go unnoticed (the orphan is re-parented and no signal ever comes).
"""

from __future__ import annotations

import ctypes
import os
import signal

PR_SET_PDEATHSIG = 1


def die_with_parent(expected_parent: int | None = None, signal_number: int = signal.SIGKILL) -> bool:
    """Arm ``signal_number`` (SIGKILL unless told; a worker asks for SIGTERM, its warm shutdown) on parent
    death for this process; exit at once if ``expected_parent`` is already gone.

    Returns False where prctl is unavailable (not Linux); the caller records that, nothing else changes.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, int(signal_number), 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(75)  # the parent died before we were armed
    return True

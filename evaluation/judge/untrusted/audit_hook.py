"""A Python audit hook (PEP 578) armed just before the candidate is imported, for what no honest kernel does
and the dispatch audit cannot see: raw memory through ctypes, a forked copy of the process computing
unaudited, walking the heap or other threads' frames to reach the judge's own objects, a tracer on them.
(Python 3.11 and 3.12 raise no event for starting a thread or for rebinding a class's method: the
integrity check covers those, guard.Integrity.)

Unlike everything else in the sandbox's process, a hook cannot be removed or replaced from Python once added,
and it sees the operation before it happens. A refused event ends the process at once with ``REFUSED_EXIT``
and says which event on stderr; the trusted side turns that into a rejection (session.py). Ending the
process, rather than raising, leaves the kernel no exception to catch and no record to erase.

The harness, Triton and torch use none of these events once the candidate loads (Triton's launcher builds
with a compiler in a subprocess, which stays allowed; the sandbox's own ctypes calls happen before arming).
"""

from __future__ import annotations

import os
import sys
from typing import Any

REFUSED_EXIT = 86
REFUSED_MARK = "kgb-refused:"

REFUSED_EVENTS = frozenset(
    {
        # Raw memory and foreign calls: reading tensor data the audit never sees, or writing the judge's state.
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.dlsym/handle",
        "ctypes.cdata",
        "ctypes.cdata/buffer",
        "ctypes.string_at",
        "ctypes.wstring_at",
        "ctypes.addressof",
        "ctypes.PyObj_FromPtr",
        "ctypes.call_function",
        # A copy of the process whose audit nobody reads.
        "os.fork",
        "os.forkpty",
        # Reaching the judge's objects: the heap, other threads' frames, a tracer on the judge's own frames.
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "sys._current_frames",
        "sys.settrace",
        "sys.setprofile",
    }
)


def arm() -> None:
    """From now on, end the process on a refused event."""
    import ctypes  # noqa: F401  (loaded now: its import opens libraries, which is refused once armed)

    exit_now, write, refused = os._exit, os.write, REFUSED_EVENTS

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event not in refused:
            return
        try:
            write(2, f"\n{REFUSED_MARK} {event}\n".encode())
        finally:
            exit_now(REFUSED_EXIT)

    sys.addaudithook(hook)


def refused_event(stderr: str) -> str | None:
    """The event a process ended by the hook names on its stderr (None: it did not say)."""
    for line in reversed(stderr.splitlines()):
        if line.startswith(REFUSED_MARK):
            return line[len(REFUSED_MARK) :].strip()[:200]
    return None

"""A Python audit hook (PEP 578) armed just before the candidate is imported, for what no honest kernel does
and the dispatch audit cannot see: raw memory through ctypes, a forked copy of the process computing
unaudited, a thread (torch's dispatch modes are per thread: one started and joined within a call runs
torch unaudited and leaves no trace in the thread count), walking the heap or other threads' frames to
reach the judge's own objects, a tracer on them. Python 3.11 and 3.12 raise no event for starting a thread:
``install_thread_event`` wraps the ways to start one so that they raise ``THREAD_EVENT`` first (the
integrity check sees a wrapper unwrapped, guard.Integrity).

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

THREAD_EVENT = "kgb.thread.start"
# torch.library registering into ATen's own namespace: a kernel of the candidate's for an op the audit allows
# (aten::empty_like's CPU kernel replaced, a new overload aten::empty_like.x), whose body runs where the
# dispatch mode is popped. Libraries in the candidate's own namespaces stay allowed (their ops' bodies are
# audited: guard._outside_aten).
LIBRARY_EVENT = "kgb.library"
PROTECTED_NAMESPACES = frozenset({"aten", "prim", "prims"})

REFUSED_EVENTS = frozenset(
    {
        THREAD_EVENT,
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


def install_thread_event() -> tuple[tuple[Any, str], ...]:
    """Make every way to start a thread raise THREAD_EVENT first (a no-op until the hook is armed); returns
    the (owner, attribute) pairs wrapped, for the integrity check."""
    import _thread
    import threading

    wrapped = []
    for owner, name in ((_thread, "start_new_thread"), (_thread, "start_new"), (threading, "_start_new_thread")):
        original = getattr(owner, name, None)
        if original is None or id(original) in _THREAD_STARTERS:
            continue
        start = _raising_thread_event(original)
        _THREAD_STARTERS.add(id(start))
        setattr(owner, name, start)
        wrapped.append((owner, name))
    return tuple(wrapped)


_THREAD_STARTERS: set[int] = set()


def _raising_thread_event(original: Any) -> Any:
    # A closure still holds the original (a kernel that unwraps it starts a thread unseen here, which the
    # thread count after the call sees if it outlives the call): this stops starting one the usual way.
    def start(*args: Any, **kwargs: Any) -> Any:
        sys.audit(THREAD_EVENT)
        return original(*args, **kwargs)

    return start


def install_library_event() -> tuple[tuple[Any, str], ...]:
    """Make torch.library's registrations raise LIBRARY_EVENT (kind, namespace) first; returns the pair
    wrapped, for the integrity check."""
    import torch

    original = torch._C._dispatch_library

    def dispatch_library(kind: str, name: str, *args: Any, **kwargs: Any) -> Any:
        sys.audit(LIBRARY_EVENT, kind, name)
        return original(kind, name, *args, **kwargs)

    torch._C._dispatch_library = dispatch_library
    return ((torch._C, "_dispatch_library"),)


def arm() -> None:
    """From now on, end the process on a refused event."""
    import ctypes  # noqa: F401  (loaded now: its import opens libraries, which is refused once armed)

    exit_now, write, refused = os._exit, os.write, REFUSED_EVENTS

    protected = PROTECTED_NAMESPACES

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == LIBRARY_EVENT and len(args) > 1 and args[1] in protected:
            event = f"torch.library in namespace {args[1]}"
        elif event not in refused:
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

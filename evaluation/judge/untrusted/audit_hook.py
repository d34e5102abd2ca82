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
with a compiler in a subprocess, which stays allowed). One of the judge's own parts does: the cuBLAS baseline
(``evaluation/catalog/cublas/cublas_baseline.py``, the real routine through its C API, as the original times
it) looks its routines up in libcublas (``ctypes.dlsym``) when the timing loops first build its calls; the
foreign calls themselves raise no event, so the timed loop pays nothing here. A ctypes event is let through
where every frame on the stack runs
code the judge had loaded when the hook was armed (``trusted_code``): the candidate's own code is always on
the stack while it runs, so this lets none of its calls through. Code objects are compared by identity, not
by file name (a candidate can compile code under any name).
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


CTYPES_EVENTS = frozenset(event for event in REFUSED_EVENTS if event.startswith("ctypes."))


def trusted_code(package_dir: str) -> frozenset[Any]:
    """The code objects of every function the judge has loaded from ``package_dir`` (its modules' functions,
    classes' methods and properties, and every function nested in them), of ctypes' own Python (its foreign
    calls pass through it), and of the frames on the stack now (the process's entry down to here). Called
    just before arming."""
    import ctypes
    import types

    found: set[Any] = set()
    prefixes = (package_dir, os.path.dirname(ctypes.__file__) + os.sep)

    def add_code(code: types.CodeType) -> None:
        if code not in found:
            found.add(code)
            for constant in code.co_consts:
                if isinstance(constant, types.CodeType):
                    add_code(constant)

    def add(value: Any, depth: int = 0) -> None:
        value = getattr(value, "__wrapped__", value)  # functools.cache and friends
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, types.FunctionType) and value.__code__.co_filename.startswith(prefixes):
            add_code(value.__code__)
        elif isinstance(value, property):
            for function in (value.fget, value.fset, value.fdel):
                if function is not None:
                    add(function, depth)
        elif isinstance(value, type) and depth < 2 and loaded_from_prefixes(value.__module__):
            for member in list(vars(value).values()):
                add(member, depth + 1)

    def loaded_from_prefixes(module_name: str) -> bool:
        return (getattr(sys.modules.get(module_name), "__file__", None) or "").startswith(prefixes)

    for name, module in list(sys.modules.items()):
        if loaded_from_prefixes(name):
            for value in list(vars(module).values()):
                add(value)
    frame = sys._getframe()
    while frame is not None:
        found.add(frame.f_code)
        frame = frame.f_back
    return frozenset(found)


def arm(trusted: frozenset[Any] = frozenset()) -> None:
    """From now on, end the process on a refused event. ``trusted`` (``trusted_code``): a ctypes event whose
    every frame runs one of these code objects is the judge's own (the cuBLAS baseline) and goes through."""
    import ctypes  # noqa: F401  (loaded now: its import opens libraries, which is refused once armed)

    exit_now, write, refused, getframe = os._exit, os.write, REFUSED_EVENTS, sys._getframe

    protected, ctypes_events = PROTECTED_NAMESPACES, CTYPES_EVENTS

    def judges_own(frame: Any) -> bool:
        while frame is not None:
            if frame.f_code not in trusted:
                return False
            frame = frame.f_back
        return True

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == LIBRARY_EVENT and len(args) > 1 and args[1] in protected:
            event = f"torch.library in namespace {args[1]}"
        elif event not in refused or (event in ctypes_events and trusted and judges_own(getframe(1))):
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

"""Stores outside every buffer, caught where they happen under the CPU interpreter.

On a GPU a store past the end of a buffer is an illegal address (or, within the allocation's rounding, a
silent write); under ``TRITON_INTERPRET=1`` it is a write into the host's heap, which crashes the process
with a SIGSEGV on whichever later case the corruption happens to reach, or never. So on the interpreter
chip every store and atomic a kernel makes is checked, as it is made, against the memory it may write: the
storages of the launch's tensor arguments, of the call's arguments (pointer tables point into them) and of
the tensors the call allocated. The first address outside all of them raises ``OutOfBoundsStore`` naming
the kernel, the nearest buffer and how far outside it the address is: the case where the bug first writes
out of bounds, every run, instead of a crash somewhere later.

Loads are not checked: an unmasked load a few elements past the end reads memory nobody uses, gives the same
answer on a GPU, and is how many honest kernels are written; what it reads is judged by the outputs.

Runs in the sandbox, so the kernel can reach it; switching it off only hides the kernel's own bug (the
process then crashes or corrupts its outputs as before).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from evaluation.judge.compare import flat_tensors
from evaluation.judge.untrusted import guard

KERNEL_FILE = "candidate_kernel.py"  # where the harness writes the candidate's source (harness.load)


class OutOfBoundsStore(RuntimeError):
    """A kernel under the CPU interpreter stored to an address outside every buffer it may write."""


class _Writable:
    """The address ranges a kernel may write: [start, end) with a label each."""

    def __init__(self) -> None:
        self.call: dict[int, tuple[int, str]] = {}  # storage start -> (end, label)
        self.launch: dict[int, tuple[int, str]] = {}
        self.kernel = "a kernel"

    def add(self, table: dict[int, tuple[int, str]], value: Any, label: str) -> None:
        for tensor in flat_tensors(value):
            try:
                storage = tensor.untyped_storage()
                start, size = guard.storage_address(storage), storage.nbytes()
            except (RuntimeError, NotImplementedError):  # meta or sparse tensors have no host memory
                continue
            if start and size and start not in table:
                table[start] = (start + size, label)

    def ranges(self) -> list[tuple[int, int, str]]:
        spans = {**self.call, **self.launch}  # a launch argument's name beats "a tensor of the call"
        return sorted((start, end, label) for start, (end, label) in spans.items())


WRITABLE = _Writable()


@contextlib.contextmanager
def call_writes(args: Any, kwargs: Any) -> Iterator[None]:
    """Around one call of the candidate: its arguments are writable (and what it allocates, via
    ``allocated``); nothing of it stays writable after."""
    WRITABLE.call.clear()
    WRITABLE.add(WRITABLE.call, (args, kwargs), "a tensor argument of the call")
    try:
        yield
    finally:
        WRITABLE.call.clear()
        WRITABLE.launch.clear()


def allocated(tensor: Any) -> None:
    """A tensor the call made (the dispatch audit sees every allocation): writable for the rest of the call."""
    WRITABLE.add(WRITABLE.call, tensor, "a tensor the call allocated")


def check(addresses: np.ndarray, mask: np.ndarray | None, element_bytes: int, what: str) -> None:
    """Raise OutOfBoundsStore unless every address the mask enables lies within a writable range."""
    if mask is not None:
        # By truth, never as indices: a block comparison and-ed with a scalar one reaches the store as int64
        # 0s and 1s (an honest paged-cache kernel's padding-token mask crashed here as an IndexError).
        addresses = addresses[np.broadcast_to(mask, addresses.shape).astype(bool, copy=False)]
    addresses = addresses.reshape(-1)
    if addresses.size == 0:
        return
    lowest, highest = int(addresses.min()), int(addresses.max()) + element_bytes
    ranges = WRITABLE.ranges()
    if any(start <= lowest and highest <= end for start, end, _ in ranges):
        return  # the usual case: one buffer holds every address
    starts = np.array([start for start, _, _ in ranges], dtype=np.uint64)
    ends = np.array([end for _, end, _ in ranges], dtype=np.uint64)
    index = np.searchsorted(starts, addresses, side="right").astype(np.int64) - 1
    inside = index >= 0
    inside[inside] &= addresses[inside] + np.uint64(element_bytes) <= ends[index[inside]]
    if bool(inside.all()):
        return
    outside = int(addresses[~inside][0])
    raise OutOfBoundsStore(
        f"out-of-bounds {what} by {WRITABLE.kernel}{_kernel_line()}: {_where(outside, ranges)} "
        f"({int((~inside).sum())} of that {what}'s {addresses.size} addresses are outside every buffer)"
    )


def _kernel_line() -> str:
    """ " at line N of the kernel" for the innermost frame of the candidate's file (the interpreter runs the
    jit body as Python compiled from that file), so the run page links the store; "" if none is found."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith(KERNEL_FILE):
            return f" at line {frame.f_lineno} of the kernel"
        frame = frame.f_back
    return ""


def _where(address: int, ranges: list[tuple[int, int, str]]) -> str:
    """Where an address lies relative to the nearest writable buffer, in words."""
    if not ranges:
        return f"address {address:#x}, and the kernel was given no buffer"

    def distance(span: tuple[int, int, str]) -> int:
        start, end, _ = span
        return start - address if address < start else address - end + 1

    start, end, label = min(ranges, key=distance)
    if address == end:
        return f"the first byte past the end of {label} ({end - start} bytes)"
    if address > end:
        return f"{address - end} bytes past the end of {label} ({end - start} bytes)"
    return f"{start - address} bytes before the start of {label} ({end - start} bytes)"


def install() -> None:
    """Wrap the interpreter's stores and atomics with the check, and each launch with its arguments."""
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    store, rmw, cas = builder.create_masked_store, builder.create_atomic_rmw, builder.create_atomic_cas
    init_args = interpreter.GridExecutor._init_args_hst

    def element_bytes(pointers: Any) -> int:
        return max(1, pointers.get_element_ty().primitive_bitwidth // 8)

    def mask_of(mask: Any) -> np.ndarray:
        return mask if isinstance(mask, np.ndarray) else mask.data  # block pointers' stores pass a bare array

    def checked_store(self: Any, ptrs: Any, value: Any, mask: Any, *rest: Any) -> Any:
        check(ptrs.data, mask_of(mask), element_bytes(ptrs), "store")
        return store(self, ptrs, value, mask, *rest)

    def checked_rmw(self: Any, op: Any, ptr: Any, val: Any, mask: Any, *rest: Any) -> Any:
        check(ptr.data, mask_of(mask), element_bytes(ptr), "atomic")
        return rmw(self, op, ptr, val, mask, *rest)

    def checked_cas(self: Any, ptr: Any, *rest: Any) -> Any:
        check(ptr.data, None, element_bytes(ptr), "atomic")
        return cas(self, ptr, *rest)

    def launch_arguments(self: Any, args_dev: Any, kwargs: Any) -> Any:
        args_hst, kwargs_hst = init_args(self, args_dev, kwargs)
        WRITABLE.launch.clear()
        WRITABLE.kernel = f"kernel `{getattr(self.fn, '__name__', 'kernel')}`"
        for name, value in zip(self.arg_names, args_hst, strict=False):
            WRITABLE.add(WRITABLE.launch, value, f"argument `{name}`")
        for name, value in kwargs_hst.items():
            WRITABLE.add(WRITABLE.launch, value, f"argument `{name}`")
        return args_hst, kwargs_hst

    builder.create_masked_store = checked_store
    builder.create_atomic_rmw = checked_rmw
    builder.create_atomic_cas = checked_cas
    interpreter.GridExecutor._init_args_hst = launch_arguments

"""What a failure in the kernel's process says about the kernel, in one line.

A device fault (an illegal address, a failed device assertion, a launch failure) is the kernel's: it is a
``failed_runtime`` with its cause named, never an ``error`` (which is retried and kept out of a method's
accuracy). The texts are those of the CUDA runtime as torch and Triton relay them; other backends relay the
same causes in similar words.
"""

from __future__ import annotations

# (text the runtime prints, lower case) -> the cause as a run page says it
DEVICE_FAULTS: tuple[tuple[str, str], ...] = (
    ("illegal memory access", "illegal memory access: the kernel read or wrote outside its buffers"),
    ("illegal address", "illegal address: the kernel read or wrote outside its buffers"),
    # The CPU interpreter's bounds check (untrusted/interpreter_bounds.py): the same fault, caught on the host.
    ("out-of-bounds store", "out-of-bounds store: the kernel wrote outside its buffers"),
    ("out-of-bounds atomic", "out-of-bounds atomic: the kernel wrote outside its buffers"),
    ("misaligned address", "misaligned address: a load or store at an address its type cannot take"),
    ("device-side assert", "a device-side assertion failed"),
    ("unspecified launch failure", "the launch failed on the device"),
    ("illegal instruction", "the device met an illegal instruction"),
    ("invalid program counter", "the device jumped to an invalid address"),
    ("too many resources requested for launch", "too many resources requested for launch (registers per block)"),
    ("outofresources", "the kernel needs more shared memory or registers than the device has"),
    ("out of resource", "the kernel needs more shared memory or registers than the device has"),
)


def device_fault(text: str) -> str | None:
    """The cause of a device fault named in ``text`` (a traceback or a message), or None."""
    lowered = text.lower()
    squeezed = lowered.replace(" ", "").replace("_", "")
    for needle, cause in DEVICE_FAULTS:
        if needle in lowered or needle.replace(" ", "") in squeezed:
            return cause
    return None


def last_line(text: str, limit: int = 500) -> str:
    """The last non-blank line of a traceback: the exception itself."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "unknown error")[:limit]


def tail_lines(text: str, limit: int = 2000) -> str:
    """The end of ``text`` within ``limit`` characters, cut at a line boundary (never mid-line)."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    newline = cut.find("\n")
    return cut[newline + 1 :] if 0 <= newline < len(cut) - 1 else cut

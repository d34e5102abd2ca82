"""A stream hold the host ends: a device-side wait that polls a flag in pinned host memory.

The timed loop holds its stream before each call so that the start event runs only once the call is
enqueued (clock.StreamHolds). A spin of fixed length has to guess how long the enqueue takes: it is sized
1.5x the longest of the side's last 8 enqueues, and on the H200 it held 0.23-0.7 ms for enqueues of
0.13-0.42 ms, device time during which the GPU, held alone by one judge, did nothing. This hold waits for
the host to say the call is enqueued (``release``, right after the end event is recorded), so it lasts the
enqueue and a flag's trip over the bus; it still ends by itself after ``limit_ms`` (a call that waits for
the device inside, such as a readback, must not wait for a release that only comes after it returns).
"""

from __future__ import annotations

import time

import torch
import triton
import triton.language as tl


@triton.jit
def _now_ns():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


# Not specialised on its integers: a ticket that happened to be 1 or a multiple of 16 would compile another
# variant, inside the exclusive hold.
@triton.jit(do_not_specialize=["ticket", "limit_ns"])
def _wait_for_release(flag_ptr, ticket, limit_ns):
    started = _now_ns()
    waiting = tl.load(flag_ptr, volatile=True) < ticket
    while waiting:
        waiting = (tl.load(flag_ptr, volatile=True) < ticket) & (_now_ns() - started < limit_ns)


class ReleasedHold:
    """One per sandbox: ``hold`` enqueues a wait for the next ticket, ``release`` hands that ticket out."""

    def __init__(self) -> None:
        self.flag = torch.zeros(1, dtype=torch.int32, pin_memory=True)
        self.flag_view = self.flag.numpy()  # host writes land in the pinned page the kernel polls
        self.ticket = 0

    def hold(self, limit_ms: float) -> None:
        self.ticket += 1
        _wait_for_release[(1,)](self.flag, self.ticket, int(limit_ms * 1e6))

    def release(self) -> None:
        self.flag_view[0] = self.ticket


def build_released_hold(synchronize) -> tuple[ReleasedHold | None, str]:
    """A working hold (compiled and tried both ways: released at once, and ending by itself), or None and
    why not; the timed loop then spins as before."""
    try:
        hold = ReleasedHold()
        started = time.perf_counter()
        hold.hold(limit_ms=50.0)
        hold.release()
        synchronize()
        released_s = time.perf_counter() - started
        started = time.perf_counter()
        hold.hold(limit_ms=2.0)  # never released: ends by its own limit
        synchronize()
        hold.release()
        unreleased_s = time.perf_counter() - started
    except Exception as error:  # no pinned memory, no inline PTX on this family, a compile failure
        return None, f"spin (no released hold: {type(error).__name__}: {str(error)[:200]})"
    if unreleased_s < 0.0015:
        return None, f"spin (no released hold: an unreleased hold ended after {unreleased_s * 1000:.2f} ms)"
    return hold, f"released (first released in {released_s * 1000:.1f} ms, unreleased {unreleased_s * 1000:.2f} ms)"

"""The host time the judge adds to one Triton launch, by way of counting it: the sandbox's wrapper of
``JITFunction.run`` (guard._wrap_run, every audited call) against Triton's own ``run`` with the launch counted
by Triton's launcher hook (guard.bare_launches, the protocol stage's loops since its version 42).

    PYTHONPATH=. python scripts/bench_launch_wrapper.py [--calls 200000] [--repeats 7]

No GPU: Triton's ``run`` is stood in for by a function of the same signature that does nothing, and the
launcher's hook chain by Triton's own ``HookChain`` (which the C launcher calls before every launch, empty or
not), so what is printed is the difference each way of counting makes, best of the repeats, per launch. On a
launch-bound call (10-20 us on the H200) that difference is read as the kernel's.
"""

from __future__ import annotations

import argparse
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.judge.untrusted import guard  # noqa: E402
from evaluation.judge.untrusted.gpu_gate import CompileWindows  # noqa: E402


class StandIn:
    """A kernel whose ``run`` does what Triton's costs nothing for: the same signature, no work."""

    def run(self, *args, grid, warmup, **kwargs):  # noqa: ANN001, ANN002, ANN003 - Triton's own signature
        return None


def per_launch_us(function, calls: int, repeats: int) -> float:
    return min(timeit.repeat(function, number=calls, repeat=repeats)) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    from triton.knobs import HookChain

    kernel, original = StandIn(), StandIn.run
    empty_chain, counting_chain = HookChain(), HookChain()
    counting_chain.add(guard._count_launch)

    def launch(chain: HookChain) -> None:
        kernel.run(1, 2, 3, grid=(1,), warmup=False, BLOCK=128)
        chain(None)  # the launcher's enter hook, as Triton's C launcher calls it

    guard.STATE.reset(ghost=False)
    # As in the sandbox, where a launch first takes the GPU back from a compilation's lending if it was lent.
    guard.STATE.before_launch = CompileWindows(harness=None).take_back
    plain = per_launch_us(lambda: launch(empty_chain), args.calls, args.repeats)
    StandIn.run = guard._wrap_run(original, StandIn)
    wrapped = per_launch_us(lambda: launch(empty_chain), args.calls, args.repeats)
    StandIn.run = original
    bare = per_launch_us(lambda: launch(counting_chain), args.calls, args.repeats)
    guard.STATE.reset(ghost=False)
    guard.STATE.before_launch = None
    print(f"per launch, best of {args.repeats} x {args.calls:,} (Python {sys.version.split()[0]}):")
    print(f"  Triton's run and an empty hook chain (a plain process)   {plain:6.3f} us")
    print(f"  the judge's wrapper (audited calls)                      {wrapped:6.3f} us  (+{wrapped - plain:.3f} us)")
    print(f"  Triton's run, counted by the launcher hook (bare)        {bare:6.3f} us  (+{bare - plain:.3f} us)")
    print(f"  the wrapper's added host time over bare launches: {(wrapped - plain) / max(bare - plain, 1e-9):.1f}x")


if __name__ == "__main__":
    main()

"""Where a candidate's call latency goes on the host (GPU only): one reference kernel's call on a 1-element
input, timed as do_bench times it and by the host clock, in a plain process, then with the judge's launch
hooks installed, then with its dispatch audit around the call too, against the ATen op it implements.

    PYTHONPATH=. python3 scripts/gpu/launch_overhead.py [aten__cos.py]

The protocol stage times the latency a caller sees (do_bench's window), so whatever of ours runs inside a
call lands in the candidate's figure; this says how much that is, beside what Triton's launch itself costs.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from pathlib import Path

import torch
import triton.testing

KERNELS = Path(__file__).resolve().parents[2] / "evaluation" / "catalog" / "reference_kernels"


def host_us(fn, calls: int = 2000) -> float:
    """Median host microseconds of one call (synchronised every 100 calls, so the queue never fills)."""
    samples = []
    for _ in range(calls // 100):
        torch.cuda.synchronize()
        started = time.perf_counter()
        for _ in range(100):
            fn()
        samples.append((time.perf_counter() - started) * 1e4)  # us per call
    torch.cuda.synchronize()
    return statistics.median(samples)


def main() -> None:
    name = sys.argv[1] if len(sys.argv) > 1 else "aten__cos.py"
    spec = importlib.util.spec_from_file_location("candidate", KERNELS / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    entry = getattr(module, name.split("__", 1)[1].removesuffix(".py"))
    x = torch.randn(1, device="cuda")
    reference = getattr(torch, entry.__name__)

    def row(label, fn):
        fn()
        torch.cuda.synchronize()
        bench = triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median") * 1000
        print(f"{label:44s} do_bench {bench:8.2f} us   host {host_us(fn):8.2f} us per call", flush=True)

    row(f"aten {entry.__name__}", lambda: reference(x))
    row(f"candidate {name}, plain process", lambda: entry(x))
    from evaluation.judge.untrusted import guard

    guard.install_launch_hooks()
    row("candidate, launch hooks installed", lambda: entry(x))
    guard.STATE.watch_stream(torch.cuda.current_stream(), torch.cuda.current_stream)
    row("candidate, hooks + timed-stream watch", lambda: entry(x))

    def audited():
        with guard.audited():
            entry(x)

    row("candidate, hooks + watch + dispatch audit", audited)
    guard.STATE.watch_stream(None, None)


if __name__ == "__main__":
    main()

"""How a judge's host thread waits for the GPU, per CUDA scheduling mode (backends.Backend.set_host_wait).

Prints, for each mode set on an already active context (as a prewarmed sandbox's is):
  - what set_host_wait said;
  - the CPU time the process spent while the device ran a 100 ms spin (spin: ~100 ms; block: ~0);
  - the wall time of a short launch + synchronize round trip (what a timed loop pays per wait);
then the timed loop's two stream holds (clock.StreamHolds: a spin sized from recent enqueues, or the released
hold of untrusted/released_hold.py) on one small and one larger kernel: the loop's wall time per iteration
and the medians it measured, which must agree between the two; then, with ``--contended N``, N processes
that each wait for 2 ms device spins in a loop beside N processes of pure-Python work on the same cores:
the Python work done in a fixed time, per mode, as a ratio of the same work done with nothing waiting beside
it (the baseline, measured in this run).

    python3 scripts/gpu/host_wait_check.py [--contended 16] [--seconds 8]
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

MODES = ("auto", "spin", "yield", "block")


def calibrated_sleep(torch, ms: float) -> int:
    """Cycles of torch.cuda._sleep that last ``ms`` on this device."""
    cycles = 10_000_000
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda._sleep(cycles // 10)
    start.record()
    torch.cuda._sleep(cycles)
    end.record()
    torch.cuda.synchronize()
    return int(cycles * ms / start.elapsed_time(end))


def one_process_figures() -> list[dict]:
    import torch

    from evaluation.judge.backends import backend_for

    backend = backend_for("cuda")
    torch.zeros(1, device="cuda").add_(1)
    torch.cuda.synchronize()
    long_wait = calibrated_sleep(torch, 100.0)
    small = torch.zeros(1024, device="cuda")
    rows = []
    for mode in MODES + ("spin", "block"):  # and back: a switch must take both ways
        said = backend.set_host_wait(mode)
        cpu_ms = []
        for _ in range(3):
            cpu = time.process_time()
            torch.cuda._sleep(long_wait)
            torch.cuda.synchronize()
            cpu_ms.append((time.process_time() - cpu) * 1000)
        round_trips = []
        for _ in range(2000):
            started = time.perf_counter()
            small.add_(1)
            torch.cuda.synchronize()
            round_trips.append((time.perf_counter() - started) * 1e6)
        rows.append(
            {
                "mode": mode,
                "said": said,
                "cpu_ms_during_100ms_wait": round(statistics.median(cpu_ms), 1),
                "round_trip_us_median": round(statistics.median(round_trips), 1),
                "round_trip_us_p90": round(sorted(round_trips)[int(0.9 * len(round_trips))], 1),
            }
        )
    return rows


def hold_figures() -> list[dict]:
    import torch

    from evaluation.judge.untrusted.released_hold import build_released_hold
    from evaluation.judge.untrusted.timing import time_interleaved

    released, said = build_released_hold(torch.cuda.synchronize)
    print(f"released hold: {said}")
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.uint8, device="cuda")
    rows = []
    for elements in (4096, 16 * 1024 * 1024):
        sets = [{"args": [torch.randn(elements, device="cuda")], "kwargs": {}} for _ in range(4)]
        for name, hold in (("spin", None), ("released", released), ("spin", None), ("released", released)):
            if name == "released" and hold is None:
                continue
            result = time_interleaved(
                candidate=torch.cos,
                reference=lambda args, kwargs: torch.sin(*args, **kwargs),
                candidate_sets=sets,
                reference_sets=sets,
                flush_buffer=flush,
                budget_s=5.0,
                rse_target=0.0,
                min_iterations=200,
                max_iterations=200,
                spot_checks=0,
                rng=random.Random(0),
                keep_alive=[],
                min_launches=0,
                math_isfinite=math.isfinite,
                spin=torch.cuda._sleep,
                stream_of=torch.cuda.current_stream,
                released_hold=hold,
            )
            rows.append(
                {
                    "elements": elements,
                    "hold": name,
                    "loop_ms_per_iteration": round(result["loop_s"] * 1000 / (result["iterations"] + 3), 4),
                    "candidate_ms": round(statistics.median(result["candidate_ms"]), 5),
                    "reference_ms": round(statistics.median(result["reference_ms"]), 5),
                    "exposed": [result["holds"]["candidate_exposed_calls"], result["holds"]["reference_exposed_calls"]],
                }
            )
            print(rows[-1])
    return rows


def waiter(mode: str, seconds: float, ready, go) -> None:
    import torch

    from evaluation.judge.backends import backend_for

    torch.zeros(1, device="cuda").add_(1)
    backend_for("cuda").set_host_wait(mode)
    cycles = calibrated_sleep(torch, 2.0)
    ready.release()
    go.wait()
    ends = time.perf_counter() + seconds
    while time.perf_counter() < ends:
        torch.cuda._sleep(cycles)
        torch.cuda.synchronize()


def python_work(seconds: float, counter, go) -> None:
    go.wait()
    ends, done = time.perf_counter() + seconds, 0
    while time.perf_counter() < ends:
        sum(i * i for i in range(2000))
        done += 1
    with counter.get_lock():
        counter.value += done


def contended(processes: int, seconds: float, mode: str | None) -> int:
    context = multiprocessing.get_context("spawn")
    counter = context.Value("q", 0)
    go = context.Event()
    ready = context.Semaphore(0)
    waiters = (
        []
        if mode is None
        else [context.Process(target=waiter, args=(mode, seconds, ready, go)) for _ in range(processes)]
    )
    workers = [context.Process(target=python_work, args=(seconds, counter, go)) for _ in range(processes)]
    for process in waiters + workers:
        process.start()
    for _ in waiters:
        ready.acquire()
    go.set()
    for process in waiters + workers:
        process.join()
    return counter.value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--contended", type=int, default=0)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    figures: dict = {"cores": os.cpu_count(), "one_process": one_process_figures()}
    print(f"{'mode':6s} {'set_host_wait said':24s} {'CPU ms in 100 ms wait':>22s} {'round trip us (p50/p90)':>24s}")
    for row in figures["one_process"]:
        print(
            f"{row['mode']:6s} {row['said'][:24]:24s} {row['cpu_ms_during_100ms_wait']:22.1f} "
            f"{row['round_trip_us_median']:12.1f}/{row['round_trip_us_p90']:.1f}"
        )
    figures["holds"] = hold_figures()
    if args.contended:
        baseline = contended(args.contended, args.seconds, None)
        figures["contended"] = {"processes": args.contended, "seconds": args.seconds, "baseline_work": baseline}
        print(f"\n{args.contended} waiters beside {args.contended} Python workers, {args.seconds:g} s each:")
        print(f"  nothing waiting: {baseline} units of Python work (1.00)")
        for mode in ("auto", "yield", "block"):
            work = contended(args.contended, args.seconds, mode)
            figures["contended"][mode] = work
            print(f"  waiters {mode:5s}: {work} units ({work / baseline:.2f} of nothing waiting)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()

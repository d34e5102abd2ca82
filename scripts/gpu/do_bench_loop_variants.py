"""Which change to the protocol stage's loop brings its figure to do_bench's (GPU only), in one plain process.

    PYTHONPATH=. python3 scripts/gpu/do_bench_loop_variants.py [--ops aten::clone,aten::cos] [--cases 10]

do_bench_parity.py showed that the judge's do_bench loop, with the stage's own call counts, reads a larger
host overhang on launch-bound calls than ``triton.testing.do_bench(warmup=25, rep=100)`` in the same plain
process, without the sandbox and without the launch hooks. Its loop runs a few calls a batch after a
synchronize; do_bench's median is the steady state of a 25 ms warm-up and a 100 ms loop. Each variant below
changes one thing of the judge's loop; per operator the script prints the geometric mean over its cases of
(the variant's speedup / do_bench's), and per case the candidate's microseconds under each:

- ``judge``: the loop as the protocol stage runs it;
- ``untimed25``: 25 untimed iterations a batch (flushed, as the timed ones) instead of 5;
- ``unflushed20``: 20 unflushed calls before each batch, as do_bench's warm-up calls are;
- ``host_spin``: the host busy for 1 ms before each batch, no calls (is it the CPU's state, not the code's?);
- ``long``: 100 timed calls a batch (the budget lifted): the short loop's cost against its length;
- ``do_bench_small``: do_bench itself with warmup=1, rep=4 (ms): its own shape at the stage's scale.

The launch hooks are installed before the variants run (as in the sandbox), after do_bench has run once
without them; do_bench then runs again with them (``do_bench_hooked``).

``--pins local,remote``: then do_bench and the judge's loop again with this process pinned to one CPU near
the GPU (its PCI device's ``local_cpulist``) and to one CPU of another NUMA node. On the H200 the judge's
figure for a launch-bound operator flips with the process that times it (every case of one sandbox reads
the host's launch path, every case of the next reads the kernel alone), as do_bench's does with its; which
CPU a process runs on is the first suspect.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import torch
import triton.testing

from evaluation.judge.records import find_operator
from evaluation.judge.untrusted import guard, timing_do_bench

sys.path.insert(0, str(Path(__file__).resolve().parent))
from do_bench_parity import judge_loop, load, prepared  # noqa: E402

ORIGINAL_BATCH = timing_do_bench._batch


def unflushed_first(thunk, restore, *args, **kwargs):
    for _ in range(20):
        if restore is not None:
            restore()
        thunk()
    return ORIGINAL_BATCH(thunk, restore, *args, **kwargs)


def host_spin_first(*args, **kwargs):
    until = time.perf_counter() + 0.001
    while time.perf_counter() < until:
        pass
    return ORIGINAL_BATCH(*args, **kwargs)


def variant(name, function, reference, calls, flush, mutates):
    timing_do_bench._batch = ORIGINAL_BATCH
    steady = timing_do_bench.STEADY_STATE_CALLS
    try:
        if name == "untimed25":
            timing_do_bench.STEADY_STATE_CALLS = 25
        elif name == "unflushed20":
            timing_do_bench._batch = unflushed_first
        elif name == "host_spin":
            timing_do_bench._batch = host_spin_first
        if name == "long":
            return judge_loop(function, reference, calls, flush, mutates, budget_s=1.0, iterations=100)
        return judge_loop(function, reference, calls, flush, mutates)
    finally:
        timing_do_bench._batch = ORIGINAL_BATCH
        timing_do_bench.STEADY_STATE_CALLS = steady


VARIANTS = ("judge", "untimed25", "unflushed20", "host_spin", "long")


def parse_cpulist(text: str) -> list[int]:
    """``0-3,8,10-11`` -> [0, 1, 2, 3, 8, 10, 11] (the kernel's cpulist format)."""
    cpus: list[int] = []
    for part in text.strip().split(","):
        if "-" in part:
            low, high = part.split("-")
            cpus += range(int(low), int(high) + 1)
        elif part:
            cpus.append(int(part))
    return cpus


def gpu_local_cpus() -> list[int]:
    """The CPUs of the GPU's NUMA node, from its PCI device's local_cpulist ([] where unknown)."""
    properties = torch.cuda.get_device_properties(0)
    bus_id = getattr(properties, "pci_bus_id", None)
    domain = getattr(properties, "pci_domain_id", 0)
    device_id = getattr(properties, "pci_device_id", 0)
    if bus_id is None:
        return []
    path = f"/sys/bus/pci/devices/{domain:04x}:{bus_id:02x}:{device_id:02x}.0/local_cpulist"
    try:
        with open(path) as handle:
            return parse_cpulist(handle.read())
    except OSError:
        return []


def current_cpu() -> int:
    with open("/proc/self/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[36])


def bench(thunks, warmup=25, rep=100):
    return [triton.testing.do_bench(thunk, warmup=warmup, rep=rep, return_mode="median") * 1000 for thunk in thunks]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", default="aten::clone,aten::cos,aten::zero_,aten::bitwise_not,aten::mish")
    parser.add_argument("--cases", type=int, default=10)
    parser.add_argument("--pins", default="", help="local,remote: the same again pinned to such a CPU")
    args = parser.parse_args()
    allowed = sorted(os.sched_getaffinity(0))
    local = [cpu for cpu in gpu_local_cpus() if cpu in allowed]
    remote = [cpu for cpu in allowed if cpu not in local]
    print(f"CPUs allowed {len(allowed)}; near the GPU {local or 'unknown'}; running on CPU {current_cpu()}")
    device = torch.device("cuda")
    flush = torch.empty(256 * 1024**2, dtype=torch.uint8, device=device)  # the sandbox's buffer: bytes
    cases = []
    for operator_id in args.ops.split(","):
        spec, module = find_operator(operator_id), load(operator_id)
        for case in [case for case in spec.cases("public") if case.timed][: args.cases]:
            cases.append((operator_id, case.case_id, *prepared(spec, module, case, device)))
    figures: dict[tuple[str, str], dict[str, tuple[float, float]]] = {}
    for operator_id, case_id, *_, candidate_thunk, reference_thunk in cases:
        figures[(operator_id, case_id)] = {"do_bench": tuple(bench((candidate_thunk, reference_thunk)))}
    guard.install_launch_hooks()
    for operator_id, case_id, function, reference, calls, mutates, candidate_thunk, reference_thunk in cases:
        row = figures[(operator_id, case_id)]
        row["do_bench_hooked"] = tuple(bench((candidate_thunk, reference_thunk)))
        row["do_bench_small"] = tuple(bench((candidate_thunk, reference_thunk), warmup=1, rep=4))
        for name in VARIANTS:
            row[name] = variant(name, function, reference, calls, flush, mutates)
    columns = ["do_bench", "do_bench_hooked", "do_bench_small", *VARIANTS]
    for pin in [pin for pin in args.pins.split(",") if pin]:
        cpus = local if pin == "local" else remote
        if not cpus:
            print(f"no CPU to pin to for {pin!r}: skipped")
            continue
        os.sched_setaffinity(0, {cpus[len(cpus) // 2]})
        for operator_id, case_id, function, reference, calls, mutates, candidate_thunk, reference_thunk in cases:
            row = figures[(operator_id, case_id)]
            row[f"do_bench@{pin}"] = tuple(bench((candidate_thunk, reference_thunk)))
            row[f"judge@{pin}"] = variant("judge", function, reference, calls, flush, mutates)
        columns += [f"do_bench@{pin}", f"judge@{pin}"]
        os.sched_setaffinity(0, set(allowed))
    print("candidate us per case (reference us of do_bench in brackets)")
    print(f"{'case':<58}" + "".join(f"{name[:13]:>14}" for name in columns))
    for (_operator, case_id), row in figures.items():
        print(
            f"{case_id[:57]:<58}"
            + "".join(f"{row[name][0]:>14.1f}" for name in columns)
            + f"   [{row['do_bench'][1]:.1f}]"
        )
    print("\nper operator: geometric mean over its cases of (speedup by the column / do_bench's speedup)")
    print(f"{'operator':<22}" + "".join(f"{name[:13]:>14}" for name in columns[1:]))
    for operator_id in args.ops.split(","):
        rows = [row for (op, _), row in figures.items() if op == operator_id]
        if not rows:
            continue

        def ratio(name, rows=rows):
            logs = [math.log((row[name][1] / row[name][0]) / (row["do_bench"][1] / row["do_bench"][0])) for row in rows]
            return math.exp(sum(logs) / len(logs))

        print(f"{operator_id:<22}" + "".join(f"{ratio(name):>14.3f}" for name in columns[1:]))
    pins = [column.split("@", 1)[1] for column in columns if column.startswith("judge@")]
    if pins:
        print("\npinned: geometric mean of (the judge's loop's speedup / do_bench's), both on that CPU")
        print(f"{'operator':<22}" + "".join(f"{pin:>14}" for pin in pins))
        for operator_id in args.ops.split(","):
            rows = [row for (op, _), row in figures.items() if op == operator_id]
            logs = {
                pin: [
                    math.log(
                        (row[f"judge@{pin}"][1] / row[f"judge@{pin}"][0])
                        / (row[f"do_bench@{pin}"][1] / row[f"do_bench@{pin}"][0])
                    )
                    for row in rows
                ]
                for pin in pins
            }
            print(f"{operator_id:<22}" + "".join(f"{math.exp(sum(v) / len(v)):>14.3f}" for v in logs.values() if v))


if __name__ == "__main__":
    main()

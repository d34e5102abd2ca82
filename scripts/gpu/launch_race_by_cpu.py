"""Is a launch-bound case's do_bench reading set by the CPU its process runs on? (GPU only)

    PYTHONPATH=. python3 scripts/gpu/launch_race_by_cpu.py [--ops aten::clone,aten::cos] [--cases 4]
        [--per-cpu 2] [--unpinned 3] [--budget 220]

On the H200 a launch-bound case (a kernel of a few microseconds behind a 66 us L2 flush) reads either the
kernel alone or the host's launch path past the flush, and which one was set per *process*: every case of one
sandbox read the overhang, every case of the next the kernel alone, do_bench's processes likewise. In
do_bench's loop the host runs ahead of the device only while one iteration's host work (flush launch, two
event records, the candidate's Python and Triton launch) is shorter than the device's (flush plus kernel).

This script runs fresh child processes one after the other, ``--per-cpu`` of them pinned (``taskset``) to
each of a few CPUs (near the GPU by its PCI device's ``local_cpulist`` and, where there is one, away from it)
and ``--unpinned`` more left to the scheduler. Each child times the same launch-bound cases with
``triton.testing.do_bench`` (warmup 25, rep 100, median) and with the judge's do_bench loop, as it is and
changed one way at a time (LOOP_VARIANTS: a head start, more untimed iterations), and measures the host's time
for one candidate call and the flush's device time. It prints each child's figures against the least any child
read, then each loop against do_bench in the same child: how often it agrees within 10 %, and on which side
it misses (the protocol stage's target). If children pinned to one CPU agree with each
other and differ from another CPU's, the CPU decides; if children on one CPU differ among themselves, some
other per-process state does.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_OPS = "aten::clone,aten::cos,aten::silu,aten::mish,aten::bitwise_not"
# The judge's loop, as it is and changed one way at a time (row key: (title, head start ms, untimed iterations
# a launch-bound batch runs first; None: the loop's own STEADY_STATE_CALLS)):
# - "head start": the device kept busy 0.3 ms by a device-side spin before each batch, as protocol-stage
#   version 14 had it (withdrawn in version 15: in the sandbox it read the kernel alone where do_bench read the
#   host's launch path, since a few untimed iterations cannot drain such a lead);
# - "head 0.07": a spin of about one L2 flush, a lead a slower host drains within the untimed iterations;
# - "untimed 25": no head start and 25 untimed iterations, do_bench's steady state reached by the loop itself.
LOOP_VARIANTS = {
    "judge_us": ("judge loop", 0.0, None),
    "head_start_us": ("head start", 0.3, None),
    "short_head_us": ("head 0.07", 0.07, None),
    "untimed25_us": ("untimed 25", 0.0, 25),
}
# The table's timers (title, row key): do_bench, then each loop variant.
TIMERS = (("do_bench", "do_bench_us"), *((title, key) for key, (title, _, _) in LOOP_VARIANTS.items()))


def with_head_start(timing_do_bench, spin_cycles: int):
    """A ``_batch`` for ``timing_do_bench`` that spins the device ``spin_cycles`` before the batch's first
    launch: its launches queue behind the spin, outside every window."""
    import torch

    batch = timing_do_bench._batch

    def ahead(*args, **kwargs):
        torch.cuda._sleep(spin_cycles)
        return batch(*args, **kwargs)

    return ahead


@contextlib.contextmanager
def loop_variant(timing_do_bench, head_start_ms: float, untimed: int | None, cycles_per_ms: float):
    """``timing_do_bench`` changed as one LOOP_VARIANTS entry says, put back on leaving."""
    batch, steady = timing_do_bench._batch, timing_do_bench.STEADY_STATE_CALLS
    if head_start_ms:
        timing_do_bench._batch = with_head_start(timing_do_bench, max(1, int(head_start_ms * cycles_per_ms)))
    if untimed is not None:
        timing_do_bench.STEADY_STATE_CALLS = untimed
    try:
        yield
    finally:
        timing_do_bench._batch, timing_do_bench.STEADY_STATE_CALLS = batch, steady


def child(args: argparse.Namespace) -> None:
    import torch
    import triton.testing

    from evaluation.judge.records import find_operator

    sys.path.insert(0, str(HERE))
    from do_bench_parity import flush_us, judge_loop, load, prepared
    from launch_overhead import host_us

    from evaluation.judge.untrusted import timing_do_bench

    started = time.perf_counter()
    device = torch.device("cuda")
    flush = torch.empty(256 * 1024**2 // 4, dtype=torch.int32, device=device)
    from evaluation.judge.untrusted.clock import calibrate_spin

    cycles_per_ms = calibrate_spin(torch.cuda._sleep, torch.cuda.Event, torch.cuda.synchronize)

    cpus_before = _cpu()
    rows = []
    for operator_id in args.ops.split(","):
        spec, module = find_operator(operator_id), load(operator_id)
        for case in [case for case in spec.cases("public") if case.timed][: args.cases]:
            function, reference, calls, mutates, candidate_thunk, reference_thunk = prepared(spec, module, case, device)
            bench = [
                triton.testing.do_bench(thunk, warmup=25, rep=100, return_mode="median") * 1000
                for thunk in (candidate_thunk, reference_thunk)
            ]
            row = {"operator": operator_id, "case": case.case_id, "do_bench_us": bench}
            for key, (_, head_start_ms, untimed) in LOOP_VARIANTS.items():
                with loop_variant(timing_do_bench, head_start_ms, untimed, cycles_per_ms):
                    row[key] = list(judge_loop(function, reference, calls, flush, mutates))
            row["host_us"] = host_us(candidate_thunk, calls=300)
            rows.append(row)
    report = {
        "cpu_start": cpus_before,
        "cpu_end": _cpu(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "flush_us": flush_us(flush.zero_),
        "seconds": time.perf_counter() - started,
        "rows": rows,
    }
    print("RESULT " + json.dumps(report), flush=True)


def _cpu() -> int:
    with open("/proc/self/stat") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[36])


def _siblings(cpu: int) -> str:
    try:
        return Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text().strip()
    except OSError:
        return "?"


def _local_cpus() -> list[int]:
    """The GPU's NUMA node's CPUs from /sys (every NVIDIA display or 3D controller; the first found)."""
    sys.path.insert(0, str(HERE))
    from do_bench_loop_variants import parse_cpulist

    for device in sorted(Path("/sys/bus/pci/devices").iterdir()):
        try:
            vendor = (device / "vendor").read_text().strip()
            klass = (device / "class").read_text().strip()
        except OSError:
            continue
        if vendor == "0x10de" and klass.startswith(("0x0300", "0x0302")):
            print(
                f"GPU {device.name}: numa_node {_read(device / 'numa_node')}, local_cpulist "
                f"{_read(device / 'local_cpulist')}"
            )
            return parse_cpulist(_read(device / "local_cpulist"))
    return []


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return "?"


def parent(args: argparse.Namespace) -> None:
    allowed = sorted(os.sched_getaffinity(0))
    local = [cpu for cpu in _local_cpus() if cpu in allowed]
    remote = [cpu for cpu in allowed if cpu not in local]
    print(f"CPUs allowed: {allowed}; near the GPU: {local}; away: {remote}")
    near = local or allowed
    chosen = [near[0], near[len(near) // 2], near[-1]]
    if remote:
        chosen += [remote[0], remote[-1]]
    chosen = list(dict.fromkeys(chosen))
    print("pinned CPUs and their SMT siblings: " + ", ".join(f"{cpu} ({_siblings(cpu)})" for cpu in chosen))
    plan = [(cpu, round_) for round_ in range(args.per_cpu) for cpu in chosen] + [
        (None, round_) for round_ in range(args.unpinned)
    ]
    deadline = time.monotonic() + args.budget
    reports = []
    for cpu, _round in plan:
        if time.monotonic() > deadline:
            print(f"budget spent: {len(plan) - len(reports)} children not run")
            break
        command = [sys.executable, __file__, "--child", "--ops", args.ops, "--cases", str(args.cases)]
        if cpu is not None:
            command = ["taskset", "-c", str(cpu), *command]
        finished = subprocess.run(command, capture_output=True, text=True, timeout=120)
        lines = [line for line in finished.stdout.splitlines() if line.startswith("RESULT ")]
        if not lines:
            print(f"child on CPU {cpu} failed: {finished.stderr[-800:]}")
            continue
        report = json.loads(lines[-1][len("RESULT ") :])
        report["pinned"] = cpu
        reports.append(report)
        print(
            f"child {len(reports)}: pinned {cpu if cpu is not None else '-'}, ran on {report['cpu_start']}->"
            f"{report['cpu_end']}, {report['seconds']:.1f} s, flush {report['flush_us']:.1f} us",
            flush=True,
        )
    summarise(reports, args.ops.split(","))


def summarise(reports: list[dict], operators: list[str]) -> None:
    if not reports:
        return
    cases = [(row["operator"], row["case"]) for row in reports[0]["rows"]]
    # Per case, the least candidate time any process read: the kernel alone (the host was ahead there).
    floor = {
        key: min(
            row["do_bench_us"][0]
            for report in reports
            for row in report["rows"]
            if (row["operator"], row["case"]) == key
        )
        for key in cases
    }
    print(
        "\nper child: host us a candidate call (median over cases); per operator the geometric mean of the "
        "candidate's do_bench us / the least any child read (1.0: the kernel alone), then each judge loop's"
    )
    print(
        f"{'child':<7}{'pin':>5}{'cpu':>5}{'flush':>7}{'host':>7}"
        + "".join(f"  {title + ':':<11}" + "".join(f"{op[6:14]:>10}" for op in operators) for title, _ in TIMERS)
    )
    for index, report in enumerate(reports, 1):
        figures = ""
        for _, key in TIMERS:
            by_op = {}
            for operator in operators:
                rows = [row for row in report["rows"] if row["operator"] == operator]
                if rows:
                    by_op[operator] = _gmean([row[key][0] / floor[(operator, row["case"])] for row in rows])
            figures += " " * 13 + "".join(f"{by_op.get(op, float('nan')):>10.2f}" for op in operators)
        host = statistics.median(row["host_us"] for row in report["rows"])
        pin = report["pinned"] if report["pinned"] is not None else "-"
        print(f"{index:<7}{pin!s:>5}{report['cpu_start']:>5}{report['flush_us']:>7.1f}{host:>7.1f}" + figures)
    print(
        "\nagainst do_bench in the same child, per operator (geometric mean over its cases): the candidate's us, "
        "and the speedup (reference us / candidate us), within 10 %, above and below"
    )
    print(
        f"{'timer':<13}{'kernel alone':>14}{'us within':>11}{'above':>7}{'below':>7}"
        f"{'speedup within':>16}{'above':>7}{'below':>7}"
    )
    for title, counts in agreement(reports, operators, floor):
        print(
            f"{title:<13}{counts['alone']:>9} of {counts['figures']:<3}"
            + "".join(
                f"{counts[name]:>{width}}" for name, width in (("us_within", 8), ("us_above", 7), ("us_below", 7))
            )
            + "".join(f"{counts[name]:>{width}}" for name, width in (("within", 16), ("above", 7), ("below", 7)))
        )
    print("\nper case: the candidate's do_bench us in each child (the least in brackets)")
    for key in cases:
        values = [
            next(row["do_bench_us"][0] for row in report["rows"] if (row["operator"], row["case"]) == key)
            for report in reports
        ]
        print(f"{key[1][:50]:<52}[{floor[key]:5.1f}] " + " ".join(f"{value:5.1f}" for value in values))


# A figure within this factor of the least any child read for its case reads the kernel alone.
KERNEL_ALONE = 1.3


def agreement(reports: list[dict], operators: list[str], floor: dict) -> list[tuple[str, dict]]:
    """Per timer, over every (child, operator) figure: how many read the kernel alone (the candidate's us within
    KERNEL_ALONE of the case's floor), and how its candidate us and its speedup compare with do_bench's in the
    same child (within 10 %, above, below), each a geometric mean over the operator's cases."""
    results = []
    for title, key in TIMERS:
        counts = dict.fromkeys(("figures", "alone", "us_within", "us_above", "us_below", "within", "above", "below"), 0)
        for report in reports:
            for operator in operators:
                rows = [row for row in report["rows"] if row["operator"] == operator]
                if not rows:
                    continue
                counts["figures"] += 1
                alone = _gmean([row[key][0] / floor[(operator, row["case"])] for row in rows])
                counts["alone"] += alone <= KERNEL_ALONE
                us = _gmean([row[key][0] / row["do_bench_us"][0] for row in rows])
                speedup = _gmean(
                    [(row[key][1] / row[key][0]) / (row["do_bench_us"][1] / row["do_bench_us"][0]) for row in rows]
                )
                for prefix, ratio in (("us_", us), ("", speedup)):
                    side = "within" if abs(ratio - 1) <= 0.1 else ("above" if ratio > 1 else "below")
                    counts[prefix + side] += 1
        results.append((title, counts))
    return results


def _gmean(values: list[float]) -> float:
    return math.exp(sum(math.log(value) for value in values) / len(values))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", default=DEFAULT_OPS)
    parser.add_argument("--cases", type=int, default=4)
    parser.add_argument("--per-cpu", type=int, default=2)
    parser.add_argument("--unpinned", type=int, default=3)
    parser.add_argument("--budget", type=float, default=220.0, help="seconds after which no child starts")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    (child if args.child else parent)(args)


if __name__ == "__main__":
    main()

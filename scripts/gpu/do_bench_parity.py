"""Where the protocol stage's figure parts from do_bench's (GPU only): per case, the same kernel and inputs
timed four ways in one plain process, so each difference has one cause.

    PYTHONPATH=. python3 scripts/gpu/do_bench_parity.py [--ops aten::bitwise_not,aten::mm] [--cases 8]

1. ``triton.testing.do_bench(warmup=25, rep=100)``, median: the paper's timer;
2. the judge's do_bench loop (untrusted/timing_do_bench.time_like_do_bench) on the same inputs: the loop;
3. the same after the judge's launch hooks are installed (guard.install_launch_hooks): the hooks;
4. the host's time per call (synchronised every 100 calls): how close the call sits to the L2 flush.

The judge's figure itself (a sandbox: another process, its uid, its namespaces) is the fifth column of
``run_all.sh agree_quiet``; if 1-3 agree and that one does not, the difference is the sandbox's.
Launch-bound cases (a few microseconds of kernel) come first: that is where the figures part.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
from pathlib import Path

import torch
import triton.testing

from evaluation.catalog.spec import Call
from evaluation.judge.context import protocol_timing_options
from evaluation.judge.inputs import make_call, to_device
from evaluation.judge.records import find_operator
from evaluation.judge.untrusted import guard
from evaluation.judge.untrusted.timing_do_bench import time_like_do_bench

sys.path.insert(0, str(Path(__file__).resolve().parent))
from launch_overhead import host_us  # noqa: E402  (the same host clock as launch_overhead.py's table)

OPTIONS = protocol_timing_options()
KERNELS = Path(__file__).resolve().parents[2] / "evaluation" / "catalog" / "reference_kernels"


def load(operator_id: str):
    path = KERNELS / (operator_id.replace("::", "__") + ".py")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sides(spec, module, case, device):
    calls = [to_device(make_call(spec, case, seed, device), device) for seed in (0, 1)]
    function = getattr(module, case.entry_point)
    baseline = [
        spec.baseline(case, Call(args=list(call.args), kwargs=dict(call.kwargs))) if spec.baseline else None
        for call in calls
    ]

    def reference(args, kwargs):
        return spec.reference(case, Call(args=list(args), kwargs=dict(kwargs)))

    if all(thunk is not None for thunk in baseline):
        reference.baseline = (spec, case)
    return function, reference, calls, baseline


def prepared(spec, module, case, device):
    """One case ready to time: (function, reference, calls, mutates, candidate thunk, reference thunk), the
    thunks on the first call's inputs, the candidate called once (compiled) and the device idle."""
    function, reference, calls, baseline = sides(spec, module, case, device)
    mutates = spec.entry_point(case.entry_point).mutates
    first = calls[0]
    candidate_thunk = lambda: function(*first.args, **first.kwargs)  # noqa: E731
    reference_thunk = baseline[0] or (lambda: reference(first.args, first.kwargs))
    candidate_thunk()
    torch.cuda.synchronize()
    return function, reference, calls, mutates, candidate_thunk, reference_thunk


def judge_loop(function, reference, calls, flush, mutates, budget_s=None, iterations=None):
    """The judge's do_bench loop on these sides, medians in us; by default with the protocol stage's own
    options, so this loop is the judge's, call counts included (``iterations``: that many a batch)."""
    report = time_like_do_bench(
        candidate=function,
        reference=reference,
        sets=[{"args": list(call.args), "kwargs": dict(call.kwargs)} for call in calls],
        flush_buffer=flush,
        budget_s=budget_s or OPTIONS.budget_s_per_case,
        min_iterations=iterations or OPTIONS.min_iterations,
        max_iterations=iterations or OPTIONS.max_iterations,
        min_launches=1,
        restore_keys=list(mutates),
        clock_warmup_s=0.0,
    )
    return statistics.median(report["candidate_ms"]) * 1000, statistics.median(report["reference_ms"]) * 1000


def flush_us(flush, rounds: int = 50) -> float:
    times = []
    for _ in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        flush()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", default="aten::bitwise_not,aten::mm,aten::cos,aten::sum")
    parser.add_argument("--cases", type=int, default=8)
    args = parser.parse_args()
    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    flush = torch.empty(256 * 1024**2 // 4, dtype=torch.int32, device=device)
    # The flush is one side of the host-device race: do_bench zeroes 256 MB as int32; the sandbox's buffer is
    # bytes, and zeroing it as such is another kernel (the judge's loop views it as int32: do_bench_flush).
    as_bytes = flush.view(torch.uint8)
    print(
        f"256 MB L2 flush, median of 50 between events: as int32 {flush_us(flush.zero_):.1f} us, "
        f"as bytes {flush_us(as_bytes.zero_):.1f} us"
    )
    rows = []
    for operator_id in args.ops.split(","):
        spec, module = find_operator(operator_id), load(operator_id)
        cases = [case for case in spec.cases("public") if case.timed][: args.cases]
        for case in cases:
            function, reference, calls, mutates, candidate_thunk, reference_thunk = prepared(spec, module, case, device)
            bench = [
                triton.testing.do_bench(thunk, warmup=25, rep=100, return_mode="median") * 1000
                for thunk in (candidate_thunk, reference_thunk)
            ]
            loop = judge_loop(function, reference, calls, flush, mutates)
            rows.append([operator_id, case.case_id, *bench, *loop, host_us(candidate_thunk, calls=1000)])
    guard.install_launch_hooks()
    index = 0
    for operator_id in args.ops.split(","):
        spec, module = find_operator(operator_id), load(operator_id)
        for case in [case for case in spec.cases("public") if case.timed][: args.cases]:
            function, reference, calls, _ = sides(spec, module, case, device)
            mutates = spec.entry_point(case.entry_point).mutates
            first = calls[0]
            rows[index] += [*judge_loop(function, reference, calls, flush, mutates)]
            rows[index].append(
                host_us(lambda first=first, function=function: function(*first.args, **first.kwargs), calls=1000)
            )
            index += 1
    print(
        f"{'case':<64}{'do_bench c / r us':>20}{'loop c / r':>16}{'hooks c / r':>16}{'host us':>9}{'hooked':>8}"
        "   speedups: do_bench  loop  hooks"
    )
    for _, case_id, bench_c, bench_r, loop_c, loop_r, host, hooks_c, hooks_r, hooked_host in rows:
        print(
            f"{case_id[:63]:<64}{bench_c:>10.1f}{bench_r:>8.1f}  {loop_c:>7.1f}{loop_r:>7.1f}  "
            f"{hooks_c:>7.1f}{hooks_r:>7.1f}  {host:>7.1f}{hooked_host:>8.1f}   "
            f"{bench_r / bench_c:>8.3f}{loop_r / loop_c:>6.3f}{hooks_r / hooks_c:>7.3f}",
            flush=True,
        )


if __name__ == "__main__":
    main()

"""Where the protocol stage's cuBLAS figure parts from the original's (GPU only): per case, the same kernel
file and the record's baseline timed back to back in one plain process, five ways, so each difference has
one cause.

    PYTHONPATH=. python3 scripts/gpu/back_to_back_parity.py [--ops cublas::cublasSaxpy_v2,...] [--cases 8]

1. the original's timer (scripts/gpu/judge_h200.cublas_events_mean_ms: 10 warm-ups, 100 calls between two
   events, the mean);
2. the judge's loop (untrusted/timing_back_to_back.time_back_to_back) on the same inputs: the loop;
3. the same after the judge's launch hooks are installed (guard.install_launch_hooks): the hooks;
4. the same with Triton's compile hooks set as the sandbox sets them (knobs.runtime.jit_cache_hook and
   jit_post_compile_hook): the compile hooks;
5. the same inside guard.bare_launches, as the sandbox's protocol stage runs the original's loops since
   protocol stage version 42 (Triton's own JITFunction.run, launches counted by its launcher hook): bare;
6. the host's time per candidate call (synchronised every 100 calls), plain, hooked and bare.

On the H200 (2026-12-02) the judge's candidate side of launch-bound cuBLAS cases read 3-9 us a call more
than the same file in a plain process, in a sandbox judged alone; if 1-4 agree here, that time is the
sandbox's (its process, its uid, its namespaces), not the loop's or the hooks'.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from evaluation.catalog.spec import Call
from evaluation.judge.inputs import make_call, to_device
from evaluation.judge.records import find_operator
from evaluation.judge.untrusted import guard
from evaluation.judge.untrusted.timing_back_to_back import time_back_to_back

sys.path.insert(0, str(Path(__file__).resolve().parent))
from do_bench_parity import load  # noqa: E402  (a reference kernel file as a module)
from judge_h200 import cublas_events_mean_ms  # noqa: E402  (the comparator of the agreement tables)
from launch_overhead import host_us  # noqa: E402  (the same host clock as launch_overhead.py's table)


def case_sides(spec, module, case, device):
    """The kernel's entry point and the judge's timing baseline on one draw, the judge's way of calling them."""
    call = to_device(make_call(spec, case, 0, device), device)
    function = getattr(module, case.entry_point)
    baseline = spec.baseline(case, Call(args=list(call.args), kwargs=dict(call.kwargs))) if spec.baseline else None

    def reference(args, kwargs):
        return spec.reference(case, Call(args=list(args), kwargs=dict(kwargs)))

    if baseline is not None:
        reference.baseline = (spec, case)
    return function, reference, baseline, call


def judge_loop_us(function, reference, call, mutates) -> tuple[float, float]:
    report = time_back_to_back(
        candidate=function,
        reference=reference,
        sets=[{"args": list(call.args), "kwargs": dict(call.kwargs)}],
        flush_buffer=None,
        budget_s=0.004,
        min_iterations=4,
        max_iterations=10,
        min_launches=1,
        restore_keys=list(mutates),
        clock_warmup_s=0.0,
    )
    mean = lambda samples: sum(samples) / len(samples) * 1000  # noqa: E731
    return mean(report["candidate_ms"]), mean(report["reference_ms"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", default="cublas::cublasSaxpy_v2,cublas::cublasSdot_v2,cublas::cublasSgemm_v2")
    parser.add_argument("--cases", type=int, default=8)
    args = parser.parse_args()
    device = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    plans = []
    for operator_id in args.ops.split(","):
        spec, module = find_operator(operator_id), load(operator_id)
        for case in [case for case in spec.cases("public") if case.timed][: args.cases]:
            function, reference, baseline, call = case_sides(spec, module, case, device)
            mutates = spec.entry_point(case.entry_point).mutates
            thunk = lambda function=function, call=call: function(*call.args, **call.kwargs)  # noqa: E731
            reference_thunk = baseline or (lambda reference=reference, call=call: reference(call.args, call.kwargs))
            thunk()
            torch.cuda.synchronize()
            plans.append((case, function, reference, call, mutates, thunk))
            original = [cublas_events_mean_ms(side, None) * 1000 for side in (thunk, reference_thunk)]
            plans[-1] += (original, [*judge_loop_us(function, reference, call, mutates)], host_us(thunk, calls=1000))
    guard.install_launch_hooks()
    hooked = [judge_loop_us(function, reference, call, mutates) for _, function, reference, call, mutates, *_ in plans]
    from triton import knobs

    knobs.runtime.jit_cache_hook = lambda *args, **kwargs: False  # what the sandbox's CompileWindows returns
    knobs.runtime.jit_post_compile_hook = lambda *args, **kwargs: None
    compile_hooked = [
        judge_loop_us(function, reference, call, mutates) for _, function, reference, call, mutates, *_ in plans
    ]
    hooked_host = [host_us(plan[5], calls=1000) for plan in plans]
    with guard.bare_launches():
        bare = [judge_loop_us(*plan[1:5]) for plan in plans]
        bare_host = [host_us(plan[5], calls=1000) for plan in plans]
    print(
        f"{'case':<64}{'original c / r us':>19}{'loop c / r':>16}{'hooks c / r':>16}{'compile c / r':>16}"
        f"{'bare c / r':>16}{'host us':>9}{'hooked':>8}{'bare':>8}   speedups: original  loop  hooks  compile  bare"
    )
    speedups: dict[str, list[list[float]]] = {}
    rows = zip(plans, hooked, compile_hooked, bare, hooked_host, bare_host, strict=True)
    for plan, (hook_c, hook_r), (comp_c, comp_r), (bare_c, bare_r), hooked_us, bare_us in rows:
        case, *_, (orig_c, orig_r), (loop_c, loop_r), host = plan
        ratios = [orig_r / orig_c, loop_r / loop_c, hook_r / hook_c, comp_r / comp_c, bare_r / bare_c]
        speedups.setdefault(case.entry_point, []).append(ratios)
        print(
            f"{case.case_id[:63]:<64}{orig_c:>10.1f}{orig_r:>8.1f}  {loop_c:>7.1f}{loop_r:>7.1f}  {hook_c:>7.1f}"
            f"{hook_r:>7.1f}  {comp_c:>7.1f}{comp_r:>7.1f}  {bare_c:>7.1f}{bare_r:>7.1f}  {host:>7.1f}"
            f"{hooked_us:>8.1f}{bare_us:>8.1f}   " + "".join(f"{ratio:>7.3f}" for ratio in ratios),
            flush=True,
        )
    print("mean speedup over the cases: original, loop, hooks, compile hooks, bare (each an operator's entry point)")
    for entry, rows_of_entry in speedups.items():
        means = [sum(column) / len(column) for column in zip(*rows_of_entry, strict=True)]
        print(f"  {entry:<40}" + "".join(f"{mean:>8.3f}" for mean in means), flush=True)


if __name__ == "__main__":
    main()

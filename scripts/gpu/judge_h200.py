"""Judge on a real GPU (written for the H200): reference kernels, fixtures, cheats, timing sanity, throughput.

    PYTHONPATH=<repo root> python3 scripts/gpu/judge_h200.py [--sections refs,dobench,repeat,batch,fixtures]
                                                            [--max-ops 0] [--refs-timing-s 240] [--batch 20]

Sections (each prints a table as it goes and survives the others failing; JSON goes to $OUT/judge_h200.json
when OUT is set, else ./judge_h200.json, rewritten after every section):
  refs      every reference kernel in evaluation/catalog/reference_kernels/ (aten__<op>.py, vllm13__<op>.py,
            cublas__<op>.py) whose operator is in the catalog, judged on public + held_out (timing: the
            public tier's timed cases) for --refs-timing-s seconds, the rest without timing.
  fixtures  tests/evaluation/kernels good/ (must pass), wrong/ and cheats/ (must not) against aten::cos.
  dobench   per operator (up to --dobench-ops, from refs), the judge's speedup against triton.testing.do_bench
            medians of the same kernel and reference measured in this process on the same cases.
  repeat    the same good kernel judged 5 times: coefficient of variation of the speedup.
  batch     N different operators through fork-server sandboxes vs one fresh process per kernel, per-stage
            wall times, and the projection for a 110-operator submission.
  protocol_dobench  the selected operators (KGB_ONLY_OPERATORS) judged on public, --protocol-jobs at once;
            then every case with a protocol timing timed here, one at a time, with the paper's do_bench
            (warmup 25, rep 100, median): per operator the judge's protocol speedup against do_bench's,
            "protocol agreement: K/N operators within 10 %". --dry-run: no judge, no do_bench (CPU too).
A compact summary table is printed at the end. Whole run: about 8 minutes on one H200 with the defaults.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402

from evaluation.judge.backends import detect_device, gpu_state, peaks_for  # noqa: E402
from evaluation.judge.context import protocol_timing_options  # noqa: E402
from evaluation.judge.job import JudgeJob, JudgeResult  # noqa: E402
from evaluation.judge.records import find_operator  # noqa: E402
from evaluation.judge.runner import JudgeOptions, TimingOptions, judge, judge_with  # noqa: E402
from evaluation.judge.timing_stats import coefficient_of_variation, geometric_mean  # noqa: E402

KERNELS = ROOT / "tests/evaluation/kernels"
REFERENCE_KERNELS = ROOT / "evaluation/catalog/reference_kernels"
NAMESPACES = {"aten": "aten", "vllm13": "vllm13", "cublas": "cublas"}
# Cheats that only show in the timed loop: judged with timing.
# Cheats whose defence is in timing, judged with it with the scan on too: stream_hide's hidden work races
# the correctness check (it lost on 2026-12-01 before, won after), fast_when_unwatched and
# partial_when_unwatched cheat only where the protocol stage times them unwatched.
TIMED_CHEATS = {
    "cache_by_address_in_timing.py",
    "compute_in_timing.py",
    "stream_hide.py",
    "fast_when_unwatched.py",
    "fast_when_unwatched_noop_probe.py",
    "partial_when_unwatched.py",
    "cache_answers_the_probe.py",
}
# What the fixtures must get on a GPU. The static scan only notes names, so a "cheat" that merely names a
# module (contained by the operating system) and computes honestly in Triton must pass, scan on or off.
EXPECTED_NOT_PASSED = {"wrong": None, "cheats": None}
HARMLESS_CHEATS = {
    "cache_by_data_ptr.py",  # fresh buffers every call: the cache never hits
    "file_write.py",  # its own private tmpfs
    "import_os.py",
    "import_subprocess.py",
    "import_socket.py",
    "import_ctypes.py",
    "import_importlib.py",
    "kernel_body_torch.py",  # torch in a jit body that is never launched
    # A sleeping thread started through the audit hook's unwrapped starter, honest Triton otherwise: the
    # native-thread count that refuses it is the CPU interpreter's only (CUDA starts threads of its own), so
    # on a GPU it passes (H100, 2026-12-07); a thread that computes is left to the twin replay.
    "spawn_thread_unwrapped.py",
}
# Cheats the judge does not refuse yet (strict xfails in test_judge_cheats.py; docs/judge.md, "Not covered"):
# expected to pass, so that the day one is refused shows here as a verdict not as expected.
OPEN_CHEATS = {"twin_replay_read_from_the_guard.py"}
# Wrong kernels whose failure must be failed_runtime with this cause in the reason (never error).
RUNTIME_CAUSES = {"illegal_address.py": "illegal memory access"}
SPECIAL_STATUSES = {"published_shapes.py": "failed_correctness"}  # only with held_out in the tiers
# The fixtures written for an operator other than aten::cos (their tests name it too): judged against cos they
# would fail for a missing entry point, which says nothing about the defence they test.
FIXTURE_OPERATORS = {
    "cat_offsets_from_one_base.py": "aten::cat",
    "resolve_neg_hands_back_its_input.py": "aten::resolve_neg",
    "moe_align_numpy_on_the_base_class.py": "vllm13::moe_align_block_size",
}
# Fixtures of test-only records (a cos_ record, update_list): the GPU has no such operator; aten::mm's tf32
# cheat is judged on its own below.
TEST_ONLY_FIXTURES = {"cos_inplace.py", "tf32_update_list.py", "gpu_tf32_mm.py"}

OUTPUT: dict = {}


def save() -> None:
    target = Path(os.environ.get("OUT", ".")) / "judge_h200.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(OUTPUT, indent=1, default=str))


def make_job(
    operator_id: str,
    source: str,
    chip: str,
    device: str,
    tiers: tuple[str, ...],
    timing: bool,
    budget_s: float = 1200.0,
) -> JudgeJob:
    bandwidth, flops = peaks_for(chip)
    return JudgeJob(
        operator_id=operator_id,
        source_code=source,
        chip_slug=chip,
        device_type=device,
        tiers=tiers,
        measure_timing=timing,
        time_budget_s=budget_s,
        peak_bandwidth_bytes_per_s=bandwidth,
        peak_flops_by_dtype=flops,
        judges_sharing_device=max(1, int(os.environ.get("KGB_JUDGES_PER_DEVICE", "1") or 1)),
    )


def summarise(result: JudgeResult) -> dict:
    failed_check = next((check.name for check in result.checks if check.outcome == "failed"), "")
    return {
        "status": result.status,
        "reason": result.reason[:300],
        "cases": f"{result.cases_passed}/{result.cases_total}",
        "speedup": result.speedup,
        "ci95": result.speedup_ci95,
        # The protocol pass's figure (PROTOCOL.md section 6), when the judge made one: None from a judge
        # without that pass, or with it switched off (KGB_PROTOCOL_TIMING=off).
        "protocol_speedup": getattr(result, "protocol_speedup", None),
        "flagged": result.flagged,
        "failed_check": failed_check,
        "stages": result.stage_seconds,
        "failed_case": (result.failed_case or {}).get("case_id", ""),
        # What the unwatched check compared, per case the device-time stage timed: its audited window's
        # median, its probe's kernels alone (when the probe's figure came back) and the caller's latency.
        "timed_cases": [
            {
                "case_id": case.case_id,
                "audited_ms": case.candidate_ms,
                "probe_ms": (case.spread or {}).get("kernel_device_ms"),
                "probe_note": (case.spread or {}).get("probe_note"),
                "caller_ms": (case.protocol_timing or {}).get("candidate_ms"),
            }
            for case in result.case_results
            if case.candidate_ms is not None
        ],
    }


def fmt_speedup(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}x"


# ---------------------------------------------------------------- sections


def _reference_files() -> list[tuple[str, Path]]:
    files = []
    for path in sorted(REFERENCE_KERNELS.glob("*__*.py")):
        namespace, name = path.stem.split("__", 1)
        operator_id = f"{NAMESPACES.get(namespace, namespace)}::{name}"
        try:
            find_operator(operator_id)
        except KeyError:
            continue
        files.append((operator_id, path))
    only = [name for name in os.environ.get("KGB_ONLY_OPERATORS", "").split(",") if name]
    return [(operator_id, path) for operator_id, path in files if not only or operator_id in only]


REF_RESULTS: dict[str, JudgeResult] = {}


def section_refs(chip: str, device: str, args: argparse.Namespace) -> None:
    """Every reference kernel on public + held_out with the production judge (timing: public timed cases).
    After --refs-timing-s seconds the rest are judged without timing, so the section stays bounded."""
    rows = OUTPUT.setdefault("refs", [])
    files = _reference_files()
    if args.max_ops:
        files = files[: args.max_ops]
    tiers = tuple(args.refs_tiers.split(","))
    print(f"\n== reference kernels ({len(files)} files, tiers {'+'.join(tiers)}, timing on public timed cases)")
    print(
        f"{'operator':<36}{'status':<20}{'cases':>9}{'speedup':>10}  {'95% CI':<18}{'protocol':>9}{'wall s':>8}"
        f"{'timing s':>9}{'iters':>7}  against / failed check"
    )
    section_started = time.perf_counter()
    parallel: dict[str, tuple[JudgeResult, float]] = {}
    if args.refs_jobs > 1:  # judged N at once (timing still holds the GPU alone: device_lock), reported in order
        from bench_judge import judge_pool, timed_judge

        with judge_pool(args.refs_jobs, device) as pool:
            futures = {
                operator_id: pool.submit(
                    timed_judge, make_job(operator_id, path.read_text(), chip, device, tiers, True)
                )
                for operator_id, path in files
            }
            parallel = {operator_id: future.result() for operator_id, future in futures.items()}
    for operator_id, path in files:
        timing = time.perf_counter() - section_started < args.refs_timing_s or operator_id in parallel
        started = time.perf_counter()
        if operator_id in parallel:
            result, wall_s = parallel[operator_id]
        else:
            result = judge(make_job(operator_id, path.read_text(), chip, device, tiers, timing))
        REF_RESULTS[operator_id] = result
        iterations = [case.spread.get("iterations", 0) for case in result.case_results if case.spread]
        row = dict(
            summarise(result),
            operator=operator_id,
            timed=timing,
            wall_s=parallel[operator_id][1] if operator_id in parallel else time.perf_counter() - started,
            timed_cases=len(iterations),
            median_iterations=statistics.median(iterations) if iterations else 0,
            timing_baseline=result.environment.get("timing_baseline", ""),
        )
        rows.append(row)
        ci = "-" if not result.speedup_ci95 else f"{result.speedup_ci95[0]:.3f}-{result.speedup_ci95[1]:.3f}"
        print(
            f"{operator_id:<36}{result.status:<20}{row['cases']:>9}{fmt_speedup(result.speedup):>10}  {ci:<18}"
            f"{fmt_speedup(row['protocol_speedup']):>9}{row['wall_s']:>8.1f}"
            f"{result.stage_seconds.get('timing', 0):>9.1f}{row['median_iterations']:>7}  "
            f"{row['timing_baseline']} {row['failed_check']} "
            f"{row['reason'][:80] if result.status != 'passed' else ''}",
            flush=True,
        )
    passed = sum(1 for row in rows if row["status"] == "passed")
    summed = sum(row["wall_s"] for row in rows)
    section_wall = time.perf_counter() - section_started
    timed_rows = [row for row in rows if row["timed"]]
    per_op_timed = sum(row["wall_s"] for row in timed_rows) / len(timed_rows) if timed_rows else None
    # A projection for 110 operators only means something judged one at a time: N at once, the wall is not
    # N-fold shorter (they queue for the GPU), and judge_reference_kernels.py --fill 110 measures it instead.
    serial = args.refs_jobs <= 1
    OUTPUT["refs_summary"] = {
        "passed": passed,
        "total": len(rows),
        "wall_s": section_wall,
        "summed_judge_s": summed,
        "jobs": args.refs_jobs,
        "mean_wall_s_with_timing": per_op_timed,
        "projection_110_ops_s": per_op_timed * 110 if per_op_timed and serial else None,
    }
    print(
        f"reference kernels: {passed}/{len(rows)} passed in {section_wall:.1f} s ({args.refs_jobs} at once; "
        f"{summed:.1f} judge-s summed); with timing {per_op_timed or 0:.2f} s per operator"
        + (f" -> 110 operators one at a time ~ {(per_op_timed or 0) * 110:.0f} s" if serial else "")
    )


def _judge_fixture(job: JudgeJob, static_scan: bool, case_budget: float) -> dict:
    """One fixture's judgement (top level: it runs in a pool process), both timing stages on: the fixtures
    prove every defence, the protocol stage's cross-check too."""
    options = JudgeOptions(
        static_scan=static_scan,
        timing=TimingOptions(budget_s_per_case=case_budget),
        protocol_timing=protocol_timing_options(),
    )
    result = judge_with(job, options)
    return dict(
        summarise(result),
        fp64_failed=any(check.name == "fp64_second_opinion" and check.outcome == "failed" for check in result.checks),
        values_outside="values outside" in str((result.failed_case or {}).get("message", "")),
    )


def section_fixtures(chip: str, device: str, args: argparse.Namespace) -> None:
    """Good kernels must pass, wrong ones and cheats must not; the cheats the static scan refuses are judged
    again with it off, so the run-time defences are seen to catch them on the GPU too (the stream one only
    shows in timing: hidden work after the timed stream's end event). ``--jobs`` judges at once."""
    rows = OUTPUT.setdefault("fixtures", [])
    tasks = []  # (label, job, static scan, verdict check)
    for folder in ("good", "wrong", "cheats"):
        for path in sorted((KERNELS / folder).glob("*.py")):
            if path.name in TEST_ONLY_FIXTURES:
                continue
            tiers = ("public", "held_out") if path.name in SPECIAL_STATUSES else ("public",)
            must_pass = folder == "good" or path.name in HARMLESS_CHEATS or path.name in OPEN_CHEATS
            timed = folder == "good" or path.name in TIMED_CHEATS
            tasks.append(
                (
                    f"{folder}/{path.name}",
                    make_job(
                        FIXTURE_OPERATORS.get(path.name, "aten::cos"), path.read_text(), chip, device, tiers, timed
                    ),
                    True,
                    must_pass,
                )
            )
    for path in sorted((KERNELS / "cheats").glob("*.py")):  # the same verdicts with the scan off
        name = path.name
        if name not in TEST_ONLY_FIXTURES:
            tasks.append(
                (
                    f"cheats/{name} (scan off)",
                    make_job(
                        FIXTURE_OPERATORS.get(name, "aten::cos"), path.read_text(), chip, device, ("public",), True
                    ),
                    False,
                    # Timed here: an address-keyed cache does hit once timing's rotating buffers come back,
                    # and its launch-less timed calls are rejected.
                    (name in HARMLESS_CHEATS and name != "cache_by_data_ptr.py") or name in OPEN_CHEATS,
                )
            )
    try:
        find_operator("aten::mm")
        tasks.append(
            (
                "cheats/gpu_tf32_mm.py (aten::mm)",
                make_job("aten::mm", (KERNELS / "cheats/gpu_tf32_mm.py").read_text(), chip, device, ("public",), False),
                True,
                "fp64",
            )
        )
    except KeyError:
        print("aten::mm not in the catalog: tf32 cheat skipped")
    if args.fixtures_only:
        wanted = args.fixtures_only.split(",")
        tasks = [task for task in tasks if any(name in task[0] for name in wanted)]
    if args.fixture_copies > 1:  # the same fixtures judged again at once: a verdict that moves with the load
        tasks = [
            (f"{label} #{copy}" if copy else label, job, scan, expectation)
            for copy in range(args.fixture_copies)
            for label, job, scan, expectation in tasks
        ]
    print(
        f"\n== fixtures against aten::cos or their own operator (good must pass; wrong/cheats must not), "
        f"{args.jobs} at once"
    )
    print(f"{'kernel':<34}{'status':<20}{'verdict ok':<11}{'speedup':>10}  check / reason")

    def record(label: str, expectation: bool | str, summary: dict) -> None:
        if expectation == "fp64":
            # TF32's wrong values fail an fp32 case: by the float64 second opinion where K is small enough for
            # them to pass atol = 1e-4 * K, by the plain comparison first where it is not (the public grid has
            # both; test_tf32_matmul_fails_the_fp64_second_opinion accepts either as well).
            ok = summary["status"] == "failed_correctness" and (summary["fp64_failed"] or summary["values_outside"])
        elif label.split("/")[-1].split(" #")[0] in RUNTIME_CAUSES:
            cause = RUNTIME_CAUSES[label.split("/")[-1].split(" #")[0]]
            ok = summary["status"] == "failed_runtime" and cause in summary["reason"]
        else:
            ok = (summary["status"] == "passed") == expectation
        rows.append(dict(summary, kernel=label, verdict_ok=ok))
        print(
            f"{label:<34}{summary['status']:<20}{str(ok):<11}{fmt_speedup(summary['speedup']):>10}"
            f"  {summary['failed_check']} {summary['reason'][:90]}",
            flush=True,
        )
        save()

    if args.jobs > 1:
        from concurrent.futures import as_completed

        from bench_judge import judge_pool

        with judge_pool(args.jobs, device) as pool:
            futures = {
                pool.submit(_judge_fixture, job, scan, args.case_budget): (label, expectation)
                for label, job, scan, expectation in tasks
            }
            for future in as_completed(futures):
                record(*futures[future], future.result())
    else:
        for label, job, scan, expectation in tasks:
            record(label, expectation, _judge_fixture(job, scan, args.case_budget))
    bad = [row["kernel"] for row in rows if not row["verdict_ok"]]
    print(f"fixtures with an unexpected verdict: {bad or 'none'} ({len(rows)} judged)")


def _load_module(path: Path):
    import importlib.util

    module_spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def _do_bench_operator(operator_id: str, path: Path, result: JudgeResult, cases_per_op: int) -> dict | None:
    """triton.testing.do_bench medians (L2 flushed, as in the judge) of the kernel and of the record's
    reference on the judge's timed cases; per-operator geometric means over the same cases."""
    import triton.testing

    from evaluation.catalog.spec import Call
    from evaluation.judge.inputs import to_device

    spec = find_operator(operator_id)
    module = _load_module(path)
    judged = {case.case_id: case for case in result.case_results if case.timed and case.speedup}
    rows = []
    # The judge's longest timed cases first: do_bench's own host overhead (40-60 us a call on the H200)
    # stays out of its median only for kernels that outlast it.
    public = sorted(
        (case for case in spec.cases("public") if case.case_id in judged),
        key=lambda case: -min(judged[case.case_id].reference_ms, judged[case.case_id].candidate_ms),
    )
    for case in public:
        if spec.entry_point(case.entry_point).mutates:
            continue  # in-place / out= calls would drift over do_bench's repeats
        call = to_device(spec.make_inputs(case, torch.Generator().manual_seed(0)), torch.device("cuda"))
        function = getattr(module, case.entry_point)
        # do_bench is itself sensitive to host hiccups for ~10 us kernels (any host time past its L2 flush
        # lands in the window): three alternating rounds per side, the median of their medians.
        rounds: dict[str, list[float]] = {"candidate": [], "reference": []}
        for _ in range(3):
            rounds["candidate"].append(
                triton.testing.do_bench(
                    lambda call=call, function=function: function(*call.args, **call.kwargs),
                    warmup=25,
                    rep=100,
                    return_mode="median",
                )
            )
            rounds["reference"].append(
                triton.testing.do_bench(
                    lambda call=call, case=case: spec.reference(
                        case, Call(args=list(call.args), kwargs=dict(call.kwargs))
                    ),
                    warmup=25,
                    rep=100,
                    return_mode="median",
                )
            )
        candidate, reference = statistics.median(rounds["candidate"]), statistics.median(rounds["reference"])
        # The same calls replayed from a CUDA graph: no host launch overhead at all (nor an L2 flush), the
        # device time the judge's stream holds aim at.
        graphed = {}
        try:
            graphed["candidate"] = triton.testing.do_bench_cudagraph(
                lambda call=call, function=function: function(*call.args, **call.kwargs), rep=100, return_mode="median"
            )
            graphed["reference"] = triton.testing.do_bench_cudagraph(
                lambda call=call, case=case: spec.reference(case, Call(args=list(call.args), kwargs=dict(call.kwargs))),
                rep=100,
                return_mode="median",
            )
        except Exception as error:  # a wrapper that cannot be captured: report do_bench alone
            graphed = {"error": f"{type(error).__name__}: {str(error)[:120]}"}
        flushed = {}
        try:
            flushed["candidate"] = _graphed_with_flush_ms(
                lambda call=call, function=function: function(*call.args, **call.kwargs)
            )
            flushed["reference"] = _graphed_with_flush_ms(
                lambda call=call, case=case: spec.reference(case, Call(args=list(call.args), kwargs=dict(call.kwargs)))
            )
        except Exception as error:
            flushed = {"error": f"{type(error).__name__}: {str(error)[:120]}"}
        judged_case = judged[case.case_id]
        rows.append(
            {
                "case_id": case.case_id,
                "do_bench": reference / candidate,
                "judge": judged_case.speedup,
                "cudagraph": graphed["reference"] / graphed["candidate"] if "candidate" in graphed else None,
                "cudagraph_ms": graphed,
                "graph_flushed": flushed["reference"] / flushed["candidate"] if "candidate" in flushed else None,
                "graph_flushed_ms": flushed,
                "do_bench_ms": rounds,
                "judge_reference_ms": judged_case.reference_ms,
                "judge_candidate_ms": judged_case.candidate_ms,
                "holds": (judged_case.spread or {}).get("holds"),
            }
        )
        if len(rows) >= cases_per_op:
            break
    if not rows:
        return None

    do_bench = geometric_mean([row["do_bench"] for row in rows])
    judge = geometric_mean([row["judge"] for row in rows])
    graphed = [row["cudagraph"] for row in rows if row["cudagraph"]]
    cudagraph = geometric_mean(graphed) if len(graphed) == len(rows) else None
    flushed = [row["graph_flushed"] for row in rows if row["graph_flushed"]]
    graph_flushed = geometric_mean(flushed) if len(flushed) == len(rows) else None
    return {
        "operator": operator_id,
        "cases": rows,
        "do_bench": do_bench,
        "judge": judge,
        "ratio": judge / do_bench,
        "within_5pct": abs(judge / do_bench - 1) <= 0.05,
        "cudagraph": cudagraph,
        "cudagraph_ratio": judge / cudagraph if cudagraph else None,
        "within_5pct_cudagraph": cudagraph is not None and abs(judge / cudagraph - 1) <= 0.05,
        "graph_flushed": graph_flushed,
        "graph_flushed_ratio": judge / graph_flushed if graph_flushed else None,
        "within_5pct_graph_flushed": graph_flushed is not None and abs(judge / graph_flushed - 1) <= 0.05,
    }


def _graphed_with_flush_ms(fn: Any, reps: int = 40, rounds: int = 5) -> float:
    """do_bench's protocol (256 MB L2 flush before every call) with the host taken out of the window: a CUDA
    graph of ``reps`` (flush, call) pairs and one of ``reps`` flushes alone, replayed alternately ``rounds``
    times; per call, the median difference. Independent of the judge's stream holds."""
    flush = torch.empty(256 * 1024 * 1024, dtype=torch.int8, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up where the capture will run (compilation, workspaces)
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    both, alone = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
    with torch.cuda.graph(both):
        for _ in range(reps):
            flush.zero_()
            fn()
    with torch.cuda.graph(alone):
        for _ in range(reps):
            flush.zero_()
    differences = []
    for _ in range(rounds):
        elapsed = []
        for graph in (both, alone):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            elapsed.append(start.elapsed_time(end))
        differences.append((elapsed[0] - elapsed[1]) / reps)
    return statistics.median(differences)


def section_dobench(chip: str, device: str, args: argparse.Namespace) -> None:
    """Judge speedups (from the refs section) against do_bench medians measured here, same cases."""
    print(
        f"\n== judge speedup vs triton.testing.do_bench (up to {args.dobench_ops} operators, "
        f"{args.dobench_cases} cases each; reference timed in both: spec.reference)"
    )
    if not REF_RESULTS:
        section_refs(chip, device, args)
    rows = OUTPUT.setdefault("dobench", [])
    files = dict(_reference_files())
    candidates = [
        operator_id
        for operator_id, result in REF_RESULTS.items()
        if result.status == "passed" and result.speedup and result.environment.get("timing_baseline") == "reference"
    ]
    print(
        f"{'operator':<36}{'judge':>9}{'do_bench':>10}{'ratio':>8}  within 5%  {'cudagraph':>9}{'ratio':>8}"
        f"  within 5%  {'graph+flush':>11}{'ratio':>8}  within 5%"
    )
    for operator_id in candidates:
        if len(rows) >= args.dobench_ops:
            break
        try:
            row = _do_bench_operator(operator_id, files[operator_id], REF_RESULTS[operator_id], args.dobench_cases)
        except Exception as error:  # a record whose reference do_bench cannot call directly: skip it
            print(f"{operator_id:<36} skipped: {type(error).__name__}: {str(error)[:80]}")
            continue
        if row is None:
            continue
        rows.append(row)
        graphed = "-" if row["cudagraph"] is None else f"{row['cudagraph']:.3f}"
        graphed_ratio = "-" if row["cudagraph_ratio"] is None else f"{row['cudagraph_ratio']:.3f}"
        flushed = "-" if row["graph_flushed"] is None else f"{row['graph_flushed']:.3f}"
        flushed_ratio = "-" if row["graph_flushed_ratio"] is None else f"{row['graph_flushed_ratio']:.3f}"
        print(
            f"{operator_id:<36}{row['judge']:>9.3f}{row['do_bench']:>10.3f}{row['ratio']:>8.3f}  "
            f"{str(row['within_5pct']):<9}  {graphed:>9}{graphed_ratio:>8}  {str(row['within_5pct_cudagraph']):<9}"
            f"  {flushed:>11}{flushed_ratio:>8}  {row['within_5pct_graph_flushed']}",
            flush=True,
        )
    agree = sum(1 for row in rows if row["within_5pct"])
    agree_graphed = sum(1 for row in rows if row["within_5pct_cudagraph"])
    agree_flushed = sum(1 for row in rows if row["within_5pct_graph_flushed"])
    OUTPUT["dobench_summary"] = {
        "operators": len(rows),
        "within_5pct": agree,
        "within_5pct_cudagraph": agree_graphed,
        "within_5pct_graph_flushed": agree_flushed,
    }
    print(
        f"operators whose judge speedup is within 5%: of do_bench {agree}/{len(rows)}, of do_bench_cudagraph "
        f"{agree_graphed}/{len(rows)}, of flushed graph replays {agree_flushed}/{len(rows)} (target >= 10)"
    )


# ------------------------------------------------- the protocol pass against do_bench


class _BeforeEachTimedCall:
    """What ``triton.testing.do_bench`` iterates as ``grad_to_none`` before every timed call, ahead of its
    L2 flush and start event: iterating this puts an in-place call's mutated arguments back there, outside
    the timed window, as the judge restores them before each of its calls (untimed). do_bench's warm-up
    calls run without it, so in-out values drift there; every timed call starts from the drawn values."""

    def __init__(self, restore: Any) -> None:
        self.restore = restore

    def __iter__(self):
        self.restore()
        return iter(())


def _restorer(call: Any, keys: tuple[int | str, ...]) -> Any:
    """The judge's restorer (timing_sets.restorer) over a catalog Call's argument lists."""
    from evaluation.judge.untrusted.timing_sets import restorer

    return restorer({"args": call.args, "kwargs": call.kwargs}, list(keys))


def protocol_reference_kind(result: JudgeResult, case_result: Any) -> str:
    """What the judge timed as the reference side of a protocol-timed case: the case's own record of it,
    else the judgement's timing baseline, else the record's reference."""
    for source in (
        getattr(case_result, "protocol_timing", None) or {},
        {"reference_kind": getattr(case_result, "reference_kind", None)},
        case_result.spread or {},
    ):
        if source.get("reference_kind"):
            return source["reference_kind"]
    return result.environment.get("timing_baseline") or "reference"


def protocol_cases(spec: Any, result: JudgeResult | None) -> tuple[list[tuple[Any, Any]], list[str]]:
    """(case, its CaseResult) for every case the judge timed by the protocol, in the judge's order, and the
    ids of those no catalog tier rebuilds (held-out draws). Without a result (a dry run): every public timed
    case, with no CaseResult."""
    by_id = {case.case_id: case for case in spec.cases("public") + spec.cases("smoke")}
    if result is None:
        return [(case, None) for case in spec.cases("public") if case.timed], []
    found, unknown = [], []
    for case_result in result.case_results:
        if not getattr(case_result, "protocol_timing", None):
            continue
        if case_result.case_id in by_id:
            found.append((by_id[case_result.case_id], case_result))
        else:
            unknown.append(case_result.case_id)
    return found, unknown


def protocol_case_sides(spec: Any, module: Any, case: Any, reference_kind: str, device: torch.device) -> dict:
    """One case's two timed callables on ``device``, from the same draw (seed 0) but separate copies, as the
    judge gives each side its own sets: the kernel file's entry point, unguarded, and what the judge timed
    against (``spec.baseline``'s callable when the judge timed the baseline, else ``spec.reference``, called
    the way the judge's timing loop calls it); each with the function that restores its mutated arguments."""
    from evaluation.catalog.spec import Call
    from evaluation.judge.inputs import make_call, to_device

    drawn = make_call(spec, case, 0, device)
    candidate_call, reference_call = to_device(drawn, device), to_device(drawn, device)
    del drawn
    mutated = spec.entry_point(case.entry_point).mutates
    function = getattr(module, case.entry_point)
    reference_thunk, timed_against = None, "reference"
    if reference_kind != "reference" and spec.baseline is not None:
        reference_thunk = spec.baseline(case, Call(args=list(reference_call.args), kwargs=dict(reference_call.kwargs)))
        timed_against = reference_kind if reference_thunk is not None else "reference"
    if reference_thunk is None:

        def reference_thunk() -> Any:
            return spec.reference(case, Call(args=list(reference_call.args), kwargs=dict(reference_call.kwargs)))

    return {
        "candidate": (lambda: function(*candidate_call.args, **candidate_call.kwargs)),
        "reference": reference_thunk,
        "restore": {"candidate": _restorer(candidate_call, mutated), "reference": _restorer(reference_call, mutated)},
        "timed_against": timed_against,
    }


def do_bench_median_ms(fn: Any, restore: Any) -> float:
    """The paper's ATen timer: ``triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")`` (L2
    flushed before every call, events around it), in-out arguments put back before every timed call."""
    import triton.testing

    if restore is not None:
        restore()
    return triton.testing.do_bench(
        fn,
        warmup=25,
        rep=100,
        grad_to_none=_BeforeEachTimedCall(restore) if restore is not None else None,
        return_mode="median",
    )


def do_bench_mean_ms(fn: Any, restore: Any) -> float:
    """The paper's vLLM timer: ``triton.testing.do_bench(fn, warmup=25, rep=100)``, its default return mode
    (the mean), in-out arguments put back before every timed call as above."""
    import triton.testing

    if restore is not None:
        restore()
    return triton.testing.do_bench(
        fn, warmup=25, rep=100, grad_to_none=_BeforeEachTimedCall(restore) if restore is not None else None
    )


def cublas_events_mean_ms(fn: Any, restore: Any, warmup: int = 10, calls: int = 100) -> float:
    """The paper's cuBLAS timer (VLLM_CUBLAS.md, "Shared test machinery"): 10 warm-up calls, then 100 calls
    back to back between two CUDA events, no L2 flush, the mean. In-out arguments are put back once, before
    the warm-ups: the original runs its calls on the same buffers."""
    if restore is not None:
        restore()
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / calls


# The original harness's timer for each source's cases (evaluation.judge.context.ORIGINAL_TIMERS).
ORIGINAL_TIMERS = {"aten": do_bench_median_ms, "vllm13": do_bench_mean_ms, "cublas": cublas_events_mean_ms}


def original_timer(operator_id: str) -> Any:
    return ORIGINAL_TIMERS.get(operator_id.split("::", 1)[0], do_bench_median_ms)


def host_clock_median_ms(fn: Any, restore: Any, calls: int = 3) -> float:
    """A dry run's stand-in timer where there is no GPU: the host-clock median of a few calls (restore
    included before each, untimed). It checks the sides run and restore, not how fast they are."""
    samples = []
    for _ in range(calls):
        if restore is not None:
            restore()
        started = time.perf_counter()
        fn()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def judge_one(chip: str, device: str, args: argparse.Namespace, operator_id: str) -> None:
    """Judge one operator's reference kernel now (``--interleave``), so do_bench times its cases seconds after
    the judge did, on a host in the same state: on the H200's host the time of one launch moved 2x between
    processes a few seconds apart, and with it which side of the flush race a launch-bound case read."""
    previous = os.environ.get("KGB_ONLY_OPERATORS")
    os.environ["KGB_ONLY_OPERATORS"] = operator_id
    try:
        section_refs(
            chip, device, argparse.Namespace(**{**vars(args), "refs_jobs": 1, "refs_tiers": args.protocol_tiers})
        )
    finally:
        if previous is None:
            os.environ.pop("KGB_ONLY_OPERATORS", None)
        else:
            os.environ["KGB_ONLY_OPERATORS"] = previous


def host_probe(device: str) -> Any:
    """A thunk giving the host's median microseconds for one launch of a one-element Triton kernel (no wait
    between launches, synchronised every 100): the host's speed at that moment, the quantity the flush race
    turns on, measured the same way before each operator's judgement and after its do_bench."""
    import triton
    import triton.language as tl

    @triton.jit
    def store_one(pointer):
        tl.store(pointer, 1.0)

    buffer = torch.zeros(1, device=device)

    def launch() -> None:
        store_one[(1,)](buffer)

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from launch_overhead import host_us

    launch()
    return lambda: host_us(launch, calls=500)


def protocol_operator_row(
    operator_id: str, result: JudgeResult | None, cases: list[dict], planned: int, unknown: list[str]
) -> dict:
    """Per operator: geometric means over the cases timed both ways (the judge's protocol speedup over
    exactly those cases, so a cut-off operator is compared on what both timed), their ratio, within 10 %."""
    both = [row for row in cases if row.get("judge") and row.get("do_bench")]
    judge_same = geometric_mean([row["judge"] for row in both])
    do_bench = geometric_mean([row["do_bench"] for row in cases if row.get("do_bench")])
    do_bench_same = geometric_mean([row["do_bench"] for row in both])
    ratio = judge_same / do_bench_same if judge_same and do_bench_same else None
    repeated = [row for row in cases if row.get("do_bench") and row.get("do_bench_again")]
    do_bench_self = None
    if repeated:
        first, again = ([row[key] for row in repeated] for key in ("do_bench", "do_bench_again"))
        do_bench_self = geometric_mean(again) / geometric_mean(first)
    return {
        "do_bench_self_ratio": do_bench_self,
        "sides_judge_over_do_bench": side_ratios(both),
        "operator": operator_id,
        "status": result.status if result is not None else "not judged",
        "planned_cases": planned,
        "timed_cases": sum(1 for row in cases if row.get("do_bench")),
        "compared_cases": len(both),
        "failed_cases": [row["case_id"] for row in cases if row.get("error")],
        "unknown_cases": unknown,
        "judge_protocol": getattr(result, "protocol_speedup", None) if result is not None else None,
        "judge_protocol_ci95": getattr(result, "protocol_speedup_ci95", None) if result is not None else None,
        "judge_protocol_same_cases": judge_same,
        "judge_device_time": result.speedup if result is not None else None,
        "do_bench": do_bench,
        "ratio": ratio,
        "within_10pct": None if ratio is None else abs(ratio - 1) <= 0.10,
        "cases": cases,
    }


def side_ratios(cases: list[dict]) -> dict[str, float | None]:
    """Per side, the geometric mean over ``cases`` of the judge's microseconds over do_bench's: which side
    parts the two speedups (a candidate's launch path read by one timer and not the other, or a few per cent
    on both sides that cancel)."""
    ratios = {}
    for side in ("reference", "candidate"):
        pairs = [
            row[f"judge_{side}_ms"] / row[f"do_bench_{side}_ms"]
            for row in cases
            if row.get(f"judge_{side}_ms") and row.get(f"do_bench_{side}_ms")
        ]
        ratios[side] = geometric_mean(pairs) if pairs else None
    return ratios


def protocol_case_row(
    spec: Any,
    module: Any,
    case: Any,
    case_result: Any,
    result: Any,
    timer: Any,
    device: torch.device,
    twice: bool = False,
) -> dict:
    """One case timed both ways; an exception (a side that cannot be called here) is recorded, not raised."""
    protocol = (getattr(case_result, "protocol_timing", None) or {}) if case_result is not None else {}
    reference_kind = protocol_reference_kind(result, case_result) if case_result is not None else "reference"
    row: dict[str, Any] = {
        "case_id": case.case_id,
        "judge": protocol.get("speedup"),
        "judge_reference_ms": protocol.get("reference_ms"),
        "judge_candidate_ms": protocol.get("candidate_ms"),
        "judge_iterations": protocol.get("iterations"),
        "judge_stop_reason": protocol.get("stop_reason"),
        "reference_kind": reference_kind,
    }
    try:
        sides = protocol_case_sides(spec, module, case, reference_kind, device)
        row["timed_against"] = sides["timed_against"]
        row["restored"] = sides["restore"]["candidate"] is not None
        measured = {side: timer(sides[side], sides["restore"][side]) for side in ("candidate", "reference")}
        row["do_bench_candidate_ms"], row["do_bench_reference_ms"] = measured["candidate"], measured["reference"]
        row["do_bench"] = measured["reference"] / measured["candidate"] if measured["candidate"] > 0 else None
        if twice:
            # do_bench against itself, the same sides timed again: how far the paper's timer agrees with its
            # own figure on this case, beside how far the judge agrees with it.
            again = {side: timer(sides[side], sides["restore"][side]) for side in ("candidate", "reference")}
            row["do_bench_again"] = again["reference"] / again["candidate"] if again["candidate"] > 0 else None
    except Exception as error:
        row["error"] = f"{type(error).__name__}: {str(error)[:200]}"
    return row


def _fmt(value: float | None, width: int, digits: int = 3) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def section_protocol_dobench(chip: str, device: str, args: argparse.Namespace) -> None:
    """The judge's protocol speedup (PROTOCOL.md section 6) against the paper's own timer: each selected
    operator's reference kernel judged on the public tier with timing (``--protocol-jobs`` at once), then,
    one case at a time with nothing else on the GPU, every case the judge gave a protocol timing timed here
    with ``triton.testing.do_bench(warmup=25, rep=100, median)``, kernel and reference loaded in this
    process; per operator the geometric means and their ratio (agreement: within 10 %). The judge's
    device-time speedup is printed beside them for context. ``--dry-run`` judges nothing and times by the
    host clock: a check, without a GPU, that every case's sides build, run and restore."""
    started = time.perf_counter()
    deadline = started + args.protocol_budget_s
    # In KGB_ONLY_OPERATORS's order: the operators that matter most go first, before the budget can end.
    only = [name for name in os.environ.get("KGB_ONLY_OPERATORS", "").split(",") if name]
    files = sorted(_reference_files(), key=lambda item: only.index(item[0]) if item[0] in only else len(only))
    if args.max_ops:
        files = files[: args.max_ops]
    print(
        f"\n== protocol speedup vs triton.testing.do_bench ({len(files)} operators, every protocol-timed "
        f"public case{f' (at most {args.protocol_cases})' if args.protocol_cases else ''}; "
        f"{'dry run: no judge, host clock' if args.dry_run else f'{args.protocol_jobs} judged at once'}; "
        f"the judge's loop: {os.environ.get('KGB_PROTOCOL_WINDOW', 'original')})"
    )
    torch.backends.cuda.matmul.allow_tf32 = False  # as the judge's reference side (and the paper): TF32 off
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    if not args.dry_run and not args.interleave:
        missing = [operator_id for operator_id, _ in files if operator_id not in REF_RESULTS]
        if missing:
            judged = argparse.Namespace(
                **{**vars(args), "refs_jobs": args.protocol_jobs, "refs_tiers": args.protocol_tiers}
            )
            section_refs(chip, device, judged)
    rows = OUTPUT.setdefault("protocol_dobench", [])
    print(
        "\n== protocol agreement: the judge's protocol speedup against the original's timer for each source, "
        "same cases (ATen do_bench_median_ms, vLLM do_bench_mean_ms, cuBLAS cublas_events_mean_ms"
        f"{'; dry run: host_clock_median_ms' if args.dry_run else ''})"
    )
    print(
        f"{'operator':<28}{'cases':>11}{'judge protocol':>16}{'do_bench':>10}{'ratio':>8}  within 10%"
        f"{'device-time':>13}{'do_bench/self':>14}  notes"
    )
    probe = host_probe(device) if not args.dry_run and torch.cuda.is_available() else None
    for operator_id, path in files:
        host_before = probe() if probe else None
        if args.interleave and not args.dry_run and operator_id not in REF_RESULTS:
            judge_one(chip, device, args, operator_id)
        result = None if args.dry_run else REF_RESULTS.get(operator_id)
        if not args.dry_run and (result is None or result.status != "passed"):
            status = "not judged" if result is None else result.status
            rows.append({"operator": operator_id, "status": status, "within_10pct": None, "cases": []})
            print(f"{operator_id:<28} {status}: {'' if result is None else result.reason[:100]}", flush=True)
            continue
        spec = find_operator(operator_id)
        module = _load_module(path)
        timer = host_clock_median_ms if args.dry_run else original_timer(operator_id)
        planned, unknown = protocol_cases(spec, result)
        if args.protocol_cases:
            planned = planned[: args.protocol_cases]
        cases = []
        for case, case_result in planned:
            if time.perf_counter() > deadline:
                break
            cases.append(
                protocol_case_row(
                    spec, module, case, case_result, result, timer, torch.device(device), args.dobench_twice
                )
            )
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        row = protocol_operator_row(operator_id, result, cases, len(planned), unknown)
        row["host_probe_us"] = [host_before, probe() if probe else None]
        rows.append(row)
        save()
        notes = []
        if row["timed_cases"] < len(planned):
            notes.append(f"cut off by the budget ({row['timed_cases']} of {len(planned)} timed)")
        if not planned:
            notes.append("no case has a protocol timing" + (" (a judge without the pass?)" if result else ""))
        if row["failed_cases"]:
            notes.append(f"{len(row['failed_cases'])} cases failed here: {cases[0].get('error', '')[:60]}")
        if unknown:
            notes.append(f"{len(unknown)} protocol cases not rebuilt (not public)")
        mismatched = [
            case for case in cases if case.get("timed_against", case["reference_kind"]) != case["reference_kind"]
        ]
        if mismatched:
            notes.append(f"{len(mismatched)} cases timed against the reference, the judge against the baseline")
        sides = row["sides_judge_over_do_bench"]
        if sides["reference"] and sides["candidate"]:
            notes.append(f"us judge/do_bench: reference {sides['reference']:.2f}, candidate {sides['candidate']:.2f}")
        if probe:
            notes.append(
                "host probe {:.1f} / {:.1f} us (before the judge / after do_bench)".format(*row["host_probe_us"])
            )
        within = "-" if row["within_10pct"] is None else ("yes" if row["within_10pct"] else "no")
        print(
            f"{operator_id:<28}{row['timed_cases']:>5}/{len(planned):<5}{_fmt(row['judge_protocol_same_cases'], 16)}"
            f"{_fmt(row['do_bench'], 10)}{_fmt(row['ratio'], 8)}  {within:<10}{_fmt(row['judge_device_time'], 13)}"
            f"{_fmt(row['do_bench_self_ratio'], 14)}  {'; '.join(notes)}",
            flush=True,
        )
    compared = [row for row in rows if row.get("within_10pct") is not None]
    agree = sum(1 for row in compared if row["within_10pct"])
    OUTPUT["protocol_dobench_summary"] = {
        "operators": len(rows),
        "compared": len(compared),
        "within_10pct": agree,
        "seconds": time.perf_counter() - started,
    }
    print(
        f"protocol agreement: {agree}/{len(compared)} operators within 10 %"
        + (f" ({len(rows) - len(compared)} of {len(rows)} not compared)" if len(compared) < len(rows) else "")
        + f"; {time.perf_counter() - started:.0f} s"
    )


def section_repeat(chip: str, device: str, args: argparse.Namespace) -> None:
    print("\n== repeatability: good/cos_plain.py judged 5 times")
    path = KERNELS / "good/cos_plain.py"
    values = []
    for index in range(5):
        result = judge_with(
            make_job("aten::cos", path.read_text(), chip, device, ("public",), True),
            JudgeOptions(timing=TimingOptions(budget_s_per_case=args.case_budget)),
        )
        values.append(result.speedup)
        print(
            f"  run {index + 1}: {result.status} {fmt_speedup(result.speedup)} stages {result.stage_seconds}",
            flush=True,
        )
    usable = [value for value in values if value]
    cv = coefficient_of_variation(usable)
    OUTPUT["repeat"] = {"speedups": values, "cv": cv}
    print(f"coefficient of variation: {cv if cv is None else f'{cv:.2%}'}")


def section_repeat_refs(chip: str, device: str, args: argparse.Namespace) -> None:
    """The selected reference kernels judged --repeat-rounds more times (after the refs section's round, which
    counts as the first), --refs-jobs at once: per operator the speedups, their coefficient of variation,
    and the same over only the timed cases whose kernels run 10 us or longer on both sides."""
    from concurrent.futures import as_completed

    from bench_judge import judge_pool, timed_judge

    files = _reference_files()
    tiers = tuple(args.refs_tiers.split(","))
    print(
        f"\n== repeatability: {len(files)} reference kernels judged {args.repeat_rounds} more times "
        f"({args.refs_jobs} at once, tiers {'+'.join(tiers)})"
    )
    raw = OUTPUT.setdefault("repeat_refs_raw", [])  # saved as judgements finish: a cut-off run keeps them

    def record(operator_id: str, result: JudgeResult) -> None:
        long = [
            case.speedup
            for case in result.case_results
            if case.timed and case.speedup and min(case.reference_ms, case.candidate_ms) >= 0.010
        ]
        # Per-case medians too: which side moved between judgements (NOTES.md, "Reference-side spread").
        raw.append(
            {
                "operator": operator_id,
                "status": result.status,
                "speedup": result.speedup,
                "speedup_10us": geometric_mean(long),
                "cases": [
                    {"case_id": case.case_id, "reference_ms": case.reference_ms, "candidate_ms": case.candidate_ms}
                    for case in result.case_results
                    if case.timed
                ],
            }
        )

    for operator_id, _ in files:
        if operator_id in REF_RESULTS:
            record(operator_id, REF_RESULTS[operator_id])
    with judge_pool(args.refs_jobs, device) as pool:
        futures = {
            pool.submit(timed_judge, make_job(operator_id, path.read_text(), chip, device, tiers, True)): operator_id
            for _ in range(args.repeat_rounds)
            for operator_id, path in files
        }
        for future in as_completed(futures):
            record(futures[future], future.result()[0])
            save()

    rows = OUTPUT.setdefault("repeat_refs", [])
    print(f"{'operator':<36}{'runs':>5}  {'speedups':<44}{'CV':>8}{'CV >=10us':>11}")
    for operator_id in dict.fromkeys(entry["operator"] for entry in raw):
        judged = [entry for entry in raw if entry["operator"] == operator_id]
        passed = [entry for entry in judged if entry["status"] == "passed"]
        speedups = [entry["speedup"] for entry in passed if entry["speedup"]]
        long = [entry["speedup_10us"] for entry in passed if entry["speedup_10us"]]
        row = {
            "operator": operator_id,
            "statuses": [entry["status"] for entry in judged],
            "speedups": speedups,
            "cv": coefficient_of_variation(speedups),
            "speedups_10us": long,
            "cv_10us": coefficient_of_variation(long),
        }
        rows.append(row)
        shown = ["-" if row[key] is None else f"{row[key]:.2%}" for key in ("cv", "cv_10us")]
        print(
            f"{operator_id:<36}{len(judged):>5}  {' '.join(f'{v:.3f}' for v in speedups):<44}"
            f"{shown[0]:>8}{shown[1]:>11}",
            flush=True,
        )
    under = sum(1 for row in rows if row["cv_10us"] is not None and row["cv_10us"] < 0.01)
    print(f"operators with CV under 1% (cases >= 10 us): {under}/{len(rows)}")


def section_batch(chip: str, device: str, args: argparse.Namespace) -> None:
    """N different operators' reference kernels judged back to back (public + timing, as a submission is):
    fork-server sandboxes against one fresh interpreter per kernel, per-stage totals, 110-operator projection."""
    from bench_judge import run_batch

    files = _reference_files()[: args.batch]
    operators = [operator_id for operator_id, _ in files]
    sources = [path.read_text() for _, path in files]
    tiers = ("public", "held_out")
    print(
        f"\n== throughput: {len(files)} operators, public + held_out, correctness + timing per kernel; "
        f"fork-server with {args.jobs} judges at once vs one fresh process per kernel, one after another "
        f"(on the first {args.naive_batch})"
    )
    results = {
        "forkserver": run_batch(sources, operators, "forkserver", chip, device, jobs=args.jobs, tiers=tiers),
        "popen": run_batch(
            sources[: args.naive_batch], operators[: args.naive_batch], "popen", chip, device, jobs=1, tiers=tiers
        ),
    }
    for launcher, summary in results.items():
        print(
            f"  {launcher:<11} {summary['kernels']} kernels, {summary['jobs']} at once: "
            f"total {summary['total_s']:.1f} s ({summary['per_kernel_s']:.2f} s/operator, "
            f"pool start {summary['pool_start_s']:.1f} s); summed stages "
            + ", ".join(
                f"{stage} {summary.get(stage + '_total_s', 0):.1f} s"
                for stage in ("process_start", "compile", "correctness", "timing", "device_wait")
            )
            + f"; {summary['statuses']}",
            flush=True,
        )
    OUTPUT["batch"] = {launcher: summary for launcher, summary in results.items()}
    OUTPUT["batch"]["projection_110_ops_s"] = results["forkserver"]["per_kernel_s"] * 110
    fast, naive = results["forkserver"]["per_kernel_s"], results["popen"]["per_kernel_s"]
    print(
        f"per operator: fork-server x{args.jobs} {fast:.2f} s vs naive {naive:.2f} s ({naive / fast:.1f}x); "
        f"110 operators projected at {results['forkserver']['per_kernel_s'] * 110:.0f} s (target < 300 s)"
    )


def print_summary() -> None:
    """One compact table at the end: what the lead reports."""
    refs = OUTPUT.get("refs_summary", {})
    dobench = OUTPUT.get("dobench_summary", {})
    repeat = OUTPUT.get("repeat", {})
    batch = OUTPUT.get("batch", {})
    fixtures = OUTPUT.get("fixtures", [])
    protocol = OUTPUT.get("protocol_dobench_summary", {})
    lines = [
        ("reference kernels passed", f"{refs.get('passed', '-')}/{refs.get('total', '-')}"),
        ("refs: mean s/operator with timing", f"{refs.get('mean_wall_s_with_timing') or 0:.2f}"),
        ("refs: section wall s", f"{refs.get('wall_s') or 0:.1f}"),
        (
            "refs: 110-operator projection s (one at a time)",
            "-" if refs.get("projection_110_ops_s") is None else f"{refs['projection_110_ops_s']:.0f}",
        ),
        ("speedup within 5% of do_bench", f"{dobench.get('within_5pct', '-')}/{dobench.get('operators', '-')}"),
        ("... of do_bench_cudagraph", f"{dobench.get('within_5pct_cudagraph', '-')}/{dobench.get('operators', '-')}"),
        (
            "... of flushed graph replays",
            f"{dobench.get('within_5pct_graph_flushed', '-')}/{dobench.get('operators', '-')}",
        ),
        ("5-repeat CV of speedup", "-" if repeat.get("cv") is None else f"{repeat['cv']:.2%}"),
        ("batch forkserver total s", f"{batch.get('forkserver', {}).get('total_s', 0):.1f}"),
        ("batch naive (popen) total s", f"{batch.get('popen', {}).get('total_s', 0):.1f}"),
        ("batch: 110-operator projection s", f"{batch.get('projection_110_ops_s', 0):.0f}"),
        (
            "protocol speedup within 10% of do_bench",
            f"{protocol.get('within_10pct', '-')}/{protocol.get('compared', '-')}",
        ),
        ("fixtures with unexpected verdict", str(sum(1 for row in fixtures if not row.get("verdict_ok")))),
        ("section seconds", json.dumps({k: round(v) for k, v in OUTPUT.get("section_seconds", {}).items()})),
    ]
    print("\n== summary")
    for name, value in lines:
        print(f"{name:<36} {value}")


SECTIONS = {
    "refs": section_refs,
    "fixtures": section_fixtures,
    "dobench": section_dobench,
    "repeat": section_repeat,
    "repeat_refs": section_repeat_refs,
    "batch": section_batch,
    "protocol_dobench": section_protocol_dobench,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", default="refs,dobench,repeat,batch,fixtures")
    parser.add_argument("--max-ops", type=int, default=0, help="judge only the first N reference kernels (0: all)")
    parser.add_argument(
        "--refs-timing-s",
        type=float,
        default=240.0,
        help="time reference kernels for this long, then judge the rest without timing",
    )
    parser.add_argument("--dobench-ops", type=int, default=12)
    parser.add_argument("--dobench-cases", type=int, default=4)
    parser.add_argument("--case-budget", type=float, default=0.15, help="timing budget per case, seconds")
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=8, help="judges at once in the throughput section")
    parser.add_argument("--naive-batch", type=int, default=6, help="kernels judged the naive way (slow)")
    parser.add_argument("--refs-jobs", type=int, default=1, help="reference kernels judged at once (refs)")
    parser.add_argument("--refs-tiers", default="public,held_out", help="tiers the refs sections judge")
    parser.add_argument("--repeat-rounds", type=int, default=4, help="more judgements of each (repeat_refs)")
    parser.add_argument("--fixtures-only", default="", help="comma-separated substrings of fixture labels")
    parser.add_argument(
        "--fixture-copies", type=int, default=1, help="judge each chosen fixture this many times, all in one pool"
    )
    parser.add_argument("--protocol-jobs", type=int, default=10, help="judges at once (protocol_dobench)")
    parser.add_argument(
        "--protocol-tiers",
        default="public",
        help="tiers protocol_dobench judges (public: the protocol's cases; smoke: a quick run on the CPU)",
    )
    parser.add_argument(
        "--protocol-cases", type=int, default=0, help="do_bench at most this many cases per operator (0: all)"
    )
    parser.add_argument(
        "--protocol-budget-s",
        type=float,
        default=150.0,
        help="protocol_dobench's seconds, judging included: do_bench stops there, the table shows what it timed",
    )
    parser.add_argument(
        "--dobench-twice",
        action="store_true",
        help="protocol_dobench: time every case with do_bench twice (do_bench's agreement with itself)",
    )
    parser.add_argument(
        "--interleave",
        action="store_true",
        help="protocol_dobench: judge each operator right before do_bench times it (not all first)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="protocol_dobench without the judge or do_bench: every case's sides built and called (CPU too)",
    )
    args = parser.parse_args()
    from bench_judge import jobs_fitting

    chip, device, device_bytes = detect_device()
    args.jobs, args.refs_jobs = jobs_fitting(args.jobs, device_bytes), jobs_fitting(args.refs_jobs, device_bytes)
    OUTPUT["environment"] = {
        "chip": chip,
        "device": device,
        "torch": torch.__version__,
        "triton": __import__("triton").__version__,
        "python": sys.version.split()[0],
        "gpu": gpu_state(),
        "euid": os.geteuid(),
    }
    print(f"chip {chip} ({device}); torch {torch.__version__}; {OUTPUT['environment']['gpu']}")
    if device == "cpu":
        print("no GPU here: this script is meant for the H200 (it would only exercise the interpreter)")
    for name in args.sections.split(","):
        started = time.perf_counter()
        try:
            SECTIONS[name](chip, device, args)
        except Exception:
            OUTPUT.setdefault("errors", {})[name] = traceback.format_exc()
            print(f"section {name} failed:\n{traceback.format_exc()}")
        OUTPUT.setdefault("section_seconds", {})[name] = time.perf_counter() - started
        save()
    print_summary()
    return 0


if __name__ == "__main__":
    sys.exit(main())

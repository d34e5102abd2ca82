"""Judge on a real GPU (written for the H200): reference kernels, fixtures, cheats, timing sanity, throughput.

    PYTHONPATH=<repo root> python3 scripts/gpu/judge_h200.py [--sections refs,fixtures,dobench,repeat,batch]
                                                            [--max-ops 12] [--case-budget 0.5] [--batch 20]

Sections (each prints a table as it goes and survives the others failing; JSON goes to $OUT/judge_h200.json
when OUT is set, else ./judge_h200.json, rewritten after every section):
  refs      every reference kernel in evaluation/catalog/reference_kernels/ (aten__<op>.py, vllm13__<op>.py,
            cublas__<op>.py) whose operator is in the catalog, judged on public + held_out with timing.
  fixtures  tests/evaluation/kernels good/ (must pass), wrong/ and cheats/ (must not) against aten::cos.
  dobench   the judge's aten::cos speedup against triton.testing.do_bench medians measured in this process.
  repeat    the same good kernel judged 5 times: coefficient of variation of the speedup.
  batch     N kernels through fork-server sandboxes vs one fresh process per kernel, per-stage wall times.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import torch  # noqa: E402

from evaluation.judge.backends import detect_chip, gpu_state, peaks_for  # noqa: E402
from evaluation.judge.job import JudgeJob, JudgeResult  # noqa: E402
from evaluation.judge.records import find_operator  # noqa: E402
from evaluation.judge.runner import JudgeOptions, TimingOptions, judge_with  # noqa: E402

KERNELS = ROOT / "tests/evaluation/kernels"
REFERENCE_KERNELS = ROOT / "evaluation/catalog/reference_kernels"
NAMESPACES = {"aten": "aten", "vllm13": "vllm13", "cublas": "cublas"}
# What the fixtures must get on a GPU (cheats the static scan refuses are "rejected" too).
EXPECTED_NOT_PASSED = {"wrong": None, "cheats": None}
HARMLESS_CHEATS = {"cache_by_data_ptr.py"}  # fresh buffers every call: the cache never hits, it must pass
SPECIAL_STATUSES = {"published_shapes.py": "failed_correctness"}  # only with held_out in the tiers

OUTPUT: dict = {}


def save() -> None:
    target = Path(os.environ.get("OUT", ".")) / "judge_h200.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(OUTPUT, indent=1, default=str))


def make_job(operator_id: str, source: str, chip: str, device: str, tiers: tuple[str, ...], timing: bool,
             budget_s: float = 1200.0) -> JudgeJob:
    bandwidth, flops = peaks_for(chip)
    return JudgeJob(operator_id=operator_id, source_code=source, chip_slug=chip, device_type=device, tiers=tiers,
                    measure_timing=timing, time_budget_s=budget_s, peak_bandwidth_bytes_per_s=bandwidth,
                    peak_flops_by_dtype=flops)


def summarise(result: JudgeResult) -> dict:
    failed_check = next((check.name for check in result.checks if check.outcome == "failed"), "")
    return {"status": result.status, "reason": result.reason[:300], "cases": f"{result.cases_passed}/"
            f"{result.cases_total}", "speedup": result.speedup, "ci95": result.speedup_ci95,
            "flagged": result.flagged, "failed_check": failed_check, "stages": result.stage_seconds,
            "failed_case": (result.failed_case or {}).get("case_id", "")}


def fmt_speedup(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}x"


# ---------------------------------------------------------------- sections


def section_refs(chip: str, device: str, args: argparse.Namespace) -> None:
    rows = OUTPUT.setdefault("refs", [])
    timing = TimingOptions(budget_s_per_case=args.case_budget, min_iterations=10)
    files = sorted(REFERENCE_KERNELS.glob("*__*.py"))[: args.max_ops]
    print(f"\n== reference kernels ({len(files)} files, tiers public+held_out, timing on)")
    print(f"{'operator':<36}{'status':<20}{'cases':>9}{'speedup':>10}  {'95% CI':<18}{'wall s':>8}  failed check")
    for path in files:
        namespace, name = path.stem.split("__", 1)
        operator_id = f"{NAMESPACES.get(namespace, namespace)}::{name}"
        try:
            find_operator(operator_id)
        except KeyError:
            print(f"{operator_id:<36}no catalog record")
            continue
        started = time.perf_counter()
        result = judge_with(make_job(operator_id, path.read_text(), chip, device, ("public", "held_out"), True),
                            JudgeOptions(timing=timing))
        row = dict(summarise(result), operator=operator_id, wall_s=time.perf_counter() - started)
        rows.append(row)
        ci = "-" if not result.speedup_ci95 else f"{result.speedup_ci95[0]:.3f}-{result.speedup_ci95[1]:.3f}"
        print(f"{operator_id:<36}{result.status:<20}{row['cases']:>9}{fmt_speedup(result.speedup):>10}  {ci:<18}"
              f"{row['wall_s']:>8.1f}  {row['failed_check']} {row['reason'][:80] if result.status != 'passed' else ''}",
              flush=True)


def section_fixtures(chip: str, device: str, args: argparse.Namespace) -> None:
    rows = OUTPUT.setdefault("fixtures", [])
    print("\n== fixtures against aten::cos (good must pass; wrong/cheats must not)")
    print(f"{'kernel':<34}{'status':<20}{'verdict ok':<11}{'speedup':>10}  check / reason")
    for folder in ("good", "wrong", "cheats"):
        for path in sorted((KERNELS / folder).glob("*.py")):
            if path.name in ("cos_inplace.py", "gpu_tf32_mm.py"):
                continue  # a test-only cos_ record; aten::mm below
            tiers = ("public", "held_out") if path.name in SPECIAL_STATUSES else ("public",)
            result = judge_with(make_job("aten::cos", path.read_text(), chip, device, tiers, folder == "good"),
                                JudgeOptions(timing=TimingOptions(budget_s_per_case=args.case_budget)))
            if folder == "good" or path.name in HARMLESS_CHEATS:
                ok = result.status == "passed"
            else:
                ok = result.status != "passed"
            row = dict(summarise(result), kernel=f"{folder}/{path.name}", verdict_ok=ok)
            rows.append(row)
            print(f"{folder + '/' + path.name:<34}{result.status:<20}{str(ok):<11}{fmt_speedup(result.speedup):>10}"
                  f"  {row['failed_check']} {row['reason'][:90]}", flush=True)
    try:
        find_operator("aten::mm")
        result = judge_with(make_job("aten::mm", (KERNELS / "cheats/gpu_tf32_mm.py").read_text(), chip, device,
                                     ("public",), False), JudgeOptions())
        ok = result.status == "failed_correctness" and any(
            check.name == "fp64_second_opinion" and check.outcome == "failed" for check in result.checks)
        rows.append(dict(summarise(result), kernel="cheats/gpu_tf32_mm.py (aten::mm)", verdict_ok=ok))
        print(f"{'cheats/gpu_tf32_mm.py (aten::mm)':<34}{result.status:<20}{str(ok):<11}{'-':>10}"
              f"  {rows[-1]['failed_check']} {rows[-1]['reason'][:90]}", flush=True)
    except KeyError:
        print("aten::mm not in the catalog: tf32 cheat skipped")
    bad = [row["kernel"] for row in rows if not row["verdict_ok"]]
    print(f"fixtures with an unexpected verdict: {bad or 'none'}")


def _do_bench_speedup(path: Path) -> dict:
    """Speedup of a kernel file over torch.cos with triton.testing.do_bench, in this (trusted) process."""
    import importlib.util

    import triton.testing

    spec = find_operator("aten::cos")
    module_spec = importlib.util.spec_from_file_location("bench_candidate", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    speedups, per_case = [], []
    for case in spec.cases("public"):
        if case.entry_point != "cos" or not case.timed:
            continue
        call = spec.make_inputs(case, torch.Generator().manual_seed(0))
        x = call.args[0].cuda() if call.args[0].dim() < 2 else call.args[0].contiguous().cuda()
        candidate = triton.testing.do_bench(lambda x=x: module.cos(x), warmup=25, rep=100, return_mode="median")
        reference = triton.testing.do_bench(lambda x=x: torch.cos(x), warmup=25, rep=100, return_mode="median")
        speedups.append(reference / candidate)
        per_case.append({"case_id": case.case_id, "reference_ms": reference, "candidate_ms": candidate})
    geomean = math.exp(sum(math.log(value) for value in speedups) / len(speedups)) if speedups else None
    return {"geomean": geomean, "cases": per_case}


def section_dobench(chip: str, device: str, args: argparse.Namespace) -> None:
    print("\n== judge speedup vs triton.testing.do_bench (aten::cos public cases, entry point cos)")
    path = KERNELS / "good/cos_plain.py"
    reference = _do_bench_speedup(path)
    spec = find_operator("aten::cos")
    import dataclasses

    cos_only = dataclasses.replace(spec, public=tuple(case for case in spec.public if case.entry_point == "cos"))
    result = judge_with(make_job("aten::cos", path.read_text(), chip, device, ("public",), True),
                        JudgeOptions(spec=cos_only, timing=TimingOptions(budget_s_per_case=args.case_budget * 2)))
    OUTPUT["dobench"] = {"do_bench": reference, "judge": summarise(result),
                         "judge_cases": [{"case_id": c.case_id, "reference_ms": c.reference_ms,
                                          "candidate_ms": c.candidate_ms, "spread": c.spread}
                                         for c in result.case_results]}
    ratio = (result.speedup / reference["geomean"]) if result.speedup and reference["geomean"] else None
    print(f"do_bench geomean {fmt_speedup(reference['geomean'])}; judge {fmt_speedup(result.speedup)} "
          f"(CI {result.speedup_ci95}); judge/do_bench = {ratio if ratio is None else round(ratio, 3)}")
    by_id = {row["case_id"]: row for row in reference["cases"]}
    for case in result.case_results:
        bench = by_id.get(case.case_id)
        if bench and case.candidate_ms:
            print(f"  {case.case_id[:70]:<72} judge {case.reference_ms:.4f}/{case.candidate_ms:.4f} ms  "
                  f"do_bench {bench['reference_ms']:.4f}/{bench['candidate_ms']:.4f} ms (ref/cand, L2 flushed "
                  f"in the judge)")


def section_repeat(chip: str, device: str, args: argparse.Namespace) -> None:
    print("\n== repeatability: good/cos_plain.py judged 5 times")
    path = KERNELS / "good/cos_plain.py"
    values = []
    for index in range(5):
        result = judge_with(make_job("aten::cos", path.read_text(), chip, device, ("public",), True),
                            JudgeOptions(timing=TimingOptions(budget_s_per_case=args.case_budget)))
        values.append(result.speedup)
        print(f"  run {index + 1}: {result.status} {fmt_speedup(result.speedup)} stages {result.stage_seconds}",
              flush=True)
    usable = [value for value in values if value]
    cv = statistics.stdev(usable) / statistics.mean(usable) if len(usable) > 1 else None
    OUTPUT["repeat"] = {"speedups": values, "cv": cv}
    print(f"coefficient of variation: {cv if cv is None else f'{cv:.2%}'}")


def section_batch(chip: str, device: str, args: argparse.Namespace) -> None:
    from bench_judge import run_batch

    files = sorted((KERNELS / "good").glob("cos_[!i]*.py"))
    sources = [files[index % len(files)].read_text() for index in range(args.batch)]
    print(f"\n== throughput: {args.batch} kernels, correctness + timing per kernel")
    results = {}
    for launcher in ("forkserver", "popen"):
        results[launcher] = run_batch(sources, "aten::cos", launcher, chip, device)
        summary = results[launcher]
        print(f"  {launcher:<11} total {summary['total_s']:.1f} s ({summary['per_kernel_s']:.2f} s/kernel); " +
              ", ".join(f"{stage} {summary.get(stage + '_total_s', 0):.1f} s"
                        for stage in ("process_start", "compile", "correctness", "timing"))
              + f"; {summary['statuses']}", flush=True)
    OUTPUT["batch"] = {launcher: {key: value for key, value in summary.items() if key != "rows"}
                       for launcher, summary in results.items()}
    print(f"fork-server speed-up over one process per kernel: "
          f"{results['popen']['total_s'] / results['forkserver']['total_s']:.2f}x")


SECTIONS = {"refs": section_refs, "fixtures": section_fixtures, "dobench": section_dobench,
            "repeat": section_repeat, "batch": section_batch}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sections", default="fixtures,dobench,repeat,batch,refs")
    parser.add_argument("--max-ops", type=int, default=12)
    parser.add_argument("--case-budget", type=float, default=0.5, help="timing budget per case, seconds")
    parser.add_argument("--batch", type=int, default=20)
    args = parser.parse_args()
    chip, device = detect_chip()
    OUTPUT["environment"] = {"chip": chip, "device": device, "torch": torch.__version__,
                             "triton": __import__("triton").__version__, "python": sys.version.split()[0],
                             "gpu": gpu_state(), "euid": os.geteuid()}
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
    return 0


if __name__ == "__main__":
    sys.exit(main())

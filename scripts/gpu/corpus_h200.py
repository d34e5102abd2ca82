"""Judge the issue-19 corpus of outside-style kernels, scan on and off, against its manifest corpus.toml.

The corpus (tests/evaluation/kernels/corpus) holds kernels in other people's styles, honest and buggy, each
with its expected verdict.

On an H200: ``PYTHONPATH=. python3 scripts/gpu/corpus_h200.py`` judges every file on the public and held-out
tiers (correctness only), with the static scan on and off, and prints one line per (file, scan mode): the
file, the expected status, the status it got, seconds, the start of the reason; then per scan mode
``honest: P/N passed; buggy: B/M failed as expected; scan on``. With ``$OUT`` set the full results go there
as JSON. ``--device cpu`` judges the smoke tier on the Triton interpreter instead.

Only the status is compared off the smoke tier: ``reason_contains`` names smoke cases. An outcome the
manifest records as a known judge defect is counted as it is (not as expected) and marked ``known defect``.
tests/evaluation/judge/test_judge_corpus.py judges the same files on the CPU through the functions below.
No Django: only the judge and the catalog.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evaluation.catalog.spec import TIERS  # noqa: E402
from evaluation.judge import interpreter_defects  # noqa: E402
from evaluation.judge.job import VERDICTS, JudgeJob, JudgeResult  # noqa: E402
from evaluation.judge.runner import JudgeOptions, judge_with  # noqa: E402

CORPUS = ROOT / "tests" / "evaluation" / "kernels" / "corpus"
MANIFEST = CORPUS / "corpus.toml"
KINDS = ("honest", "buggy")
SCAN_MODES = {"scan_on": True, "scan_off": False}
# A buggy file is an honest author's mistake: calling it a cheat, or failing to judge it, is the judge's error.
NEVER_FOR_BUGGY = ("rejected", "error")


@dataclass(frozen=True)
class Entry:
    """One corpus file and what the judge must say about it."""

    relative: str  # "honest/aten__add.py"
    style: str
    expected_status: str
    reason_contains: tuple[str, ...] = ()
    bug: str = ""
    defects: dict[str, str] = field(default_factory=dict)  # scan mode -> what today's judge does wrong
    # Buggy files: the case tiers with a case that exposes the bug (empty: every tier). Judged on tiers
    # without one (a GPU runs the original's public and held-out grids), the file passes, as it would there.
    exposed_by: tuple[str, ...] = ()
    # A known defect of the CPU interpreter (interpreter_defects, by name) that makes this file's right answer
    # wrong there: on the interpreter's tier it fails, and the reason must name that defect; elsewhere it
    # is judged as its kind says.
    interpreter_defect: str = ""

    @property
    def kind(self) -> str:
        return self.relative.split("/", 1)[0]

    @property
    def path(self) -> Path:
        return CORPUS / self.relative

    @property
    def operator_id(self) -> str:
        namespace, name = Path(self.relative).stem.split("__", 1)
        return f"{namespace}::{name}"

    def defect(self, scan_mode: str) -> str | None:
        return self.defects.get(scan_mode)

    def expected_on(self, tiers: tuple[str, ...]) -> str:
        """The status the judge must give when it judges ``tiers``."""
        if self.interpreter_defect and "smoke" in tiers:
            return "failed_correctness"
        if self.exposed_by and not set(self.exposed_by) & set(tiers):
            return "passed"
        return self.expected_status

    def interpreter_note(self) -> str:
        return next(defect.note for defect in interpreter_defects.ALL if defect.name == self.interpreter_defect)


def _defects(raw: object, where: str) -> dict[str, str]:
    if raw is None:
        return {}
    if isinstance(raw, str):
        return dict.fromkeys(SCAN_MODES, raw)
    if isinstance(raw, dict) and set(raw) <= set(SCAN_MODES) and all(isinstance(v, str) for v in raw.values()):
        return dict(raw)
    raise ValueError(f"{where}: known_judge_defect must be a string or a table of scan_on / scan_off strings")


def load_manifest(path: Path = MANIFEST) -> dict[str, Entry]:
    """Every entry of corpus.toml by relative path, validated (raises ValueError on a malformed entry)."""
    files = tomllib.loads(path.read_text())["files"]
    entries = {}
    for relative, raw in files.items():
        kind = relative.split("/", 1)[0]
        if kind not in KINDS:
            raise ValueError(f"{relative}: corpus files live under {' or '.join(KINDS)}/")
        expected = raw.get("expected_status", "passed" if kind == "honest" else "")
        contains = raw.get("reason_contains", ())
        contains = (contains,) if isinstance(contains, str) else tuple(contains)
        if expected not in VERDICTS:
            raise ValueError(f"{relative}: expected_status {expected!r} is not a judge status")
        if kind == "honest" and expected != "passed":
            raise ValueError(f"{relative}: an honest file must be expected to pass")
        if kind == "buggy" and (expected == "passed" or expected in NEVER_FOR_BUGGY or not contains):
            raise ValueError(f"{relative}: a buggy file needs a failing expected_status and reason_contains")
        if kind == "buggy" and not raw.get("bug"):
            raise ValueError(f"{relative}: say what the bug is")
        if not raw.get("style"):
            raise ValueError(f"{relative}: say what the style is")
        exposed_by = tuple(raw.get("exposed_by", ()))
        if exposed_by and (kind != "buggy" or not set(exposed_by) <= set(TIERS) or not raw.get("exposed_why")):
            raise ValueError(
                f"{relative}: exposed_by names tiers of a buggy file ({', '.join(TIERS)}), with exposed_why"
            )
        interpreter_defect = raw.get("interpreter_defect", "")
        if interpreter_defect and interpreter_defect not in {defect.name for defect in interpreter_defects.ALL}:
            raise ValueError(f"{relative}: interpreter_defect {interpreter_defect!r} is no known defect")
        entries[relative] = Entry(
            relative=relative,
            style=raw["style"],
            expected_status=expected,
            reason_contains=contains,
            bug=raw.get("bug", ""),
            defects=_defects(raw.get("known_judge_defect"), relative),
            exposed_by=exposed_by,
            interpreter_defect=interpreter_defect,
        )
    return entries


def corpus_files() -> list[str]:
    """The kernel files on disk, relative to the corpus folder (a kind's subfolders hold later rounds whose
    file names repeat an earlier round's operator)."""
    return sorted(str(path.relative_to(CORPUS)) for kind in KINDS for path in (CORPUS / kind).rglob("*.py"))


def judge_said(defect: str) -> str:
    """The judge's own words quoted in a known-defect note (its first double-quoted fragment)."""
    quoted = re.search(r'"([^"]+)"', defect)
    if not quoted:
        raise ValueError(f"a known judge defect must quote the judge's reason: {defect!r}")
    return quoted.group(1)


def build_job(
    entry: Entry,
    *,
    chip: str = "cpu-interpreter",
    device_type: str = "cpu",
    tiers: tuple[str, ...] = ("smoke",),
    budget_s: float = 300.0,
    judges_sharing_device: int = 1,
) -> JudgeJob:
    return JudgeJob(
        operator_id=entry.operator_id,
        source_code=entry.path.read_text(),
        chip_slug=chip,
        device_type=device_type,
        tiers=tiers,
        time_budget_s=budget_s,
        run_id=f"corpus:{entry.relative}",
        judges_sharing_device=judges_sharing_device,
    )


def judge_entry(entry: Entry, scan_mode: str, **job_args) -> tuple[JudgeResult, float]:
    """The real judge (the operator's own catalog record) on one corpus file; the result and its seconds."""
    started = time.perf_counter()
    result = judge_with(build_job(entry, **job_args), JudgeOptions(static_scan=SCAN_MODES[scan_mode]))
    return result, time.perf_counter() - started


def problems(
    entry: Entry, result: JudgeResult, *, check_reason: bool = True, tiers: tuple[str, ...] = ("smoke",)
) -> list[str]:
    """How the verdict departs from the manifest (empty when the judge said the right thing for the right
    reason) on a judgement of ``tiers``."""
    found = []
    expected = entry.expected_on(tiers)
    if result.status != expected:
        found.append(f"status {result.status}, expected {expected}")
    if entry.kind == "buggy" and result.status in NEVER_FOR_BUGGY:
        found.append(f"an honest bug judged {result.status}")
    if entry.interpreter_defect and "smoke" in tiers:
        if check_reason and entry.interpreter_note() not in result.reason:
            found.append(f"reason does not name the interpreter's {entry.interpreter_defect}")
    elif entry.kind == "buggy" and check_reason and expected != "passed":
        found.extend(f"reason lacks {text!r}" for text in entry.reason_contains if text not in result.reason)
    return found


def outcome_line(
    entry: Entry, scan_mode: str, result: JudgeResult, seconds: float, *, check_reason: bool, tiers: tuple[str, ...]
) -> str:
    wrong = problems(entry, result, check_reason=check_reason, tiers=tiers)
    defect = entry.defect(scan_mode)
    mark = "ok" if not wrong else ("known defect" if defect and judge_said(defect) in result.reason else "WRONG")
    if not wrong and entry.kind == "buggy" and entry.expected_on(tiers) == "passed":
        mark = "ok: bug outside these tiers"
    reason = " ".join(result.reason.split())[:120]
    return (
        f"{entry.relative:50s} {scan_mode:8s} expected {entry.expected_on(tiers):18s} got {result.status:18s} "
        f"{seconds:6.1f}s {mark:12s} {reason}"
    )


def summary(
    rows: list[tuple[Entry, str, JudgeResult]], *, check_reason: bool, tiers: tuple[str, ...] = ("smoke",)
) -> list[str]:
    """Per scan mode judged: the summary line, then how many departures the manifest records as known
    judge defects (the judge's quoted words in the reason)."""
    lines = []
    for scan_mode in [mode for mode in SCAN_MODES if any(row[1] == mode for row in rows)]:
        mine = [(entry, result) for entry, mode, result in rows if mode == scan_mode]
        honest = [result for entry, result in mine if entry.kind == "honest"]
        buggy = [(entry, result) for entry, result in mine if entry.kind == "buggy"]
        exposed = [(entry, result) for entry, result in buggy if entry.expected_on(tiers) != "passed"]
        passed = sum(result.status == "passed" for result in honest)
        as_expected = sum(
            not problems(entry, result, check_reason=check_reason, tiers=tiers) for entry, result in exposed
        )
        outside = len(buggy) - len(exposed)
        lines.append(
            f"honest: {passed}/{len(honest)} passed; buggy: {as_expected}/{len(exposed)} failed as expected"
            + (f" ({outside} more whose bug no case of these tiers exposes)" if outside else "")
            + f"; {scan_mode.replace('_', ' ')}"
        )
        known = sum(
            bool(problems(entry, result, check_reason=check_reason, tiers=tiers))
            and entry.defect(scan_mode) is not None
            and judge_said(entry.defect(scan_mode)) in result.reason
            for entry, result in mine
        )
        wrong = sum(bool(problems(entry, result, check_reason=check_reason, tiers=tiers)) for entry, result in mine)
        lines.append(f"  {scan_mode}: {wrong} departure(s) from the manifest, {known} of them known judge defects")
    return lines


def _judge_task(relative: str, scan_mode: str, job_args: dict) -> tuple[str, str, dict, float]:
    """One judgement in a pool process (module level: pickled by name)."""
    result, seconds = judge_entry(load_manifest()[relative], scan_mode, **job_args)
    return relative, scan_mode, result.to_json(), seconds


def _warm(device_type: str) -> None:
    from evaluation.judge.forkserver import warm_forkserver

    warm_forkserver(device_type)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--tiers", default="", help="comma-separated tiers (default: public,held_out; smoke on cpu)")
    parser.add_argument("--scan", choices=("both", "on", "off"), default="both", help="static scan modes to judge")
    parser.add_argument("--only", default="", help="comma-separated substrings of corpus paths to judge")
    parser.add_argument("--jobs", type=int, default=8, help="judgements at once (one judging process each)")
    parser.add_argument("--budget", type=float, default=300.0, help="per-judgement wall-clock budget, seconds")
    args = parser.parse_args(argv)

    if args.device == "cpu":
        chip, device_type, default_tiers = "cpu-interpreter", "cpu", "smoke"
    else:
        from evaluation.judge.backends import detect_device

        sys.path.insert(0, str(ROOT / "scripts"))
        from bench_judge import jobs_fitting

        chip, device_type, device_bytes = detect_device()
        default_tiers = "public,held_out"
        args.jobs = jobs_fitting(args.jobs, device_bytes)
    tiers = tuple(t for t in (args.tiers or default_tiers).split(",") if t)
    check_reason = tiers == ("smoke",)
    modes = [mode for mode in SCAN_MODES if args.scan in ("both", mode.removeprefix("scan_"))]
    manifest = load_manifest()
    missing = sorted(set(corpus_files()) ^ set(manifest))
    if missing:
        print(f"manifest and folder disagree on: {', '.join(missing)}", flush=True)
        return 2
    wanted = [e for e in manifest.values() if not args.only or any(w in e.relative for w in args.only.split(","))]
    if device_type != "cpu":  # the interpreter's defects do not exist on a GPU, whatever tier it judges
        wanted = [replace(e, interpreter_defect="") for e in wanted]
    job_args = {
        "chip": chip,
        "device_type": device_type,
        "tiers": tiers,
        "budget_s": args.budget,
        "judges_sharing_device": max(1, args.jobs),
    }
    print(f"chip {chip}: {len(wanted)} corpus files, tiers {tiers}, {modes}, {args.jobs} at once", flush=True)

    started = time.monotonic()
    rows: list[tuple[Entry, str, JudgeResult]] = []
    saved: list[dict] = []

    def record(relative: str, scan_mode: str, result: JudgeResult, seconds: float) -> None:
        entry = manifest[relative]
        rows.append((entry, scan_mode, result))
        print(outcome_line(entry, scan_mode, result, seconds, check_reason=check_reason, tiers=tiers), flush=True)
        saved.append({"file": relative, "scan": scan_mode, "seconds": seconds, "result": result.to_json()})
        out = os.environ.get("OUT")
        if out:  # rewritten after every judgement: a run cut off by a time limit keeps what it judged
            (Path(out) / f"corpus_{chip}.json").write_text(json.dumps(saved, indent=1, default=str))

    tasks = [(entry.relative, mode) for entry in wanted for mode in modes]
    if args.jobs > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(args.jobs, mp_context=context, initializer=_warm, initargs=(device_type,)) as pool:
            futures = [pool.submit(_judge_task, relative, mode, job_args) for relative, mode in tasks]
            for future in as_completed(futures):
                relative, mode, result, seconds = future.result()
                record(relative, mode, JudgeResult.from_json(result), seconds)
    else:
        for relative, mode in tasks:
            result, seconds = judge_entry(manifest[relative], mode, **job_args)
            record(relative, mode, result, seconds)
    for line in summary(rows, check_reason=check_reason, tiers=tiers):
        print(line, flush=True)
    print(f"total {time.monotonic() - started:.1f} s", flush=True)
    return 0 if all(not problems(e, r, check_reason=check_reason, tiers=tiers) for e, _, r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())

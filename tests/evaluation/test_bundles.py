"""Offline job bundles: export claims runs, the judge needs no database, import refuses anything tampered with,
foreign or from another chip, and records each verdict exactly once."""

from __future__ import annotations

import copy
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.bundles import BundleRefused, bundle_export, results_import
from evaluation.judge.bundle import BUNDLE_LEASE_PREFIX, judge_bundle
from evaluation.judge.job import JudgeJob, JudgeResult
from evaluation.models import Run
from evaluation.services import chip_ensure, run_claim, runs_requeue_stale
from leaderboard.models import Kernel, Method, Operator, Submission

ROOT = Path(__file__).resolve().parents[2]
CODE = "def cos(self):\n    return self\n\ndef cos_out(self, *, out):\n    return out\n"


@pytest.fixture
def runs(db, cpu_chip, user):
    """Three queued runs on the CPU chip and one on another chip."""
    h200 = chip_ensure(slug="nvidia-h200")
    operator, _ = Operator.objects.get_or_create(
        operator_id="aten::cos", defaults={"source": "aten", "name": "cos", "entry_points": [{"name": "cos"}]}
    )
    method = Method.objects.create(scaffold="Agent", owner=user)
    submission = Submission.objects.create(owner=user, method=method)
    made = []
    for round_number in (1, 2, 3):
        kernel = Kernel.objects.create(
            submission=submission,
            operator=operator,
            source_code=CODE + f"# {round_number}\n",
            sha256=str(round_number) * 64,
            round=round_number,
        )
        made.append(Run.objects.create(kernel=kernel, chip=cpu_chip, operator_version=1))
    other_chip_run = Run.objects.create(kernel=made[0].kernel, chip=h200, operator_version=1)
    return {"cpu": made, "h200": other_chip_run}


def fake_judge(job: JudgeJob) -> JudgeResult:
    passed = job.source_code.endswith("# 1\n")
    return JudgeResult(
        status="passed" if passed else "failed_correctness",
        reason="all 3 cases passed" if passed else "cos[1]: wrong",
        cases_total=3,
        cases_passed=3 if passed else 1,
        speedup=1.5,
        environment={"device": "fake"},
    )


def statuses(run_list) -> list[tuple[str, str]]:
    return [(run.status, run.lease) for run in Run.objects.filter(pk__in=[r.pk for r in run_list]).order_by("pk")]


def test_export_claims_the_chips_queued_runs_under_the_bundle_lease(runs):
    bundle = bundle_export(chip_slug="cpu-interpreter", limit=2)
    first_two = runs["cpu"][:2]
    assert bundle["bundle_id"].startswith(BUNDLE_LEASE_PREFIX)
    assert [job["run_id"] for job in bundle["jobs"]] == [run.pk for run in first_two]
    assert [job["job"]["chip_slug"] for job in bundle["jobs"]] == ["cpu-interpreter", "cpu-interpreter"]
    assert statuses(first_two) == [("running", bundle["bundle_id"])] * 2
    assert statuses([runs["cpu"][2], runs["h200"]]) == [("queued", ""), ("queued", "")]
    # No online worker can take a run that is out in a bundle; the next bundle gets only the rest.
    assert run_claim(run_id=first_two[0].pk, worker="celery@gpu01", pid=1) is None
    assert [job["run_id"] for job in bundle_export(chip_slug="cpu-interpreter")["jobs"]] == [runs["cpu"][2].pk]


def test_a_judged_bundle_is_recorded_exactly_once(runs):
    bundle = bundle_export(chip_slug="cpu-interpreter")
    results = judge_bundle(json.loads(json.dumps(bundle)), judged_chip="cpu-interpreter", judge=fake_judge)
    report = results_import(json.loads(json.dumps(results)), chip_slug="cpu-interpreter")
    cpu_ids = [run.pk for run in runs["cpu"]]
    assert report.to_json() == {
        "bundle_id": bundle["bundle_id"],
        "recorded": cpu_ids,
        "already_recorded": [],
        "not_held": [],
        "missing": [],
    }
    recorded = list(Run.objects.filter(pk__in=cpu_ids).order_by("pk"))
    assert [(run.status, run.cases_passed, run.reason) for run in recorded] == [
        ("passed", 3, "all 3 cases passed"),
        ("failed_correctness", 1, "cos[1]: wrong"),
        ("failed_correctness", 1, "cos[1]: wrong"),
    ]
    assert recorded[0].speedup is None  # the CPU interpreter's timings are never recorded
    finished_at = [run.finished_at for run in recorded]

    again = results_import(results, chip_slug="cpu-interpreter")
    assert (again.recorded, again.already_recorded) == ([], cpu_ids)
    assert [run.finished_at for run in Run.objects.filter(pk__in=cpu_ids).order_by("pk")] == finished_at


def test_a_bundle_judged_on_a_gpu_records_both_speedups_apart(runs):
    """PROTOCOL 6: the protocol's speedup and the device-time one travel in the results bundle and are stored
    side by side, each with its interval, through the one recording path."""

    def timing_judge(job: JudgeJob) -> JudgeResult:
        return JudgeResult(
            status="passed",
            reason="all cases passed",
            cases_total=1,
            cases_passed=1,
            speedup=1.5,
            speedup_ci95=(1.4, 1.6),
            protocol_speedup=1.2,
            protocol_speedup_ci95=(1.1, 1.3),
        )

    bundle = bundle_export(chip_slug="nvidia-h200")
    results = judge_bundle(json.loads(json.dumps(bundle)), judged_chip="nvidia-h200", judge=timing_judge)
    report = results_import(json.loads(json.dumps(results)), chip_slug="nvidia-h200")
    assert report.recorded == [runs["h200"].pk]
    run = Run.objects.get(pk=runs["h200"].pk)
    assert (run.protocol_speedup, run.protocol_speedup_ci_low, run.protocol_speedup_ci_high) == (1.2, 1.1, 1.3)
    assert (run.speedup, run.speedup_ci_low, run.speedup_ci_high) == (1.5, 1.4, 1.6)


def test_partial_results_record_what_came_back_and_leave_the_rest_claimed(runs):
    bundle = bundle_export(chip_slug="cpu-interpreter")
    results = judge_bundle(bundle, judged_chip="cpu-interpreter", judge=fake_judge)
    results["results"] = results["results"][:1]
    report = results_import(results, chip_slug="cpu-interpreter")
    assert (report.recorded, report.missing) == ([runs["cpu"][0].pk], [run.pk for run in runs["cpu"][1:]])
    assert statuses(runs["cpu"][1:]) == [("running", bundle["bundle_id"])] * 2


def refused(results, chip="cpu-interpreter") -> list[str]:
    with pytest.raises(BundleRefused) as error:
        results_import(results, chip_slug=chip)
    return error.value.problems


def test_tampered_jobs_are_refused_and_nothing_is_recorded(runs):
    bundle = bundle_export(chip_slug="cpu-interpreter")
    results = judge_bundle(bundle, judged_chip="cpu-interpreter", judge=fake_judge)
    tampered = copy.deepcopy(results)
    tampered["bundle"]["jobs"][0]["job"]["source_code"] = "def cos(self): return self.cos()\n"
    assert refused(tampered) == [
        "the job bundle's signature does not match: it was changed, or was not issued by this server"
    ]
    resigned = copy.deepcopy(results)
    resigned["bundle"]["signature"] = "0" * 64
    assert refused(resigned) == [
        "the job bundle's signature does not match: it was changed, or was not issued by this server"
    ]
    assert statuses(runs["cpu"]) == [("running", bundle["bundle_id"])] * 3


def test_results_for_runs_outside_the_bundle_or_with_another_digest_are_refused(runs):
    bundle = bundle_export(chip_slug="cpu-interpreter", limit=2)
    results = judge_bundle(bundle, judged_chip="cpu-interpreter", judge=fake_judge)
    foreign = copy.deepcopy(results)
    foreign["results"].append(dict(foreign["results"][0], run_id=runs["cpu"][2].pk))
    assert refused(foreign) == [f"result for run {runs['cpu'][2].pk}: that run was not in bundle {bundle['bundle_id']}"]
    wrong_digest = copy.deepcopy(results)
    wrong_digest["results"][1]["job_digest"] = wrong_digest["results"][0]["job_digest"]
    assert refused(wrong_digest) == [f"result for run {runs['cpu'][1].pk}: job digest does not match the bundle's job"]
    bad_verdict = copy.deepcopy(results)
    bad_verdict["results"][0]["result"]["status"] = "queued"
    assert refused(bad_verdict) == [f"result for run {runs['cpu'][0].pk}: unknown verdict 'queued'"]
    assert statuses(runs["cpu"][:2]) == [("running", bundle["bundle_id"])] * 2
    assert statuses(runs["cpu"][2:]) == [("queued", "")]


def test_results_from_another_chip_are_refused(runs):
    bundle = bundle_export(chip_slug="cpu-interpreter")
    results = judge_bundle(bundle, judged_chip="nvidia-h200", judge=fake_judge)
    problems = refused(results)
    assert problems[0] == "the results were judged on chip 'nvidia-h200', not 'cpu-interpreter'"
    assert problems[1:] == [
        f"result for run {run.pk}: judged on chip 'nvidia-h200', not 'cpu-interpreter'" for run in runs["cpu"]
    ]
    honest = judge_bundle(bundle, judged_chip="cpu-interpreter", judge=fake_judge)
    assert refused(honest, chip="nvidia-h200") == ["the bundle is for chip 'cpu-interpreter', not 'nvidia-h200'"]
    assert statuses(runs["cpu"]) == [("running", bundle["bundle_id"])] * 3


def test_a_bundle_signed_with_another_servers_key_is_refused(runs, settings):
    bundle = bundle_export(chip_slug="cpu-interpreter")
    results = judge_bundle(bundle, judged_chip="cpu-interpreter", judge=fake_judge)
    settings.SECRET_KEY = "another-server"
    assert refused(results) == [
        "the job bundle's signature does not match: it was changed, or was not issued by this server"
    ]


def test_a_judge_crash_becomes_an_error_verdict_not_a_lost_bundle(runs):
    def broken(job):
        raise RuntimeError("sandbox could not start")

    bundle = bundle_export(chip_slug="cpu-interpreter", limit=1)
    results = judge_bundle(bundle, judged_chip="cpu-interpreter", judge=broken)
    assert results["results"][0]["result"]["status"] == "error"
    assert "sandbox could not start" in results["results"][0]["result"]["reason"]


def test_stale_run_sweeper_leaves_bundle_runs_alone(runs):
    bundle = bundle_export(chip_slug="cpu-interpreter")
    assert runs_requeue_stale() == {"requeued": 0, "gave_up": 0, "resent": 0}
    assert statuses(runs["cpu"]) == [("running", bundle["bundle_id"])] * 3


def test_management_commands_round_trip(runs, tmp_path):
    bundle_path, results_path = tmp_path / "bundle.json", tmp_path / "results.json"
    call_command("export_jobs", "--chip", "cpu-interpreter", "--out", str(bundle_path), stdout=io.StringIO())
    bundle = json.loads(bundle_path.read_text())
    results_path.write_text(json.dumps(judge_bundle(bundle, judged_chip="cpu-interpreter", judge=fake_judge)))
    with open(tmp_path / "out.txt", "w") as out:
        call_command("import_results", str(results_path), "--chip", "cpu-interpreter", stdout=out)
    report = json.loads((tmp_path / "out.txt").read_text())
    assert report["recorded"] == [run.pk for run in runs["cpu"]]
    with pytest.raises(CommandError, match="the bundle is for chip 'cpu-interpreter', not 'nvidia-h200'"):
        call_command("import_results", str(results_path), "--chip", "nvidia-h200")
    with pytest.raises(CommandError, match="unknown chip 'tpu'"):
        call_command("export_jobs", "--chip", "tpu", "--out", str(bundle_path))


def test_the_judging_side_imports_no_django():
    code = (
        "import sys, evaluation.judge.bundle as b; b.judge_bundle; "
        "assert not [m for m in sys.modules if m.startswith('django')], 'django imported'"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert (result.returncode, result.stderr) == (0, "")

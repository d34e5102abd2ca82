"""The boards' best-verdict summary: kept by every write that changes what counts, equal to a rebuild from the
runs at every step of a realistic history, and checked by ``manage.py rebuild_best_verdicts --check``."""

from __future__ import annotations

import dataclasses
import importlib
import json
import re

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from evaluation.bundles import bundle_export, results_import
from evaluation.judge.bundle import judge_bundle
from evaluation.judge.job import JudgeJob, JudgeResult
from evaluation.judge.version import JUDGE_VERSION
from evaluation.models import Run, RunStatus
from evaluation.services import chip_ensure, run_claim, run_record_result, run_rerun, runs_requeue_stale
from leaderboard import best_verdicts, catalog_loader, selectors
from leaderboard.metrics import FAST_P_THRESHOLDS
from leaderboard.models import (
    BestVerdict,
    BoardTotal,
    Kernel,
    Operator,
    OperatorSet,
    RooflinePoint,
    Submission,
    Visibility,
)
from leaderboard.services import KernelUpload, method_get_or_create, submission_create

fill_migration = importlib.import_module("leaderboard.migrations.0004_fill_best_verdicts")

CODE = {
    "aten::cos": "def cos(self):\n    return self\n\ndef cos_out(self, *, out):\n    return out\n",
    "aten::sin": "def sin(self):\n    return self\n\ndef sin_out(self, *, out):\n    return out\n",
    "aten::neg": "def neg(self):\n    return self\n\ndef neg_out(self, *, out):\n    return out\n",
}
BOARDS = (
    "/?chip=nvidia-h200&set=kgb-ms",
    "/?chip=cpu-interpreter&set=kgb-ms&format=json",
    "/boards/multi-chip/?set=kgb-ms&format=json",
    "/boards/cost/?chip=nvidia-h200&set=kgb-ms&format=csv",
    "/boards/matched/?chip=nvidia-h200&set=kgb-ms&format=json",
    "/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&operators=1",
    "/operators/aten::cos/?chip=nvidia-h200",
)


@pytest.fixture(autouse=True)
def fresh_board_memo():
    selectors.clear_board_memo()


@pytest.fixture
def chips(catalog, cpu_chip):
    return {"cpu": cpu_chip, "h200": chip_ensure(slug="nvidia-h200"), "a100": chip_ensure(slug="nvidia-a100")}


@pytest.fixture
def staff_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", password=None))
    return client


def upload(owner, method, ops, chips, *, target=None, visibility=Visibility.PUBLIC, rounds=1, tokens=1000):
    uploads = [
        KernelUpload(
            operator_id=op,
            source_code=CODE[op] + f"# round {r}\n",
            round=r,
            total_tokens=tokens * r,
            solve_seconds=60.0 * r,
        )
        for op in ops
        for r in range(1, rounds + 1)
    ]
    return submission_create(
        owner=owner, method=method, uploads=uploads, chips=chips, target_chip=target, visibility=visibility
    )


def judge(run: Run, status: str, speedup: float | None = None, **result) -> Run:
    """What a worker does with a verdict: claim the run, then record the judge's result under that claim."""
    claimed, lease = run_claim(run_id=run.pk, worker="celery@test", pid=None)
    verdict = JudgeResult(status=status, reason=status, cases_total=2, cases_passed=2, speedup=speedup, **result)
    verdict.case_results = [
        {"case_id": "c0", "passed": True, "candidate_ms": 1.0, "roofline_floor_ms": 0.25},
        {"case_id": "c1", "passed": True, "candidate_ms": 2.0, "roofline_floor_ms": 1.0},
    ]
    assert run_record_result(run=claimed, lease=lease, result=verdict)
    return Run.objects.get(pk=run.pk)


def runs_of(submission: Submission, op: str | None = None, chip=None):
    runs = Run.objects.filter(kernel__submission=submission).order_by("pk")
    if op:
        runs = runs.filter(kernel__operator__operator_id=op)
    return runs.filter(chip=chip) if chip else runs


def consistent() -> None:
    found = best_verdicts.differences()
    assert not found, found.summary()


def boards(client) -> dict[str, bytes]:
    """The boards as shown (the logout form's CSRF token, new on every page, left out)."""
    shown = {}
    for url in BOARDS:
        selectors.clear_board_memo()
        response = client.get(url)
        assert response.status_code == 200, url
        shown[url] = re.sub(rb'name="csrfmiddlewaretoken" value="[^"]*"', b"", response.content)
    return shown


def admin_change(client, admin_name: str, obj, **changes) -> None:
    """Post the admin's change form of ``obj`` as shown, with ``changes``: the path a curator takes."""
    url = reverse(f"admin:{admin_name}_change", args=[obj.pk])
    page = client.get(url)
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields}
    for inline in page.context["inline_admin_formsets"]:
        formset = inline.formset
        data.update({f"{formset.prefix}-{key}": value for key, value in formset.management_form.initial.items()})
        for inline_form in formset.forms:
            data.update({inline_form.add_prefix(name): inline_form[name].value() for name in inline_form.fields})
    data.update(changes)
    posted = {key: ("on" if value is True else value) for key, value in data.items() if value not in (None, False)}
    response = client.post(url, posted, follow=True)  # following the redirect shows (and so clears) its message
    assert response.redirect_chain, response.context["adminform"].form.errors


def admin_delete(client, admin_name: str, pks: list[int]) -> None:
    response = client.post(
        reverse(f"admin:{admin_name}_changelist"),
        {"action": "delete_selected", "_selected_action": pks, "post": "yes"},
        follow=True,
    )
    assert response.redirect_chain


def fake_judge(job: JudgeJob) -> JudgeResult:
    return JudgeResult(status="passed" if "round 1" in job.source_code else "failed_runtime", reason="offline")


def test_maintained_rows_equal_a_rebuild_through_a_realistic_history(
    chips, user, other_user, staff_client, settings, monkeypatch, django_capture_on_commit_callbacks
):
    cpu, h200, a100 = chips["cpu"], chips["h200"], chips["a100"]
    agent = method_get_or_create(owner=user, scaffold="Agent", model="M1")
    passk = method_get_or_create(owner=other_user, scaffold="Pass@2", model="M2")
    with django_capture_on_commit_callbacks(execute=False):  # queued runs are judged below, not by a worker
        # Kernels written for the H200, judged there and tried on the A100 (ported there).
        for_h200 = upload(user, agent, ["aten::cos", "aten::sin", "aten::neg"], [h200, a100], target=h200)
        judge(runs_of(for_h200, "aten::cos", h200).get(), "passed", 1.2)
        judge(runs_of(for_h200, "aten::sin", h200).get(), "passed", 0.8, flagged=True)
        judge(runs_of(for_h200, "aten::neg", h200).get(), "failed_correctness")
        judge(runs_of(for_h200, "aten::cos", a100).get(), "passed", 0.9)
        judge(runs_of(for_h200, "aten::sin", a100).get(), "timeout")
        consistent()
        # Pass@2 for no chip in particular: two rounds per operator, one verdict of an older judge.
        rounds = upload(other_user, passk, ["aten::cos", "aten::sin"], [h200, cpu], rounds=2, tokens=500)
        for index, run in enumerate(runs_of(rounds, chip=h200)):
            judge(run, "passed" if index % 2 else "failed_compile", 1.5 + index, judge_version=JUDGE_VERSION - 1)
        consistent()
        # Private work by the same method: judged, never counted.
        private = upload(user, agent, ["aten::cos"], [h200], target=h200, visibility=Visibility.PRIVATE)
        judge(runs_of(private).get(), "passed", 9.0)
        consistent()
        # Re-judgements: a new run supersedes the one before it, a failing one too.
        judge(run_rerun(run=runs_of(for_h200, "aten::neg", h200).get()), "passed", 2.0)
        judge(run_rerun(run=runs_of(for_h200, "aten::cos", h200).get()), "failed_runtime")
        consistent()
        # The CPU interpreter's runs go out in an offline bundle and come back judged.
        bundle = bundle_export(chip_slug="cpu-interpreter")
        results = judge_bundle(json.loads(json.dumps(bundle)), judged_chip="cpu-interpreter", judge=fake_judge)
        assert results_import(json.loads(json.dumps(results)), chip_slug="cpu-interpreter").recorded
        consistent()
        # A re-run whose worker died too often is given up as an error: that is its verdict now.
        settings.KGB_MAX_RUN_ATTEMPTS = 1
        lost = run_rerun(run=runs_of(for_h200, "aten::sin", a100).get())
        run_claim(run_id=lost.pk, worker="celery@gone", pid=None)
        assert runs_requeue_stale()["gave_up"] == 1
        assert Run.objects.get(pk=lost.pk).status == RunStatus.ERROR
        consistent()

    before = BestVerdict.objects.count()
    shown = boards(staff_client)
    # Visibility flips, both ways, through the admin.
    admin_change(staff_client, "leaderboard_submission", for_h200, visibility=Visibility.PRIVATE)
    assert BestVerdict.objects.filter(method=agent).count() == 0
    consistent()
    admin_change(staff_client, "leaderboard_submission", for_h200, visibility=Visibility.PUBLIC)
    admin_change(staff_client, "leaderboard_method", passk, public=False)
    assert not BestVerdict.objects.filter(method=passk).exists()
    consistent()
    admin_change(staff_client, "leaderboard_method", passk, public=True)
    assert BestVerdict.objects.count() == before and boards(staff_client) == shown
    # The kernels' target chip edited: the A100 runs become native there.
    admin_change(staff_client, "leaderboard_submission", for_h200, target_chip="")
    assert BestVerdict.objects.filter(method=agent, chip=a100, native=True).exists()
    consistent()
    # A kernel's cost corrected.
    kernel = Kernel.objects.get(submission=rounds, operator__operator_id="aten::cos", round=1)
    admin_change(staff_client, "leaderboard_kernel", kernel, total_tokens=123456)
    consistent()

    # An operator's definition changes: the loader bumps its version, and its verdicts show as stale.
    def stale_on_h200() -> int:
        selectors.clear_board_memo()
        rows = staff_client.get("/?chip=nvidia-h200&set=kgb-ms").context["rows"]
        return sum(row.summaries["overall"].stale for row in rows)

    stale_before = stale_on_h200()
    records = dict(catalog_loader.all_operators())  # a copy: the registry caches its dict
    records["aten::neg"] = dataclasses.replace(records["aten::neg"], description="neg, revised")
    monkeypatch.setattr(catalog_loader, "all_operators", lambda: records)
    assert catalog_loader.catalog_load()["updated"] == 1
    assert stale_on_h200() > stale_before
    consistent()

    # A curated set gets members and loses one, through the admin: its board's totals follow.
    curated = OperatorSet.objects.create(slug="trig", title="Trigonometry")
    operators = list(Operator.objects.filter(operator_id__in=["aten::cos", "aten::sin"]).values_list("pk", flat=True))
    staff_client.post(
        reverse("admin:leaderboard_operator_changelist"),
        {"action": "add_to_set", "_selected_action": operators, "apply": "1", "operator_set": curated.pk},
    )
    assert BoardTotal.objects.filter(operator_set=curated).exists()
    consistent()
    admin_change(staff_client, "leaderboard_operatorset", curated, operators=operators[:1])
    consistent()
    admin_delete(staff_client, "leaderboard_operatorset", [curated.pk])
    consistent()

    # Deletions: runs, a submission, an account (its submissions go with it).
    admin_delete(staff_client, "evaluation_run", list(runs_of(rounds, "aten::sin").values_list("pk", flat=True)))
    consistent()
    admin_delete(staff_client, "leaderboard_submission", [private.pk])
    consistent()
    admin_delete(staff_client, "auth_user", [other_user.pk])
    assert not BestVerdict.objects.filter(method=passk).exists()
    consistent()

    # What the boards show now is what a rebuild gives.
    shown = boards(staff_client)
    rows = sorted(
        BestVerdict.objects.values_list(*["method_id", "operator_id", "chip_id", "native", *best_verdicts.ROW_FIELDS])
    )
    call_command("rebuild_best_verdicts", verbosity=0)
    assert (
        sorted(
            BestVerdict.objects.values_list(
                *["method_id", "operator_id", "chip_id", "native", *best_verdicts.ROW_FIELDS]
            )
        )
        == rows
    )
    assert boards(staff_client) == shown


def test_check_finds_writes_made_past_the_services_and_a_rebuild_repairs_them(chips, user, capsys):
    h200 = chips["h200"]
    method = method_get_or_create(owner=user, scaffold="Agent", model="M1")
    submission = upload(user, method, ["aten::cos", "aten::sin"], [h200])
    cos, sin = runs_of(submission, "aten::cos").get(), runs_of(submission, "aten::sin").get()
    judge(cos, "passed", 1.4)
    judge(sin, "failed_correctness")
    call_command("rebuild_best_verdicts", "--check")
    assert "match a rebuild (2 rows" in capsys.readouterr().out

    Run.objects.filter(pk=sin.pk).update(status=RunStatus.PASSED, speedup=3.0)  # an update no service made
    Run.objects.filter(pk=cos.pk).delete()
    with pytest.raises(CommandError) as failure:
        call_command("rebuild_best_verdicts", "--check")
    message = str(failure.value)
    # cos's group is gone from the runs (its point went with the run); sin's now passed, with a point to add,
    # and the method's totals on the H200 changed in the three sets holding both (MS, MC, ATen).
    assert "1 missing, 1 unexpected, 4 changed" in message
    assert f"missing ('point', {sin.pk})" in message and "solved: stored False, rebuilt True" in message

    call_command("rebuild_best_verdicts")
    call_command("rebuild_best_verdicts", "--check")
    row = BestVerdict.objects.get()
    assert (row.solved, row.speedup, row.attempts) == (True, 3.0, 1)
    assert list(RooflinePoint.objects.values_list("run_id", "speedup")) == [(sin.pk, 3.0)]


def test_the_data_migration_fills_the_summary_of_runs_judged_before_it(chips, user, other_user):
    h200, cpu = chips["h200"], chips["cpu"]
    ours = upload(user, method_get_or_create(owner=user, scaffold="A"), ["aten::cos", "aten::neg"], [h200, cpu])
    theirs = upload(other_user, method_get_or_create(owner=other_user, scaffold="B"), ["aten::cos"], [h200])
    verdicts = ["passed", "timeout", "passed", "rejected", "passed"]
    for run, status in zip([*runs_of(ours), *runs_of(theirs)], verdicts, strict=True):
        judge(run, status, 1.1)
    kept = sorted(BestVerdict.objects.values_list("method_id", "operator_id", "chip_id", *best_verdicts.ROW_FIELDS))
    points = sorted(RooflinePoint.objects.values_list("run_id", "fraction"))
    BestVerdict.objects.all().delete()
    RooflinePoint.objects.all().delete()
    from django.apps import apps

    fill_migration.fill(apps, None)
    assert (
        sorted(BestVerdict.objects.values_list("method_id", "operator_id", "chip_id", *best_verdicts.ROW_FIELDS))
        == kept
    )
    assert sorted(RooflinePoint.objects.values_list("run_id", "fraction")) == points
    assert len(kept) == 5 and points and all(fraction == pytest.approx(0.3535533) for _, fraction in points)


def test_a_group_row_follows_the_boards_rules():
    """Latest run per kernel; fastest passing kernel decides (ties: the earlier kernel); all kernels' costs."""

    def verdict(run_id, kernel_id, status, speedup=None, flagged=False, tokens=10):
        return best_verdicts.RunVerdict(run_id, kernel_id, 1, 2, 3, None, status, speedup, flagged, 1, 2, tokens, 1.5)

    runs = [
        verdict(1, 10, "passed", 3.0),  # superseded by run 4
        verdict(2, 11, "passed", None),
        verdict(3, 12, "passed", 1.2, flagged=True),
        verdict(4, 10, "failed_correctness"),
        verdict(5, 13, "passed", 1.2),
    ]
    row = best_verdicts.group_fields(runs)
    assert (row["attempts"], row["tokens"], row["solve_seconds"], row["runs"]) == (4, 40, 6.0, 5)
    # Kernel 13 (1.2, clean) decides over kernel 12 (also 1.2, flagged); kernel 11's unknown speedup counts as 0.
    assert (row["solved"], row["speedup"], row["flagged"]) == (True, 1.2, False)
    assert row["log_speedup"] == pytest.approx(0.1823215568)
    # Between clean passes of one speedup the earlier kernel wins the tie.
    tied = best_verdicts.group_fields([verdict(1, 10, "passed", 2.0, tokens=1), verdict(2, 11, "passed", 2.0)])
    assert tied["tokens"] == 11 and tied["link_run_id"] == 2 and (tied["speedup"], tied["flagged"]) == (2.0, False)
    # The set totals count clean speedups above the boards' fast_p thresholds.
    assert tuple(threshold for _, threshold in best_verdicts.FAST_FIELDS) == FAST_P_THRESHOLDS
    # The pass matrix links the fastest pass of every run; the operator page the best clean pass.
    assert (row["link_run_id"], row["link_passed"], row["standing_run_id"], row["standing_passed"]) == (
        1,
        True,
        1,
        True,
    )


def test_a_rerun_that_ends_as_error_leaves_the_kernels_verdict(chips, user, django_capture_on_commit_callbacks):
    """An error says our side failed: a re-judgement that errs neither unsolves a passed kernel nor solves a
    failed one; the kernel's next real verdict supersedes as usual."""
    h200 = chips["h200"]
    agent = method_get_or_create(owner=user, scaffold="Agent", model="M1")
    with django_capture_on_commit_callbacks(execute=False):  # judged below, not by a worker
        submission = upload(user, agent, ["aten::cos", "aten::neg"], [h200])
        cos, neg = runs_of(submission, "aten::cos", h200).get(), runs_of(submission, "aten::neg", h200).get()
        judge(cos, RunStatus.PASSED, 1.5)
        judge(neg, RunStatus.FAILED_CORRECTNESS)
        for run in (cos, neg):
            judge(run_rerun(run=run), RunStatus.ERROR)
    consistent()

    def rows():
        return {
            row.operator.operator_id: (row.solved, row.speedup, row.attempts)
            for row in BestVerdict.objects.filter(chip=h200, method=agent, native=True).select_related("operator")
        }

    assert rows() == {"aten::cos": (True, 1.5, 1), "aten::neg": (False, None, 1)}
    (row,) = selectors.leaderboard_rows(chip=h200, operator_set=OperatorSet.objects.get(slug="kgb-ms"))
    assert row.summaries["overall"].solved == 1
    with django_capture_on_commit_callbacks(execute=False):
        judge(run_rerun(run=cos), RunStatus.FAILED_RUNTIME)
    consistent()
    assert rows()["aten::cos"] == (False, None, 1)


def test_a_flagged_fastest_kernel_leaves_the_operator_solved_by_a_clean_pass(
    chips, user, django_capture_on_commit_callbacks
):
    """Solved when any kernel passed and was not flagged: a faster flagged kernel does not unsolve it, on the
    summary row nor on the board's figures; only flagged passes leave the row flagged (unsolved)."""
    h200 = chips["h200"]
    agent = method_get_or_create(owner=user, scaffold="Agent", model="M1")
    with django_capture_on_commit_callbacks(execute=False):  # judged below, not by a worker
        submission = upload(user, agent, ["aten::cos", "aten::neg"], [h200], rounds=2)
        for op in ("aten::cos", "aten::neg"):
            first, second = runs_of(submission, op, h200)
            judge(first, RunStatus.PASSED, 9.0, flagged=True)
            judge(second, RunStatus.PASSED if op == "aten::cos" else RunStatus.FAILED_CORRECTNESS, 1.5)
    consistent()
    rows = {
        row.operator.operator_id: (row.solved, row.speedup, row.flagged)
        for row in BestVerdict.objects.filter(chip=h200, method=agent, native=True).select_related("operator")
    }
    assert rows == {"aten::cos": (True, 1.5, False), "aten::neg": (True, 9.0, True)}
    (row,) = selectors.leaderboard_rows(chip=h200, operator_set=OperatorSet.objects.get(slug="kgb-ms"))
    summary = row.summaries["overall"]
    assert (summary.solved, summary.speedup_covered, summary.speedup_geomean) == (1, 1, pytest.approx(1.5))

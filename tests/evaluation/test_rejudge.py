"""Staff re-judging a set on a chip: which runs it supersedes, that its runs go through the ordinary queue and
fair claiming, the diff of what changed (page and reads), the command, the admin action, and the boards."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from evaluation import rejudges, services, tasks
from evaluation.judge.job import JudgeResult
from evaluation.judge.version import JUDGE_VERSION
from evaluation.models import RejudgeBatch, Run, RunStatus
from leaderboard import best_verdicts
from leaderboard.models import BestVerdict, Method, Operator, OperatorSet
from leaderboard.services import KernelUpload, method_get_or_create, submission_create

GOOD_COS = (Path(__file__).resolve().parent / "kernels" / "good" / "cos_plain.py").read_text()
COS = "def cos(self):\n    return self\n\ndef cos_out(self, *, out):\n    return out\n"
SIN = "def sin(self):\n    return self\n\ndef sin_out(self, *, out):\n    return out\n"


@pytest.fixture
def h200(db):
    return services.chip_ensure(slug="nvidia-h200")


@pytest.fixture
def small_set(catalog):
    operator_set = OperatorSet.objects.create(slug="trig", title="Trig")
    operator_set.operators.add(*Operator.objects.filter(operator_id__in=["aten::cos", "aten::sin"]))
    best_verdicts.sets_changed(set_ids=[operator_set.pk])
    return operator_set


@pytest.fixture
def submit(django_capture_on_commit_callbacks):
    """``submit(owner, chip, {"aten::cos": source}, scaffold=...)``: a public submission; its runs are queued
    (their tickets not sent); returns the runs, one per kernel."""

    def submit(owner, chip, kernels, scaffold="Agent"):
        method = method_get_or_create(owner=owner, scaffold=scaffold, model="M")
        with django_capture_on_commit_callbacks(execute=False):
            submission = submission_create(
                owner=owner,
                method=method,
                chips=[chip],
                uploads=[KernelUpload(operator_id=op, source_code=source) for op, source in kernels.items()],
            )
        return list(Run.objects.filter(kernel__submission=submission).order_by("kernel__operator__operator_id"))

    return submit


def judge_with(run: Run, result: JudgeResult, worker: str = "celery@test") -> Run:
    """Spend the run's ticket as a worker does (fair claiming picks what it judges) and record ``result``."""
    claim = services.run_claim_fairest(run_id=run.pk, worker=worker)
    assert claim is not None
    claimed, lease = claim
    assert services.run_record_result(run=claimed, lease=lease, result=result)
    claimed.refresh_from_db()
    return claimed


def old_verdict(status: str, speedup: float | None = None, version: int = JUDGE_VERSION - 1) -> JudgeResult:
    return JudgeResult(status=status, reason=f"judged by version {version}", speedup=speedup, judge_version=version)


def live_worker(chip, hostname="celery@test"):
    return services.worker_heartbeat(hostname=hostname, chip_slug=chip.slug)


def rejudge(operator_set, chip, *, stale_only=False):
    return services.rejudge_set(operator_set=operator_set, chip=chip, stale_only=stale_only)


def test_a_real_rejudgement_supersedes_an_old_verdict_and_the_diff_shows_the_flip(
    small_set, cpu_chip, user, submit, django_capture_on_commit_callbacks
):
    (run,) = submit(user, cpu_chip, {"aten::cos": GOOD_COS})
    # An older judge refused this honest kernel (as version 2's name scan did with harmless names).
    before = judge_with(run, old_verdict(RunStatus.REJECTED))
    live_worker(cpu_chip)
    with django_capture_on_commit_callbacks(execute=False) as tickets:
        batch = services.rejudge_set(operator_set=small_set, chip=cpu_chip, stale_only=True)
    assert len(tickets) == 1  # one ticket on the chip's queue, sent after commit like an upload's
    (new,) = batch.runs.all()
    assert new.rejudge_of_id == before.pk and new.kernel_id == before.kernel_id and new.status == RunStatus.QUEUED
    pending = rejudges.rejudge_diff(batch=batch)
    assert pending.counts == {"flipped": 0, "moved": 0, "pending": 1, "unknown": 0, "unchanged": 0}
    # The boards keep the old verdict until the new one lands.
    row = BestVerdict.objects.get(operator__operator_id="aten::cos", chip=cpu_chip)
    assert (row.solved, row.runs) == (False, 1)

    # The ticket, judged by the real task and the real judge on the CPU interpreter.
    assert tasks.judge_run.apply(args=[new.pk]).get() == RunStatus.PASSED
    new.refresh_from_db()
    assert new.judge_version == JUDGE_VERSION
    diff = rejudges.rejudge_diff(batch=batch)
    assert diff.counts == {"flipped": 1, "moved": 0, "pending": 0, "unknown": 0, "unchanged": 0}
    (change,) = diff.changes
    assert (change.before.status, change.after.status, change.operator_id) == ("rejected", "passed", "aten::cos")
    row = BestVerdict.objects.get(operator__operator_id="aten::cos", chip=cpu_chip)
    assert (row.solved, row.runs, row.judge_version) == (True, 2, JUDGE_VERSION)
    assert not best_verdicts.differences()
    call_command("rebuild_best_verdicts", "--check")  # raises when the summary and a rebuild differ


def test_the_latest_public_submission_per_method_and_operator_is_rejudged_and_stale_only_narrows(
    small_set, h200, user, other_user, submit
):
    first = submit(user, h200, {"aten::cos": COS, "aten::sin": SIN})
    for run in first:
        judge_with(run, old_verdict("passed", 1.0))
    latest = submit(user, h200, {"aten::cos": COS})  # supersedes the first upload's cos kernel, not its sin
    judge_with(latest[0], old_verdict("passed", 2.0, version=JUDGE_VERSION))  # judged by today's judge
    (theirs,) = submit(other_user, h200, {"aten::sin": SIN}, scaffold="Other")
    judge_with(theirs, old_verdict("failed_correctness"))
    private = submit(user, h200, {"aten::sin": SIN}, scaffold="Hidden")
    judge_with(private[0], old_verdict("passed", 1.0))
    Method.objects.filter(scaffold="Hidden").update(public=False)  # a private method's work is never re-judged
    live_worker(h200)

    everything, pending = services.rejudge_candidates(operator_set=small_set, chip=h200)
    assert pending == 0
    assert sorted(run.pk for run in everything) == sorted([first[1].pk, latest[0].pk, theirs.pk])
    stale, _ = services.rejudge_candidates(operator_set=small_set, chip=h200, stale_only=True)
    assert sorted(run.pk for run in stale) == sorted([first[1].pk, theirs.pk])

    # A kernel already queued there again is left out and counted, not queued twice.
    services.run_rerun(run=Run.objects.get(pk=theirs.pk))
    batch = rejudge(small_set, h200, stale_only=True)
    assert [run.rejudge_of_id for run in batch.runs.all()] == [first[1].pk]
    assert batch.already_pending == 1


def test_rejudged_runs_are_claimed_fairly_beside_other_owners_uploads(small_set, h200, user, other_user, submit):
    for run in submit(user, h200, {"aten::cos": COS, "aten::sin": SIN}):
        judge_with(run, old_verdict("passed", 1.0))
    live_worker(h200)
    batch = rejudge(small_set, h200)
    assert batch.runs.count() == 2
    (newcomer,) = submit(other_user, h200, {"aten::cos": COS}, scaffold="Other")
    # The re-judgement's tickets were sent first; the other owner's upload is still judged first, then the
    # re-judgement's runs oldest first, each ticket spent on whatever fair claiming chooses.
    tickets = list(batch.runs.order_by("pk")) + [newcomer]
    order = [judge_with(ticket, old_verdict("passed", 1.0, JUDGE_VERSION)).pk for ticket in tickets]
    assert order == [newcomer.pk] + [run.pk for run in batch.runs.order_by("pk")]


def test_the_diff_puts_flips_first_and_tells_moved_speedups_from_noise(small_set, h200, user, other_user, submit):
    cos, sin = submit(user, h200, {"aten::cos": COS, "aten::sin": SIN})
    (other_cos,) = submit(other_user, h200, {"aten::cos": COS}, scaffold="Other")
    (other_sin,) = submit(other_user, h200, {"aten::sin": SIN}, scaffold="Other")
    for run, speedup in ((cos, 1.0), (sin, 1.0), (other_cos, 2.0), (other_sin, 1.0)):
        judge_with(run, old_verdict("passed", speedup))
    live_worker(h200)
    batch = rejudge(small_set, h200)
    new = {run.rejudge_of_id: run for run in batch.runs.all()}
    judge_with(new[cos.pk], old_verdict("passed", 1.05, JUDGE_VERSION))  # noise: unchanged
    judge_with(new[sin.pk], old_verdict("failed_correctness", None, JUDGE_VERSION))  # flipped
    judge_with(new[other_cos.pk], old_verdict("passed", 1.2, JUDGE_VERSION))  # moved 2.0 -> 1.2
    diff = rejudges.rejudge_diff(batch=batch)
    assert diff.counts == {"flipped": 1, "moved": 1, "pending": 1, "unknown": 0, "unchanged": 1}
    assert [change.kind for change in diff.changes] == ["flipped", "moved", "pending", "unchanged"]
    assert diff.changes[1].before.speedup == 2.0 and diff.changes[1].after.speedup == 1.2
    assert not best_verdicts.differences()
    # A superseded run deleted since (through the admin, which keeps the boards): nothing to compare with.
    Run.objects.filter(pk=cos.pk).delete()
    best_verdicts.runs_changed(run_ids=[new[cos.pk].pk])
    assert rejudges.rejudge_diff(batch=batch).counts["unknown"] == 1


def test_a_moved_protocol_speedup_is_a_move_and_one_measured_on_one_side_only_is_not(
    small_set, h200, user, other_user, submit
):
    cos, sin = submit(user, h200, {"aten::cos": COS, "aten::sin": SIN})
    (other_cos,) = submit(other_user, h200, {"aten::cos": COS}, scaffold="Other")

    def judge_each(runs, result_for):
        """Spend each run's ticket; fair claiming decides which run a ticket judges, so each claimed run is
        given its own result."""
        for run in runs:
            claimed, lease = services.run_claim_fairest(run_id=run.pk, worker="celery@test")
            assert services.run_record_result(run=claimed, lease=lease, result=result_for(claimed))

    # The device-time speedup holds still on all three; the protocol's moves on cos only.
    protocol_before = {cos.pk: 1.0, sin.pk: None, other_cos.pk: 0.5}
    judge_each(
        [cos, sin, other_cos],
        lambda run: dataclasses.replace(old_verdict("passed", 1.0), protocol_speedup=protocol_before[run.pk]),
    )
    live_worker(h200)
    batch = rejudge(small_set, h200)
    # cos moved 1.0 -> 1.5; sin's is measured for the first time; other_cos's judge did not measure one.
    protocol_now = {cos.pk: 1.5, sin.pk: 0.2, other_cos.pk: None}
    judge_each(
        batch.runs.all(),
        lambda run: dataclasses.replace(
            old_verdict("passed", 1.02, JUDGE_VERSION), protocol_speedup=protocol_now[run.rejudge_of_id]
        ),
    )

    diff = rejudges.rejudge_diff(batch=batch)

    assert diff.counts == {"flipped": 0, "moved": 1, "pending": 0, "unknown": 0, "unchanged": 2}
    (moved,) = [change for change in diff.changes if change.kind == "moved"]
    assert moved.before.protocol_speedup == 1.0 and moved.after.protocol_speedup == 1.5
    assert moved.before.run_id == cos.pk


@pytest.mark.parametrize(
    ("before", "after", "moved"), [(1.0, 1.09, False), (1.0, 1.11, True), (2.0, 1.0, True), (None, 1.0, True)]
)
def test_speedup_moved(before, after, moved):
    assert rejudges.speedup_moved(before, after) is moved


def test_refusals_say_why(small_set, h200, user, submit):
    with pytest.raises(services.RejudgeRefused, match="no operator set 'nope'"):
        services.rejudge_resolve(set_slug="nope", chip_slug="nvidia-h200")
    with pytest.raises(services.RejudgeRefused, match="no chip 'tpu'"):
        services.rejudge_resolve(set_slug="trig", chip_slug="tpu")
    with pytest.raises(services.RejudgeRefused, match="no live worker serves nvidia-h200"):
        rejudge(small_set, h200)
    live_worker(h200)
    with pytest.raises(services.RejudgeRefused, match="nothing to re-judge"):
        rejudge(small_set, h200)
    (run,) = submit(user, h200, {"aten::cos": COS})
    judge_with(run, old_verdict("passed", 1.0, JUDGE_VERSION))
    with pytest.raises(services.RejudgeRefused, match="no stale verdicts"):
        rejudge(small_set, h200, stale_only=True)
    assert RejudgeBatch.objects.count() == 0


def test_the_command_queues_and_names_the_diff_and_refuses_bad_input(small_set, h200, user, submit, capsys):
    (run,) = submit(user, h200, {"aten::cos": COS})
    judge_with(run, old_verdict("passed", 1.0))
    with pytest.raises(CommandError, match="no live worker"):
        call_command("rejudge", "--set", "trig", "--chip", "nvidia-h200")
    with pytest.raises(CommandError, match="no operator set 'missing'"):
        call_command("rejudge", "--set", "missing", "--chip", "nvidia-h200")
    with pytest.raises(CommandError, match="no chip 'missing'"):
        call_command("rejudge", "--set", "trig", "--chip", "missing")
    live_worker(h200)
    call_command("rejudge", "--set", "trig", "--chip", "nvidia-h200", "--stale-only")
    batch = RejudgeBatch.objects.get()
    assert f"re-judgement {batch.pk}: 1 runs of trig queued on nvidia-h200" in capsys.readouterr().out
    assert batch.stale_only and batch.runs.get().rejudge_of_id == run.pk
    with pytest.raises(CommandError, match="nothing to re-judge.*1 kernels already have a run queued"):
        call_command("rejudge", "--set", "trig", "--chip", "nvidia-h200")


def test_the_command_can_queue_for_offline_bundles_without_a_worker(small_set, h200, user, submit):
    (run,) = submit(user, h200, {"aten::cos": COS})
    judge_with(run, old_verdict("passed", 1.0))
    call_command("rejudge", "--set", "trig", "--chip", "nvidia-h200", "--without-worker")
    assert RejudgeBatch.objects.get().runs.count() == 1


def test_the_diff_page_is_for_staff_only_and_escapes_what_users_typed(
    small_set, h200, user, submit, client, staff_user
):
    (run,) = submit(user, h200, {"aten::cos": COS}, scaffold="<script>alert(1)</script>")
    judge_with(run, old_verdict("passed", 1.5))
    live_worker(h200)
    batch = rejudge(small_set, h200)
    judge_with(batch.runs.get(), JudgeResult(status="failed_correctness", reason="<b>wrong</b> at index 3"))
    url = reverse("leaderboard:rejudge", args=[batch.pk])

    response = client.get(url)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    client.force_login(user)
    assert client.get(url).status_code == 403
    assert client.get(reverse("leaderboard:rejudges")).status_code == 403
    assert (
        client.post(reverse("leaderboard:rejudges"), {"operator_set": "trig", "chip": "nvidia-h200"}).status_code == 403
    )

    client.force_login(staff_user)
    page = client.get(url).content.decode()
    assert '<strong data-count="flipped">1</strong>' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "&lt;b&gt;wrong&lt;/b&gt; at index 3" in page
    assert "1.50" in page and "passed" in page and "failed_correctness" in page
    assert client.get(reverse("leaderboard:rejudge", args=[batch.pk + 1000])).status_code == 404
    # The new run's page names the run it re-judges.
    run_page = client.get(reverse("leaderboard:run", args=[batch.runs.get().pk])).content.decode()
    assert f'href="{reverse("leaderboard:run", args=[run.pk])}"' in run_page and url in run_page


def test_the_staff_page_queues_a_rejudgement_and_shows_refusals(small_set, h200, user, submit, client, staff_user):
    client.force_login(staff_user)
    listing = reverse("leaderboard:rejudges")
    assert client.get(listing).status_code == 200
    refused = client.post(listing, {"operator_set": "trig", "chip": "nvidia-h200"})
    assert refused.status_code == 400 and "no live worker serves nvidia-h200" in refused.content.decode()
    unknown = client.post(listing, {"operator_set": "<nope>", "chip": "nvidia-h200"})
    assert unknown.status_code == 400 and "Select a valid choice" in unknown.content.decode()
    (run,) = submit(user, h200, {"aten::cos": COS})
    judge_with(run, old_verdict("passed", 1.0))
    live_worker(h200)
    queued = client.post(listing, {"operator_set": "trig", "chip": "nvidia-h200", "stale_only": "on"})
    batch = RejudgeBatch.objects.get()
    assert queued.status_code == 302 and queued["Location"] == reverse("leaderboard:rejudge", args=[batch.pk])
    assert batch.requested_by == staff_user and batch.runs.count() == 1
    assert f"#{batch.pk}" in client.get(listing).content.decode()


def test_the_admin_action_rejudges_selected_sets(small_set, h200, user, submit, client, django_user_model):
    admin_user = django_user_model.objects.create_superuser("root", password="root-pass-123")
    client.force_login(admin_user)
    (run,) = submit(user, h200, {"aten::cos": COS})
    judge_with(run, old_verdict("passed", 1.0))
    live_worker(h200)
    changelist = reverse("admin:leaderboard_operatorset_changelist")
    form = client.post(changelist, {"action": "rejudge_on_chip", "_selected_action": [small_set.pk]})
    assert form.status_code == 200 and "stale_only" in form.content.decode()
    done = client.post(
        changelist,
        {"action": "rejudge_on_chip", "_selected_action": [small_set.pk], "apply": "1", "chip": h200.pk},
        follow=True,
    )
    batch = RejudgeBatch.objects.get()
    assert reverse("leaderboard:rejudge", args=[batch.pk]) in done.content.decode()
    assert batch.runs.get().rejudge_of_id == run.pk
    # A set with nothing to re-judge gets a warning, not an error page.
    again = client.post(
        changelist,
        {"action": "rejudge_on_chip", "_selected_action": [small_set.pk], "apply": "1", "chip": h200.pk},
        follow=True,
    )
    assert again.status_code == 200 and "nothing to re-judge" in again.content.decode()

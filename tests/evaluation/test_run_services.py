"""The run state machine, claiming and recording: exactly one verdict per run, whatever the delivery."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation import services
from evaluation.clock import database_now
from evaluation.judge.job import JudgeResult
from evaluation.models import Run, RunStatus, Worker
from leaderboard.services import KernelUpload, method_get_or_create, submission_create

GOOD = "def cos(self):\n    return self\n\ndef cos_out(self, *, out):\n    return out\n"


@pytest.fixture
def run(catalog, cpu_chip, user, django_capture_on_commit_callbacks):
    method = method_get_or_create(owner=user, scaffold="Agent", model="M")
    with django_capture_on_commit_callbacks(execute=False):
        submission = submission_create(
            owner=user,
            method=method,
            chips=[cpu_chip],
            uploads=[KernelUpload(operator_id="aten::cos", source_code=GOOD)],
        )
    return Run.objects.get(kernel__submission=submission)


def test_finished_runs_never_move_again(run):
    run, lease = services.run_claim(run_id=run.pk, worker="w1")
    services.run_record_result(run=run, lease=lease, result=JudgeResult(status="passed", reason="ok"))
    run.refresh_from_db()
    for target in (RunStatus.RUNNING, RunStatus.QUEUED, RunStatus.FAILED_RUNTIME):
        with pytest.raises(services.IllegalRunTransition):
            services.run_transition(run=run, to_status=target)
    run.refresh_from_db()
    assert run.status == RunStatus.PASSED


def test_queued_run_cannot_skip_running(run):
    with pytest.raises(services.IllegalRunTransition, match="from queued to passed"):
        services.run_transition(run=run, to_status=RunStatus.PASSED)
    assert Run.objects.get(pk=run.pk).status == RunStatus.QUEUED


def test_a_message_delivered_twice_is_judged_once(run):
    first = services.run_claim(run_id=run.pk, worker="w1", pid=None)
    second = services.run_claim(run_id=run.pk, worker="w2", pid=None)
    assert first is not None and second is None
    claimed, lease = first
    assert claimed.status == RunStatus.RUNNING and claimed.attempts == 1 and claimed.worker == "w1"


def test_result_of_a_superseded_claim_is_not_recorded(run, django_capture_on_commit_callbacks):
    claimed, old_lease = services.run_claim(run_id=run.pk, worker="dead-worker")
    Worker.objects.create(
        hostname="dead-worker", chip=claimed.chip, last_heartbeat_at=timezone.now() - timedelta(minutes=10)
    )
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        counts = services.runs_requeue_stale()
    assert counts == {"requeued": 1, "gave_up": 0, "resent": 0}
    assert len(callbacks) == 1  # re-sent to the chip's queue after commit
    reclaimed, new_lease = services.run_claim(run_id=run.pk, worker="live-worker")
    assert reclaimed.attempts == 2

    late = services.run_record_result(
        run=claimed, lease=old_lease, result=JudgeResult(status="failed_runtime", reason="late")
    )
    assert late is False
    assert (
        services.run_record_result(run=reclaimed, lease=new_lease, result=JudgeResult(status="passed", reason="ok"))
        is True
    )
    final = Run.objects.get(pk=run.pk)
    assert (final.status, final.reason, final.attempts, final.worker) == ("passed", "ok", 2, "live-worker")


def test_requeue_gives_up_after_the_attempt_bound(run, settings):
    settings.KGB_MAX_RUN_ATTEMPTS = 1
    services.run_claim(run_id=run.pk, worker="gone")
    counts = services.runs_requeue_stale()  # "gone" never heartbeated at all
    assert counts == {"requeued": 0, "gave_up": 1, "resent": 0}
    final = Run.objects.get(pk=run.pk)
    assert final.status == RunStatus.ERROR
    assert "gave up after 1 attempts" in final.reason


def test_a_retryable_judge_error_goes_back_to_the_queue_until_the_attempts_are_used(
    run, settings, django_capture_on_commit_callbacks
):
    # A judge error that says nothing about the kernel (the GPU's memory full of other judgements') is not a
    # result: the run is queued again, and only once its claims are used up is the error recorded.
    settings.KGB_MAX_RUN_ATTEMPTS = 2
    claimed, lease = services.run_claim(run_id=run.pk, worker="w1")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert services.run_retry_later(run=claimed, lease=lease, reason="the GPU was full") == "requeued"
    assert len(callbacks) == 1  # re-sent to the chip's queue after commit
    queued = Run.objects.get(pk=run.pk)
    assert (queued.status, queued.lease, queued.attempts) == (RunStatus.QUEUED, "", 1)
    assert "re-queued after a judge error: the GPU was full" in queued.reason
    # The first claim is gone: retrying or recording under it does nothing.
    assert services.run_retry_later(run=claimed, lease=lease, reason="again") == "stale"
    second, second_lease = services.run_claim(run_id=run.pk, worker="w2")
    assert second.attempts == 2
    assert services.run_retry_later(run=second, lease=second_lease, reason="full again") == "exhausted"
    assert (
        services.run_record_result(
            run=second, lease=second_lease, result=JudgeResult(status="error", reason="full again", retryable=True)
        )
        is True
    )
    assert Run.objects.get(pk=run.pk).status == RunStatus.ERROR


def test_runs_of_a_live_worker_are_left_alone(run):
    claimed, _ = services.run_claim(run_id=run.pk, worker="alive")
    services.worker_heartbeat(hostname="alive", chip_slug="cpu-interpreter")
    assert services.runs_requeue_stale() == {"requeued": 0, "gave_up": 0, "resent": 0}
    assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING


def test_a_worker_restarted_under_its_name_takes_back_its_predecessors_runs(run, django_capture_on_commit_callbacks):
    # A supervisor restarts a killed worker under the same name at once: the name heartbeats again before
    # it could go stale, so only the new process can tell that the old claim is dead.
    claimed, old_lease = services.run_claim(run_id=run.pk, worker="gpu1@host")
    services.worker_heartbeat(hostname="gpu1@host", chip_slug="cpu-interpreter")
    assert services.runs_requeue_stale() == {"requeued": 0, "gave_up": 0, "resent": 0}
    born = timezone.now()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        counts = services.runs_reclaim_from_earlier_incarnation(hostname="gpu1@host", started_before=born)
    assert counts == {"requeued": 1, "gave_up": 0}
    assert len(callbacks) == 1  # back on the chip's queue once committed
    queued = Run.objects.get(pk=run.pk)
    assert (queued.status, queued.lease, queued.attempts) == (RunStatus.QUEUED, "", 1)
    assert "restarted mid-run" in queued.reason
    # What the new process claims itself is its own, not an orphan; another name's runs are not touched.
    mine, _ = services.run_claim(run_id=run.pk, worker="gpu1@host")
    assert services.runs_reclaim_from_earlier_incarnation(hostname="gpu1@host", started_before=born) == {
        "requeued": 0,
        "gave_up": 0,
    }
    assert services.runs_reclaim_from_earlier_incarnation(hostname="gpu0@host", started_before=timezone.now()) == {
        "requeued": 0,
        "gave_up": 0,
    }
    assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING
    assert (
        services.run_record_result(run=claimed, lease=old_lease, result=JudgeResult(status="passed", reason="late"))
        is False
    )


def test_a_recorded_verdict_carries_the_judge_version_that_made_it(run):
    from evaluation.judge.version import JUDGE_VERSION

    claimed, lease = services.run_claim(run_id=run.pk, worker="w1")
    assert Run.objects.get(pk=run.pk).judge_version is None  # not judged yet
    services.run_record_result(run=claimed, lease=lease, result=JudgeResult(status="passed", reason="ok"))
    final = Run.objects.get(pk=run.pk)
    assert (final.judge_version, final.is_stale) == (JUDGE_VERSION, False)
    # A result written before results carried a version (an old offline bundle) was made by version 1.
    assert JudgeResult.from_json({"status": "passed", "reason": "ok"}).judge_version == 1


def test_cpu_interpreter_speedup_is_recorded_as_unknown(run):
    claimed, lease = services.run_claim(run_id=run.pk, worker="w1")
    services.run_record_result(
        run=claimed, lease=lease, result=JudgeResult(status="passed", reason="ok", speedup=3.0, speedup_ci95=(2.0, 4.0))
    )
    final = Run.objects.get(pk=run.pk)
    assert (final.speedup, final.speedup_ci_low, final.speedup_ci_high) == (None, None, None)


def test_job_for_the_cpu_interpreter_checks_the_smoke_tier_without_timing(run):
    job = services.run_build_job(run=Run.objects.select_related("chip", "kernel__operator").get(pk=run.pk))
    assert (job.operator_id, job.chip_slug, job.device_type, job.tiers, job.measure_timing) == (
        "aten::cos",
        "cpu-interpreter",
        "cpu",
        ("smoke",),
        False,
    )
    assert job.source_code == GOOD


def test_a_transient_database_failure_is_retried_not_fatal(monkeypatch):
    from django.db import OperationalError

    from evaluation import tasks

    monkeypatch.setattr(tasks.time, "sleep", lambda seconds: None)
    monkeypatch.setattr(tasks, "close_old_connections", lambda: None)
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("database is locked")
        return "done"

    assert tasks.with_database_retries(flaky) == "done" and len(calls) == 3

    def always_locked():
        raise OperationalError("database is locked")

    with pytest.raises(OperationalError, match="database is locked"):
        tasks.with_database_retries(always_locked, attempts=2)


@pytest.fixture
def skewed_clock(monkeypatch):
    """This process's clock set ``offset`` away from the real one, as a worker host whose clock is off sees
    it: Django reads the time through ``timezone.now``; the database keeps its own clock."""
    real_now = timezone.now

    def skew(offset: timedelta) -> None:
        monkeypatch.setattr(timezone, "now", lambda: real_now() + offset)

    yield skew
    monkeypatch.setattr(timezone, "now", real_now)


@pytest.mark.parametrize("offset", [timedelta(minutes=-30), timedelta(minutes=30)], ids=["behind", "ahead"])
def test_a_worker_whose_clock_is_off_is_still_alive_to_the_others(run, skewed_clock, offset):
    # The worker claims and heartbeats on a host whose clock is half an hour off; the re-queuer runs on a
    # host with the right time (and then the other way round). Beats and claims carry the database's time,
    # so neither judges the live worker stale or its run overdue, and the site shows the chip served.
    from leaderboard.progress import chip_has_live_worker

    skewed_clock(offset)
    claimed, lease = services.run_claim(run_id=run.pk, worker="skewed")
    services.worker_heartbeat(hostname="skewed", chip_slug="cpu-interpreter")
    skewed_clock(timedelta(0))
    assert services.runs_requeue_stale() == {"requeued": 0, "gave_up": 0, "resent": 0}
    assert chip_has_live_worker(chip=claimed.chip)
    skewed_clock(-offset)  # the re-queuer's host is the one that is off
    assert services.runs_requeue_stale() == {"requeued": 0, "gave_up": 0, "resent": 0}
    assert chip_has_live_worker(chip=claimed.chip)
    assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING
    assert services.run_record_result(run=claimed, lease=lease, result=JudgeResult(status="passed", reason="ok"))


def test_a_silent_worker_is_stale_by_the_database_clock_whatever_the_hosts_say(run, skewed_clock, settings):
    # The other side of the same rule: a worker that really stopped beating is re-queued even when the
    # re-queuer's host clock is far behind (it would otherwise think the beat recent).
    services.run_claim(run_id=run.pk, worker="gone")
    services.worker_heartbeat(hostname="gone", chip_slug="cpu-interpreter")
    Worker.objects.filter(hostname="gone").update(
        last_heartbeat_at=database_now() - timedelta(seconds=settings.KGB_WORKER_STALE_AFTER_S + 5)
    )
    skewed_clock(timedelta(hours=-1))
    assert services.runs_requeue_stale()["requeued"] == 1


def test_a_worker_stops_taking_runs_after_its_judge_fails_a_streak_of_times(run, settings):
    # Our side's errors in a row, on different runs, count against the worker; a verdict (any) clears them;
    # transient errors (JudgeResult.retryable) are not passed in. The streak's last error stops the worker,
    # once, and says why.
    from leaderboard.progress import chip_has_live_worker

    settings.KGB_WORKER_ERROR_STREAK = 3
    services.worker_heartbeat(hostname="w1", chip_slug="cpu-interpreter")

    def count(run_id, reason="sandbox failed to start"):
        return services.worker_count_judgement(hostname="w1", run_id=run_id, error_reason=reason)

    assert [count(1), count(2)] == [False, False]
    assert count(3, reason=None) is False  # a verdict: the streak starts again
    assert Worker.objects.get(hostname="w1").consecutive_errors == 0
    assert chip_has_live_worker(chip=run.chip)
    outcomes = [count(run_id, f"sandbox failed to start ({run_id})") for run_id in (4, 5, 6, 7)]
    assert outcomes == [False, False, True, False]  # stopped at the third; later errors do not stop it again
    worker = Worker.objects.get(hostname="w1")
    assert worker.stopped_taking_runs_at is not None and worker.consecutive_errors == 4
    assert worker.stopped_reason == "3 judge errors in a row; the last: sandbox failed to start (6)"
    assert services.worker_refuses_runs(hostname="w1")
    # It still beats, but the site says no worker serves the chip.
    services.worker_heartbeat(hostname="w1", chip_slug="cpu-interpreter")
    assert not chip_has_live_worker(chip=run.chip)
    # Unknown to the site yet (no beat): nothing to count against.
    assert services.worker_count_judgement(hostname="never-beat", run_id=1, error_reason="x") is False


def test_one_run_failing_again_and_again_does_not_take_the_worker_off_its_chip(run, settings):
    # A kernel that makes our side fail is claimed again (up to the attempt bound), often by the same
    # worker: that is evidence about the run, so it counts once, and a lone worker keeps serving the chip.
    settings.KGB_WORKER_ERROR_STREAK = 2
    services.worker_heartbeat(hostname="w1", chip_slug="cpu-interpreter")
    outcomes = [services.worker_count_judgement(hostname="w1", run_id=9, error_reason="x") for _ in range(3)]
    assert outcomes == [False, False, False]
    assert Worker.objects.get(hostname="w1").consecutive_errors == 1
    assert services.worker_count_judgement(hostname="w1", run_id=10, error_reason="y") is True  # another run


def test_a_restarted_worker_takes_runs_again_unless_its_new_process_stopped(run, settings):
    settings.KGB_WORKER_ERROR_STREAK = 1
    services.worker_heartbeat(hostname="w1", chip_slug="cpu-interpreter")
    assert services.worker_count_judgement(hostname="w1", run_id=1, error_reason="broken") is True
    stopped_at = Worker.objects.get(hostname="w1").stopped_taking_runs_at
    # A process born before the stop does not clear it (the stop is its own)...
    earlier = stopped_at - timedelta(seconds=1)
    assert services.worker_take_runs_again(hostname="w1", stopped_before=earlier) is False
    assert services.worker_refuses_runs(hostname="w1")
    # ... one born after it does, and its count of errors starts at zero.
    later = database_now() + timedelta(seconds=1)
    assert services.worker_take_runs_again(hostname="w1", stopped_before=later) is True
    worker = Worker.objects.get(hostname="w1")
    assert (worker.stopped_taking_runs_at, worker.stopped_reason, worker.consecutive_errors) == (None, "", 0)


def test_any_judge_error_goes_back_to_the_queue_until_the_attempts_are_used(run, settings):
    # Not only the transient ones: an error is our side's failure, never a verdict on the kernel.
    settings.KGB_MAX_RUN_ATTEMPTS = 2
    claimed, lease = services.run_claim(run_id=run.pk, worker="w1")
    assert services.run_retry_later(run=claimed, lease=lease, reason="the sandbox failed to start") == "requeued"
    claimed, lease = services.run_claim(run_id=run.pk, worker="w2")
    assert claimed.attempts == 2
    assert services.run_retry_later(run=claimed, lease=lease, reason="the sandbox failed to start") == "exhausted"


def test_staff_let_a_stopped_worker_take_runs_again_from_the_admin(run, settings, client, django_user_model):
    from django.urls import reverse

    settings.KGB_WORKER_ERROR_STREAK = 1
    services.worker_heartbeat(hostname="w1", chip_slug="cpu-interpreter")
    services.worker_heartbeat(hostname="w2", chip_slug="cpu-interpreter")
    assert services.worker_count_judgement(hostname="w1", run_id=1, error_reason="the sandbox failed to start") is True
    client.force_login(django_user_model.objects.create_superuser("root", password="root-pass-123"))
    changelist = reverse("admin:evaluation_worker_changelist")
    listing = client.get(changelist).content.decode()
    assert "w1" in listing and "w2" in listing
    detail = client.get(reverse("admin:evaluation_worker_change", args=[Worker.objects.get(hostname="w1").pk]))
    assert "1 judge errors in a row; the last: the sandbox failed to start" in detail.content.decode()
    pks = list(Worker.objects.values_list("pk", flat=True))
    done = client.post(changelist, {"action": "take_runs_again", "_selected_action": pks}, follow=True)
    assert "1 worker(s) take runs again: w1" in done.content.decode()
    assert not services.worker_refuses_runs(hostname="w1")
    assert Worker.objects.get(hostname="w1").consecutive_errors == 0


def test_a_worker_whose_own_heartbeat_is_stale_stops_before_claiming_and_its_next_beat_resumes_it(
    run, settings, monkeypatch, django_capture_on_commit_callbacks
):
    """Peers take back the runs of a worker whose last beat is older than KGB_WORKER_STALE_AFTER_S, so a run
    it claimed then would be judged twice: judge_run gives the ticket back and the worker stops consuming,
    until a beat lands again (the heartbeat asks the consumer back, then lifts the stop)."""
    import socket

    from celery import current_app

    from evaluation import tasks

    settings.KGB_WORKER_STALE_AFTER_S = 60
    hostname = socket.gethostname()  # the worker's name in a task run by apply(), as judge_run reads it
    services.worker_heartbeat(hostname=hostname, chip_slug="cpu-interpreter")
    assert services.worker_refuses_runs(hostname=hostname) is False  # alive
    assert services.worker_refuses_runs(hostname="never-beat") is False  # its first beat is under way
    Worker.objects.filter(hostname=hostname).update(last_heartbeat_at=timezone.now() - timedelta(seconds=61))
    requests = []
    monkeypatch.setattr(
        current_app.control, "cancel_consumer", lambda queue, **kw: requests.append(("cancel", queue, kw))
    )
    monkeypatch.setattr(current_app.control, "add_consumer", lambda queue, **kw: requests.append(("add", queue, kw)))
    with django_capture_on_commit_callbacks(execute=False) as sent:
        assert tasks.judge_run.apply(args=[run.pk]).get() == "passed_on"
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.attempts == 0  # not claimed: its ticket went back
    assert len(sent) == 1
    assert requests == [("cancel", "chip.cpu-interpreter", {"destination": [hostname], "reply": False})]
    worker = Worker.objects.get(hostname=hostname)
    assert worker.stopped_reason == services.STALLED_HEARTBEAT_REASON
    # A stop for judge errors is not the heartbeat's to lift.
    assert services.worker_stopped_for_stalled_heartbeat(hostname=hostname) == "chip.cpu-interpreter"
    Worker.objects.filter(hostname=hostname).update(stopped_reason="3 judge errors in a row")
    assert services.worker_stopped_for_stalled_heartbeat(hostname=hostname) is None
    assert services.worker_resume_after_stalled_heartbeat(hostname=hostname) is False
    Worker.objects.filter(hostname=hostname).update(stopped_reason=services.STALLED_HEARTBEAT_REASON)
    # The beat lands: the consumer is asked back, then the stop lifted.
    tasks.take_runs_again(hostname, services.worker_stopped_for_stalled_heartbeat(hostname=hostname))
    assert requests[-1] == ("add", "chip.cpu-interpreter", {"destination": [hostname], "reply": False})
    services.worker_heartbeat(hostname=hostname, chip_slug="cpu-interpreter")
    assert services.worker_resume_after_stalled_heartbeat(hostname=hostname) is True
    assert not services.worker_refuses_runs(hostname=hostname)
    assert services.worker_refuses_runs(hostname=hostname) is False

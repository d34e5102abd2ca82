"""Fair claiming: a chip's queue is served round robin over owners, each owner's runs oldest first.

A worker's message is a ticket for one judgement on the chip; ``run_claim_fairest`` decides which queued
run it judges, so one owner's flood does not hold back another owner's first upload."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from evaluation import services
from evaluation.judge.job import JudgeResult
from evaluation.models import OwnerTurn, Run, RunStatus, Worker


def judge_next(ticket: int, worker: str = "w1") -> int | None:
    """Spend one ticket as a worker would: claim the fairest run and record a verdict for it."""
    claim = services.run_claim_fairest(run_id=ticket, worker=worker)
    if claim is None:
        return None
    run, lease = claim
    assert services.run_record_result(run=run, lease=lease, result=JudgeResult(status="passed", reason="ok"))
    return run.pk


def test_another_owners_first_upload_is_judged_next_whatever_the_flood_before_it(upload, django_user_model):
    flooder = django_user_model.objects.create_user("flooder", password="x")
    newcomer = django_user_model.objects.create_user("newcomer", password="x")
    flood = upload(flooder, 12)
    assert judge_next(flood[0]) == flood[0]
    (first,) = upload(newcomer)
    # Whichever ticket comes next (the flood's, sent earlier), the newcomer's run is the one judged.
    assert judge_next(flood[1]) == first
    # Then the flood again, oldest first: the newcomer has nothing left queued.
    assert [judge_next(ticket) for ticket in flood[1:4]] == flood[1:4]


def test_owners_take_turns_and_each_owner_goes_oldest_first(upload, django_user_model):
    alice, bob, carol = (django_user_model.objects.create_user(name, password="x") for name in ("a", "b", "c"))
    runs = {"a": upload(alice, 3), "b": upload(bob, 3), "c": upload(carol, 1)}
    order = [judge_next(runs["a"][0]) for _ in range(7)]
    owner_of = {pk: name for name, pks in runs.items() for pk in pks}
    assert [owner_of[pk] for pk in order] == ["a", "b", "c", "a", "b", "a", "b"]
    assert [pk for pk in order if owner_of[pk] == "a"] == runs["a"]  # oldest first within an owner
    # Every run was judged once, and the spare ticket finds nothing queued.
    assert sorted(order) == sorted(runs["a"] + runs["b"] + runs["c"])
    assert judge_next(runs["a"][0]) is None
    assert OwnerTurn.objects.count() == 3


def test_an_owner_served_long_ago_goes_before_one_served_just_now(upload, django_user_model, cpu_chip):
    old, recent = (django_user_model.objects.create_user(name, password="x") for name in ("old", "recent"))
    OwnerTurn.objects.create(chip=cpu_chip, owner=old, last_claimed_at=timezone.now() - timedelta(days=1))
    OwnerTurn.objects.create(chip=cpu_chip, owner=recent, last_claimed_at=timezone.now())
    recent_runs = upload(recent, 2)
    old_runs = upload(old, 1)
    assert judge_next(recent_runs[0]) == old_runs[0]


def test_a_redelivered_ticket_of_a_dead_claim_queues_that_run_again_and_judges_fairly(upload, django_user_model):
    owner = django_user_model.objects.create_user("o", password="x")
    (run_id,) = upload(owner)
    claimed, old_lease = services.run_claim(run_id=run_id, worker="celery@here", pid=2**22 + 12345)  # no such pid
    claim = services.run_claim_fairest(run_id=run_id, worker="celery@here", pid=None)
    assert claim is not None and claim[0].pk == run_id and claim[0].attempts == 2
    assert services.run_record_result(run=claimed, lease=old_lease, result=JudgeResult("passed", "late")) is False


def test_lost_tickets_are_resent_only_where_a_served_chip_sits_idle(
    upload, django_user_model, cpu_chip, django_capture_on_commit_callbacks
):
    owner = django_user_model.objects.create_user("o", password="x")
    runs = upload(owner, 3)
    Worker.objects.create(hostname="live", chip=cpu_chip, last_heartbeat_at=timezone.now())
    long_ago = timezone.now() - timedelta(hours=1)
    Run.objects.filter(pk__in=runs).update(queued_at=long_ago)
    # A flood waiting its turn on a busy chip is not lost: nothing is re-sent.
    services.run_claim_fairest(run_id=runs[0], worker="live")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert services.runs_requeue_stale()["resent"] == 0
    assert callbacks == []
    # An idle chip (nothing running, no claim for an hour) with runs queued that long lost their tickets.
    Run.objects.filter(status=RunStatus.RUNNING).update(status=RunStatus.PASSED)
    OwnerTurn.objects.update(last_claimed_at=long_ago)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        assert services.runs_requeue_stale()["resent"] == 2
    assert len(callbacks) == 2


def test_a_claim_retried_after_its_commit_was_lost_takes_the_run_it_already_holds(upload, django_user_model):
    # The claim's UPDATE committed, then the connection dropped before the task heard back (the soak's
    # dropped-connections fault): the retry must find that run, not claim a second one and leave the first
    # running under a lease nobody holds.
    owner = django_user_model.objects.create_user("o", password="x")
    first_id, second_id = upload(owner, 2)
    first, lease = services.run_claim_fairest(run_id=first_id, worker="celery@here", pid=None, lease="retried-lease")
    again = services.run_claim_fairest(run_id=first_id, worker="celery@here", pid=None, lease="retried-lease")
    assert again is not None and (again[0].pk, again[1]) == (first.pk, "retried-lease")
    assert Run.objects.get(pk=second_id).status == RunStatus.QUEUED
    assert Run.objects.filter(status=RunStatus.RUNNING).count() == 1


def test_a_run_a_worker_gave_back_goes_to_another_worker_first(upload, django_user_model):
    # A judge error puts the run back on the queue; the worker that failed it takes other runs first, so a
    # broken worker cannot spend one run's every claim in a second, and another worker gets it next.
    owner = django_user_model.objects.create_user("owner", password="x")
    runs = upload(owner, 3)
    failed, lease = services.run_claim_fairest(run_id=runs[0], worker="w1")
    assert failed.pk == runs[0]
    assert services.run_retry_later(run=failed, lease=lease, reason="the sandbox failed to start") == "requeued"
    assert judge_next(runs[0], worker="w1") == runs[1]  # not the run it gave back, though it is the oldest
    assert judge_next(runs[0], worker="w2") == runs[0]  # another worker takes it, oldest first
    assert judge_next(runs[0], worker="w1") == runs[2]
    # With nothing else queued, the worker takes a run it gave back: a lone worker still retries it.
    lone = upload(owner, 1)[0]
    claimed, lease = services.run_claim_fairest(run_id=lone, worker="w1")
    assert services.run_retry_later(run=claimed, lease=lease, reason="again") == "requeued"
    assert judge_next(lone, worker="w1") == lone

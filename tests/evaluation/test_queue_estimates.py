"""Queue positions agree with the order fair claiming really takes; start estimates come from the chip's
recent rate of judgements."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evaluation import services
from evaluation.judge.job import JudgeResult
from evaluation.models import OwnerTurn, Run
from evaluation.queue_estimates import queue_estimates


def test_every_position_is_where_fair_claiming_really_takes_the_run(upload, django_user_model, cpu_chip):
    owners = [django_user_model.objects.create_user(name, password="x") for name in ("a", "b", "c", "d")]
    ids = upload(owners[0], 5) + upload(owners[1], 2) + upload(owners[2], 1) + upload(owners[3], 3)
    # One owner was served a while ago, one just now: the turn order is not the owners' order.
    OwnerTurn.objects.create(chip=cpu_chip, owner=owners[0], last_claimed_at=timezone.now())
    OwnerTurn.objects.create(chip=cpu_chip, owner=owners[3], last_claimed_at=timezone.now() - timedelta(hours=1))
    estimates = queue_estimates(runs=list(Run.objects.filter(pk__in=ids)))
    claimed = []
    while claim := services.run_claim_fairest(run_id=ids[0], worker="w"):
        claimed.append(claim[0].pk)
        services.run_record_result(run=claim[0], lease=claim[1], result=JudgeResult("passed", "ok"))
    assert sorted(claimed) == sorted(ids)
    assert {pk: estimates[pk].position for pk in ids} == {pk: index for index, pk in enumerate(claimed)}


def test_the_start_estimate_divides_the_position_by_the_recent_rate(upload, django_user_model):
    owner = django_user_model.objects.create_user("o", password="x")
    ids = upload(owner, 4)
    (first,) = [queue_estimates(runs=list(Run.objects.filter(pk=ids[2])))[ids[2]]]
    assert (first.position, first.starts_in_s) == (2, None)  # nothing judged lately: no estimate
    assert first.describe() == "2 ahead in its chip's queue"
    # Two judgements finished in the last ten minutes (one per 300 s): the run second in line starts in ~600 s.
    for pk in ids[:2]:
        claim = services.run_claim(run_id=pk, worker="w")
        services.run_record_result(run=claim[0], lease=claim[1], result=JudgeResult("passed", "ok"))
    estimate = queue_estimates(runs=list(Run.objects.filter(pk=ids[3])))[ids[3]]
    assert estimate.position == 1
    assert estimate.starts_in_s == pytest.approx(600.0)
    assert estimate.describe() == "1 ahead in its chip's queue, starts in about 10 min"
    assert queue_estimates(runs=list(Run.objects.filter(pk=ids[0]))) == {}  # not queued: no estimate


def test_the_submission_page_and_its_status_say_where_a_queued_run_stands(upload, django_user_model, client):
    owner = django_user_model.objects.create_user("o", password="x")
    ids = upload(owner, 2)
    submission = Run.objects.get(pk=ids[1]).kernel.submission_id
    client.force_login(owner)
    status = client.get(f"/submissions/{submission}/status.json").json()
    assert status["runs"][0]["queue"] == "1 ahead in its chip's queue"
    assert "1 ahead in its chip&#x27;s queue" in client.get(f"/submissions/{submission}/").content.decode()
    api = client.get(f"/api/submissions/{submission}/").json()["progress"]["runs"][0]
    assert (api["queue_position"], api["starts_in_s"]) == (1, None)


def test_a_chip_whose_worker_missed_three_beats_is_named_at_once(upload, django_user_model, client, cpu_chip, settings):
    from evaluation.models import Worker

    owner = django_user_model.objects.create_user("o", password="x")
    submission = Run.objects.get(pk=upload(owner, 1)[0]).kernel.submission_id
    client.force_login(owner)
    settings.KGB_HEARTBEAT_INTERVAL_S, settings.KGB_WORKER_STALE_AFTER_S = 10, 60
    worker = Worker.objects.create(hostname="w@gpu", chip=cpu_chip, last_heartbeat_at=timezone.now())
    assert client.get(f"/submissions/{submission}/status.json").json()["chips_without_worker"] == []
    # 35 s of silence: not yet stale for the re-queuer (60 s), but the page says so now.
    Worker.objects.filter(pk=worker.pk).update(last_heartbeat_at=timezone.now() - timedelta(seconds=35))
    assert client.get(f"/submissions/{submission}/status.json").json()["chips_without_worker"] == ["cpu-interpreter"]

"""Fair scheduling through the real worker and broker: one owner's flood of uploads queued on a chip does not
hold back another owner's first upload by more than the judgement already running."""

from __future__ import annotations

import json
import time

import pytest

from tests.e2e.stack import ROOT

GOOD = ROOT / "tests" / "fixtures" / "kernels" / "aten__cos_correct.py"
FLOOD = 8

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def claims_in_order(stack) -> list[dict]:
    script = (
        "import json; from evaluation.models import Run; print(json.dumps([{'owner': r.kernel.submission.owner"
        ".username, 'status': r.status, 'attempts': r.attempts} for r in Run.objects.exclude(started_at=None)"
        ".order_by('started_at', 'pk').select_related('kernel__submission__owner')]))"
    )
    return json.loads(stack.manage("shell", "-c", script).stdout.strip().splitlines()[-1])


def test_a_flood_of_one_owner_does_not_hold_back_another_owners_first_upload(stack):
    stack.manage(
        "shell",
        "-c",
        "from django.contrib.auth.models import User; User.objects.create_user('newcomer', password='newcomer-pass-1')",
    )
    stack.start_site()
    flooder = stack.login()
    flood = [stack.upload(flooder, GOOD, scaffold=f"Flood {index}")[0] for index in range(FLOOD)]
    assert all(flood)
    stack.start_worker("worker")  # the whole flood is on the queue before the worker takes anything
    deadline = time.monotonic() + 180
    while not claims_in_order(stack):
        assert time.monotonic() < deadline, stack.log("worker")
        time.sleep(0.3)
    newcomer = stack.login("newcomer", "newcomer-pass-1")
    claimed_before = len(claims_in_order(stack))
    (first, _) = stack.upload(newcomer, GOOD, scaffold="Newcomer")
    assert first
    assert stack.wait_for_runs(newcomer, first, timeout=300)["passed"] == 1
    for submission in flood:
        assert stack.wait_for_runs(flooder, submission, timeout=300)["passed"] == 1

    claims = claims_in_order(stack)
    owners = [claim["owner"] for claim in claims]
    assert len(claims) == FLOOD + 1 and all(claim["attempts"] == 1 for claim in claims)  # none doubled or lost
    assert claimed_before < FLOOD - 2, f"the flood was nearly judged before the newcomer came: {owners}"
    # One judgement was running when the newcomer uploaded (perhaps one more started meanwhile): the
    # newcomer's run is the next one claimed after those, not the ninth.
    assert owners.index("newcomer") <= claimed_before + 1, owners

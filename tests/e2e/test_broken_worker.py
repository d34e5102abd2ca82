"""A worker whose judge cannot work (its sandbox cannot start) stops taking runs after a few errors in a row,
turns none of them into a verdict, and leaves them queued for a healthy worker, which judges them."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parents[1] / "fixtures" / "kernels"

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def query(stack, script: str) -> dict:
    return json.loads(stack.manage("shell", "-c", script).stdout.strip().splitlines()[-1])


def runs_of(stack, submissions: list[int]) -> list[dict]:
    return query(
        stack,
        "import json; from evaluation.models import Run; print(json.dumps({'runs': list(Run.objects.filter("
        f"kernel__submission_id__in={submissions!r}).order_by('pk').values('status', 'attempts', 'worker'))}}))",
    )["runs"]


def worker_row(stack, name: str) -> dict:
    return query(
        stack,
        "import json; from evaluation.models import Worker; w = Worker.objects.filter(hostname__startswith="
        f"{name + '@'!r}).values('consecutive_errors', 'stopped_taking_runs_at', 'stopped_reason').first(); "
        "print(json.dumps(w, default=str))",
    )


def wait_for_worker(stack, name: str, what: str, ready, seconds: float = 120) -> dict:
    """The worker's row once ``ready(row)`` holds (``what`` names the wait in the failure)."""
    deadline = time.monotonic() + seconds
    while not ready(row := worker_row(stack, name) or {}):
        assert time.monotonic() < deadline, f"the worker never {what}:\n{stack.log(name)}"
        time.sleep(1)
    return row


def upload_copies(stack, session, count: int) -> list[int]:
    """``count`` submissions of one correct cos kernel, each by its own method."""
    submissions = []
    for index in range(count):
        submission_id, response = stack.upload(session, KERNELS / "aten__cos_correct.py", scaffold=f"Agent {index}")
        assert submission_id, response.text[-2000:]
        submissions.append(submission_id)
    return submissions


def judged_by_a_healthy_worker(stack, session, submissions: list[int]) -> list[dict]:
    """A healthy worker started now passes every one of ``submissions``; their runs, as runs_of gives them."""
    stack.start_worker("worker")
    for submission_id in submissions:
        finished = stack.wait_for_runs(session, submission_id, timeout=300)
        assert [run["status"] for run in finished["runs"]] == ["passed"], finished
    return runs_of(stack, submissions)


def test_a_worker_whose_sandbox_cannot_start_stops_taking_runs_and_loses_none(stack):
    stack.extra_env["KGB_WORKER_ERROR_STREAK"] = "2"
    stack.start_site()
    state = stack.data_dir / "broken-sandbox-state"
    stack.start_worker_with("broken", concurrency=2, env={"KGB_SANDBOX_STATE_DIR": str(state)})
    wait_for_worker(stack, "broken", "beat", bool)
    # Then the host's sandbox slots break under it (their folder replaced by a file): no sandbox can start,
    # so every judgement it makes from now on fails on our side.
    shutil.rmtree(state / "slots")
    (state / "slots").write_text("not a folder")
    session = stack.login()
    submissions = upload_copies(stack, session, 5)
    stopped = wait_for_worker(stack, "broken", "stopped", lambda row: row.get("stopped_taking_runs_at"))
    assert stopped["stopped_reason"].startswith("2 judge errors in a row; the last: ")
    time.sleep(5)  # tickets it had already taken are passed on, not judged
    runs = runs_of(stack, submissions)
    assert [run["status"] for run in runs] == ["queued"] * 5, runs  # no error recorded, nothing lost
    assert sum(run["attempts"] for run in runs) <= 3, runs  # two errors in a row, one more in flight at most
    status = session.get(f"{stack.base_url}/submissions/{submissions[0]}/status.json").json()
    assert status["chips_without_worker"] == ["cpu-interpreter"]  # it still beats, but serves no run
    assert stack.processes["broken"].poll() is None  # alive, only off the queue
    assert "Canceling queue chip.cpu-interpreter" in (stack.data_dir / "broken.log").read_text(errors="replace")

    runs = judged_by_a_healthy_worker(stack, session, submissions)
    assert all(run["worker"].startswith("worker@") for run in runs), runs
    assert worker_row(stack, "broken")["stopped_taking_runs_at"]  # still off the queue


def test_a_worker_whose_heartbeat_stalled_gives_back_its_tickets_instead_of_judging_them_twice(stack):
    """Other workers re-queue the runs of a worker whose last beat is older than KGB_WORKER_STALE_AFTER_S. A
    worker whose heartbeat stalls (here: its next beat an hour away) that went on claiming would judge runs a
    peer takes back at once; it gives the tickets back and stops consuming, and a healthy worker judges them."""
    stack.start_site()  # the stack's workers beat every second and count as dead after 6 s
    stack.start_worker_with("stalled", concurrency=2, env={"KGB_HEARTBEAT_INTERVAL_S": "3600"})
    wait_for_worker(stack, "stalled", "beat", bool)
    time.sleep(7)  # its one beat is now stale
    session = stack.login()
    submissions = upload_copies(stack, session, 3)
    stopped = wait_for_worker(stack, "stalled", "stopped", lambda row: row.get("stopped_taking_runs_at"), 60)
    assert stopped["stopped_reason"] == "its heartbeat stalled"
    time.sleep(3)
    runs = runs_of(stack, submissions)
    assert [(run["status"], run["attempts"]) for run in runs] == [("queued", 0)] * 3, runs  # none claimed
    assert "Canceling queue chip.cpu-interpreter" in (stack.data_dir / "stalled.log").read_text(errors="replace")

    runs = judged_by_a_healthy_worker(stack, session, submissions)
    assert all(run["worker"].startswith("worker@") and run["attempts"] == 1 for run in runs), runs

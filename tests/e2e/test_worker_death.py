"""A worker killed in the middle of a run loses no run and records no duplicate result."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from evaluation.catalog.registry import all_operators

KERNELS = Path(__file__).resolve().parents[1] / "fixtures" / "kernels"

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def run_row(stack, run_id: int) -> dict:
    script = (
        "import json; from evaluation.models import Run; "
        f"r = Run.objects.get(pk={run_id}); "
        "print(json.dumps({'status': r.status, 'attempts': r.attempts, 'worker': r.worker, "
        "'runs_of_kernel': Run.objects.filter(kernel=r.kernel).count(), 'cases_total': r.cases_total}))"
    )
    import json

    return json.loads(stack.manage("shell", "-c", script).stdout.strip().splitlines()[-1])


def test_killing_a_worker_mid_run_requeues_the_run_and_records_it_once(stack):
    stack.start_site()
    stack.start_worker("first")
    session = stack.login()
    submission_id, _ = stack.upload(session, KERNELS / "aten__cos_slow.py", scaffold="Slow Agent")
    assert submission_id

    deadline = time.monotonic() + 120
    while True:
        runs = session.get(f"{stack.base_url}/submissions/{submission_id}/status.json").json()["runs"]
        if runs and runs[0]["status"] == "running":
            break
        assert time.monotonic() < deadline, f"the run never started: {runs}\n{stack.log('first')}"
        time.sleep(0.3)
    run_id = runs[0]["id"]
    time.sleep(3)  # well inside the judgement
    stack.kill("first")  # SIGKILL to the worker's whole process group: no chance to clean up
    before = run_row(stack, run_id)
    assert (before["status"], before["attempts"]) == ("running", 1)

    stack.start_worker("second")
    status = stack.wait_for_runs(session, submission_id, timeout=300)
    assert [run["status"] for run in status["runs"]] == ["passed"]
    after = run_row(stack, run_id)
    assert after["attempts"] == 2  # claimed once by each worker
    assert after["worker"].startswith("second@")
    assert after["runs_of_kernel"] == 1  # no duplicate run
    assert after["cases_total"] == len(all_operators()["aten::cos"].cases("smoke"))  # each case once

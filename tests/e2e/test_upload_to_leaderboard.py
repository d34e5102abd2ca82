"""The first complete path: a kernel goes from the web form to a verdict from a real worker, to the leaderboard.

Runs in both configurations (see conftest): SQLite + on-disk broker, and PostgreSQL + Redis.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

KERNELS = Path(__file__).resolve().parents[1] / "fixtures" / "kernels"

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def test_kernels_uploaded_through_the_form_get_verdicts_and_reach_the_leaderboard(stack):
    stack.start_site()
    stack.start_worker()
    session = stack.login()

    correct_id, _ = stack.upload(session, KERNELS / "aten__cos_correct.py", scaffold="Good Agent")
    wrong_id, _ = stack.upload(session, KERNELS / "aten__cos_wrong.py", scaffold="Wrong Agent")
    broken_id, _ = stack.upload(session, KERNELS / "aten__cos_import_error.py", scaffold="Broken Agent")
    assert correct_id and wrong_id and broken_id

    correct = stack.wait_for_runs(session, correct_id)["runs"]
    wrong = stack.wait_for_runs(session, wrong_id)["runs"]
    broken = stack.wait_for_runs(session, broken_id)["runs"]

    assert [run["status"] for run in correct] == ["passed"]
    assert correct[0]["speedup"] is None  # the CPU interpreter's timings mean nothing
    assert [run["status"] for run in wrong] == ["failed_correctness"]
    assert "cos[" in wrong[0]["reason"]  # names the first failing case
    assert [run["status"] for run in broken] == ["failed_compile"]
    broken_page = session.get(f"{stack.base_url}/runs/{broken[0]['id']}/").text
    assert "this kernel fails at import on purpose" in broken_page  # the error itself, shown on the run page

    page = session.get(f"{stack.base_url}/submissions/{wrong_id}/").text
    assert "Wrong result" in page
    run_page = session.get(f"{stack.base_url}/runs/{wrong[0]['id']}/").text
    assert 'id="failed-case"' in run_page

    board = session.get(f"{stack.base_url}/?chip=cpu-interpreter&set=kgb-ms").text
    rows = re.findall(r"<td class=\"method\"><a href=\"/methods/\d+/\">([^<]+)</a>", board)
    assert rows[0].strip() == "Good Agent + test-model"  # the only method that solved an operator ranks first
    assert {row.strip() for row in rows} == {
        "Good Agent + test-model",
        "Wrong Agent + test-model",
        "Broken Agent + test-model",
    }


def test_upload_form_names_problems_and_saves_nothing(stack, tmp_path):
    stack.start_site()
    session = stack.login()
    not_utf8 = tmp_path / "aten__cos.py"
    not_utf8.write_bytes(b"\xff\xfe def cos(self): pass")
    submission_id, response = stack.upload(session, not_utf8)
    assert submission_id == 0
    assert "aten__cos.py: not UTF-8 text" in response.text

    missing = tmp_path / "aten__cos_missing.py"
    missing.write_text("def cos(self):\n    return self\n")
    submission_id, response = stack.upload(session, missing)
    assert submission_id == 0
    assert "missing entry point(s) cos_out required by aten::cos" in response.text

    count = stack.manage("shell", "-c", "from leaderboard.models import Submission; print(Submission.objects.count())")
    assert count.stdout.strip().splitlines()[-1] == "0"

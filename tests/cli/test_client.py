"""``kgb`` against a live test server: login, submit a run directory and follow it to the end, status, results
matching the leaderboard page, prompts, and refusals that save nothing."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import threading
import time

import pytest
import requests
from django.db import OperationalError

from evaluation.judge.job import JudgeResult
from evaluation.models import Run, RunStatus
from evaluation.services import run_claim, run_record_result
from kgbweb.cli.main import main
from leaderboard.models import Submission
from tests.api.conftest import COS_CODE, SIN_CODE


def make_run_directory(root, cos_code: str = COS_CODE):
    (root / "kernels").mkdir(parents=True)
    (root / "kernels" / "aten__cos.py").write_text(cos_code)
    (root / "kernels" / "aten__sin.py").write_text(SIN_CODE)
    (root / "progress.json").write_text(
        json.dumps({"aten::cos": {"token_usage": {"total": 300}}, "aten::sin": {"token_usage": {"total": 100}}})
    )
    return root


def judge_queued_runs(*, until: threading.Thread, timeout: float = 60) -> int:
    """Stand-in for a worker, in this thread: claim queued runs and record a verdict (cos passes)."""
    judged = 0
    deadline = time.monotonic() + timeout
    while until.is_alive() and time.monotonic() < deadline:
        try:
            judged += judge_one_queued_run()
        except OperationalError:  # the in-memory test database is shared with the server's threads
            time.sleep(0.05)
        time.sleep(0.2)
    return judged


def judge_one_queued_run() -> int:
    run_id = Run.objects.filter(status=RunStatus.QUEUED).order_by("pk").values_list("pk", flat=True).first()
    claim = run_claim(run_id=run_id, worker="celery@fake", pid=os.getpid()) if run_id else None
    if claim is None:
        return 0
    run, lease = claim
    passed = run.kernel.operator.operator_id == "aten::cos"
    recorded = False
    while not recorded:
        try:
            recorded = run_record_result(
                run=run,
                lease=lease,
                result=JudgeResult(
                    status="passed" if passed else "failed_correctness",
                    reason="fake verdict",
                    cases_total=3,
                    cases_passed=3 if passed else 1,
                ),
            )
        except OperationalError:
            time.sleep(0.05)
    return 1


def test_submit_follows_the_runs_to_the_end_and_results_match_the_page(kgb_env, operators, cpu_chip, tmp_path, capsys):
    directory = make_run_directory(tmp_path / "run")
    codes: list[int] = []
    client = threading.Thread(
        target=lambda: codes.append(
            main(
                [
                    "submit",
                    str(directory),
                    "--method",
                    "CLI Agent",
                    "--model",
                    "m1",
                    "--chip",
                    "cpu-interpreter",
                    "--poll",
                    "0.2",
                    "--timeout",
                    "60",
                ]
            )
        )
    )
    client.start()
    assert judge_queued_runs(until=client) == 2
    client.join(timeout=30)
    assert codes == [0]
    out, err = capsys.readouterr()
    assert "uploading 2 kernel files from" in err
    assert "[##############################] 2/2 finished, 1 passed" in err
    assert "aten::cos  cpu-interpreter  passed               3/3 cases  protocol -  device-time -" in out
    assert "aten::sin  cpu-interpreter  failed_correctness   1/3 cases  protocol -  device-time -" in out
    assert out.strip().endswith("1/2 runs passed (2 finished)")
    submission = Submission.objects.get()
    assert [(k.operator.operator_id, k.total_tokens) for k in submission.kernels.order_by("operator__operator_id")] == [
        ("aten::cos", 300),
        ("aten::sin", 100),
    ]

    assert main(["results", "--set", "kgb-mc", "--chip", "cpu-interpreter", "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert [(row["rank"], row["method"]["label"]) for row in board["rows"]] == [(1, "CLI Agent + m1")]
    overall = board["rows"][0]["summaries"]["overall"]
    assert (overall["solved"], overall["operators_total"], overall["accuracy_pct"], overall["tokens_total"]) == (
        1,
        2,
        50.0,
        400,
    )
    page = requests.get(f"{kgb_env['url']}/?chip=cpu-interpreter&set=kgb-mc", timeout=30).text
    assert "CLI Agent + m1" in page and "50.0<small> (1/2)</small>" in page  # the page's own rendering

    assert main(["results", "--set", "kgb-mc", "--chip", "cpu-interpreter", "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(row["method"], row["overall_accuracy_pct"], row["overall_solved"]) for row in rows] == [
        ("CLI Agent + m1", "50.0", "1")
    ]
    assert main(["results", "--set", "kgb-mc", "--chip", "cpu-interpreter"]) == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0] == "kgb-mc on cpu-interpreter"
    # Per view: accuracy, the protocol speedup and the device-time one (unknown on the interpreter).
    assert table[1].split()[-3:] == ["acc", "protocol", "device"]
    assert table[2].split() == ["1", "CLI", "Agent", "+", "m1", "50.0%", "-", "-", "50.0%", "-", "-"]

    assert main(["status", str(submission.pk), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert (status["total"], status["finished"], status["passed"], status["done"]) == (2, 2, 1, True)


def test_submit_no_wait_prints_the_id(kgb_env, operators, cpu_chip, tmp_path, capsys):
    directory = make_run_directory(tmp_path / "run")
    assert (
        main(["submit", str(directory), "--method", "Quick", "--chip", "cpu-interpreter", "--no-wait", "--private"])
        == 0
    )
    submission = Submission.objects.get()
    assert capsys.readouterr().out.strip() == str(submission.pk)
    assert (submission.visibility, Run.objects.filter(status=RunStatus.QUEUED).count()) == ("private", 2)


def test_a_refused_submission_prints_every_problem_and_saves_nothing(kgb_env, operators, cpu_chip, tmp_path, capsys):
    directory = make_run_directory(tmp_path / "run", cos_code="def cos(self):\n    return self\n")
    assert main(["submit", str(directory), "--method", "Broken", "--chip", "cpu-interpreter"]) == 1
    err = capsys.readouterr().err
    assert "kgb: refused:\n  - kernels/aten__cos.py: missing entry point(s) cos_out required by aten::cos" in err
    assert Submission.objects.count() == 0
    assert main(["submit", str(directory), "--method", "Broken", "--chip", "tpu-v9"]) == 1
    assert "unknown or inactive chip 'tpu-v9'" in capsys.readouterr().err


def test_login_with_password_stores_a_private_config(
    live_server, user, operators, cpu_chip, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("KGB_URL", raising=False)
    monkeypatch.delenv("KGB_TOKEN", raising=False)
    monkeypatch.setattr("getpass.getpass", lambda prompt="": "alice-pass-123")
    assert main(["--url", live_server.url, "login", "--username", "alice"]) == 0
    path = tmp_path / "config" / "kgb" / "config.json"
    from knox.crypto import hash_token
    from knox.models import AuthToken

    stored = json.loads(path.read_text())
    assert stored == {"url": live_server.url, "token": stored["token"]}
    assert AuthToken.objects.get(user=user).digest == hash_token(stored["token"])  # the key itself is not kept
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert f"logged in to {live_server.url} as alice" in capsys.readouterr().out
    # The stored config is used from now on, without flags or environment.
    assert main(["results", "--set", "kgb-mc", "--chip", "cpu-interpreter", "--format", "json"]) == 0


def test_login_with_a_wrong_token_stores_nothing(live_server, monkeypatch, tmp_path, capsys, db):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert main(["--url", live_server.url, "login", "--token", "not-a-token"]) == 1
    assert "HTTP 401: Invalid token." in capsys.readouterr().err
    assert not (tmp_path / "config" / "kgb" / "config.json").exists()


def test_prompts_are_written_per_operator(kgb_env, operators, cpu_chip, tmp_path, monkeypatch, capsys):
    from leaderboard.api import views

    monkeypatch.setattr(views, "operator_prompt_text", lambda operator_id, chip: f"Write {operator_id} for {chip}\n")
    assert main(["prompts", "--set", "kgb-mc", "--chip", "cpu-interpreter", "--out", str(tmp_path / "p")]) == 0
    assert sorted(path.name for path in (tmp_path / "p").iterdir()) == ["aten__cos.md", "aten__sin.md"]
    assert (tmp_path / "p" / "aten__cos.md").read_text() == "Write aten::cos for cpu-interpreter\n"
    assert main(["prompts", "--set", "kgb-mc", "--chip", "cpu-interpreter"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["operator_id"] for line in lines] == ["aten::cos", "aten::sin"]


def test_unreachable_server_is_a_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert main(["--url", "http://127.0.0.1:9", "status", "1"]) == 1
    assert "kgb: cannot reach http://127.0.0.1:9" in capsys.readouterr().err


@pytest.mark.parametrize("staff", [False, True])
def test_bundle_export_and_import_through_the_client(
    kgb_env, operators, cpu_chip, staff_user, user, tmp_path, monkeypatch, capsys, staff
):
    from knox.models import AuthToken

    from evaluation.judge.bundle import judge_bundle

    directory = make_run_directory(tmp_path / "run")
    assert main(["submit", str(directory), "--method", "Offline", "--chip", "cpu-interpreter", "--no-wait"]) == 0
    capsys.readouterr()
    if staff:
        monkeypatch.setenv("KGB_TOKEN", AuthToken.objects.create(user=staff_user)[1])
    bundle_path = tmp_path / "bundle.json"
    code = main(["bundle", "export", "--chip", "cpu-interpreter", "--out", str(bundle_path)])
    if not staff:
        assert code == 1
        assert "HTTP 403: Only staff may do this." in capsys.readouterr().err
        assert Run.objects.filter(status=RunStatus.QUEUED).count() == 2
        return
    assert code == 0
    bundle = json.loads(bundle_path.read_text())
    assert len(bundle["jobs"]) == 2
    results = judge_bundle(
        bundle,
        judged_chip="cpu-interpreter",
        judge=lambda job: JudgeResult(status="passed", reason="ok", cases_total=1, cases_passed=1),
    )
    (tmp_path / "results.json").write_text(json.dumps(results))
    capsys.readouterr()
    assert main(["bundle", "import", str(tmp_path / "results.json"), "--chip", "cpu-interpreter"]) == 0
    assert len(json.loads(capsys.readouterr().out)["recorded"]) == 2
    assert Run.objects.filter(status=RunStatus.PASSED).count() == 2


def test_login_with_the_command_the_token_page_shows(live_server, user, monkeypatch, tmp_path, capsys):
    from knox.models import AuthToken

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("KGB_URL", raising=False)
    monkeypatch.delenv("KGB_TOKEN", raising=False)
    _, key = AuthToken.objects.create(user=user)
    assert main(["login", "--url", live_server.url, "--token", key]) == 0
    stored = json.loads((tmp_path / "config" / "kgb" / "config.json").read_text())
    assert stored == {"url": live_server.url, "token": key}


def test_login_with_wrong_passwords_ends_in_a_lockout_that_says_when_to_retry(
    live_server, user, monkeypatch, tmp_path, capsys
):
    from knox.models import AuthToken

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("KGB_TOKEN", raising=False)
    monkeypatch.setattr("getpass.getpass", lambda prompt="": "not-alices-password")
    for _ in range(5):
        assert main(["--url", live_server.url, "login", "--username", "alice"]) == 1
    assert "Unable to log in with the provided credentials." in capsys.readouterr().err
    monkeypatch.setattr("getpass.getpass", lambda prompt="": "alice-pass-123")
    assert main(["--url", live_server.url, "login", "--username", "alice"]) == 1
    assert capsys.readouterr().err == (
        "kgb: HTTP 429: Too many failed logins for this account from your address: try again in 15 minutes, "
        "or reset your password.\n"
    )
    assert AuthToken.objects.count() == 0
    assert not (tmp_path / "config" / "kgb" / "config.json").exists()

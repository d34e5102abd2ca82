"""Hostile kernels through the real site and a real worker (SQLite + on-disk broker: the data at rest is a
file on this host), with the worker's static scan on and off: nothing of the host, of the site's data or of
another user's private kernel reaches any page, nothing outlives a judgement, nothing is left behind, and
the worker judges the next honest upload."""

from __future__ import annotations

import glob
import json
import os
import re
import secrets
from pathlib import Path

import pytest

from evaluation.judge import isolation
from tests.e2e.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "tests" / "evaluation" / "kernels" / "hostile"
GOOD = ROOT / "tests" / "fixtures" / "kernels" / "aten__cos_correct.py"

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.slow,
    pytest.mark.skipif(
        isolation.containment_available() is not None,
        reason=f"containment unavailable here: {isolation.containment_available()}",
    ),
]


def hostile(name: str, tmp_path: Path, **values: object) -> Path:
    source = (HOSTILE / name).read_text()
    for key, value in values.items():
        source = source.replace(f"__{key}__", repr(value) if not isinstance(value, (int, float)) else str(value))
    path = tmp_path / "uploads" / name.replace(".py", "") / "aten__cos.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return path


@pytest.fixture(params=["scan-on", "scan-off"])
def hostile_stack(request, tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    scan = "on" if request.param == "scan-on" else "off"
    stack = Stack(
        data_dir=data_dir,
        database_url=f"sqlite:///{data_dir / 'db.sqlite3'}",
        broker_url="filesystem://",
        extra_env={
            "KGB_STATIC_SCAN": scan,
            "KGB_CALL_LIMIT_FLOOR_S": "5",
            # Small private tmpfs: the disk-filling kernel is done in well under the limit.
            "KGB_SANDBOX_WORKDIR_BYTES": str(64 << 20),
            "KGB_SANDBOX_TMP_BYTES": str(32 << 20),
            "KGB_SANDBOX_SHM_BYTES": str(16 << 20),
        },
    )
    stack.prepare()
    stack.manage(
        "shell",
        "-c",
        (
            "from django.contrib.auth.models import User;"
            "User.objects.create_superuser('staffer', password='staff-pass-' + 'x' * 12);"
            "User.objects.create_user('other', password='other-pass-1')"
        ),
    )
    try:
        yield stack, scan
    finally:
        stack.stop()


def test_hostile_kernels_through_the_real_worker_leak_nothing_and_leave_nothing(hostile_stack, tmp_path):
    stack, scan = hostile_stack
    secret_key = stack.env["SECRET_KEY"]
    staff_hash = (
        stack.manage(
            "shell",
            "-c",
            ("from django.contrib.auth.models import User; print(User.objects.get(username='staffer').password)"),
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    marker = "private-marker-" + secrets.token_hex(10)
    temp_marker = "kgb-temp-" + secrets.token_hex(6)
    stack.start_site()
    stack.start_worker_with(concurrency=2)
    owner = stack.login()
    other = stack.login("other", "other-pass-1")

    # Another user's private kernel, alive while the snooper runs beside it (the worker judges two at once).
    victim_id, _ = stack.upload(
        other,
        hostile("victim.py", tmp_path, MARKER=marker, VICTIM_SECONDS=4.5),
        scaffold="Victim Agent",
        visibility="private",
    )
    uploads = {
        "snoop": hostile("sibling_snoop.py", tmp_path, MARKER_REVERSED=marker[::-1]),
        "files": hostile(
            "read_host_files.py",
            tmp_path,
            SECRET_PATHS=[
                str(stack.data_dir / "db.sqlite3"),
                str(stack.data_dir),
                str(ROOT / "var"),
                "/proc/1/root/" + str(stack.data_dir),
            ],
        ),
        "through": hostile("module_through_module.py", tmp_path, SECRET_PATHS=[str(stack.data_dir)]),
        "grandchild": hostile("detached_grandchild.py", tmp_path),
        "temp": hostile("shared_temp_folders.py", tmp_path, MARKER=temp_marker),
        "network": hostile("network_reach.py", tmp_path),
        "sleeper": hostile("sleeper.py", tmp_path),
        "fill": hostile("many_medium_files.py", tmp_path),
    }
    submitted = {}
    for name, path in uploads.items():
        submitted[name], response = stack.upload(owner, path, scaffold=f"Hostile {name}")
        assert submitted[name], response.text[-2000:]

    statuses = {name: stack.wait_for_runs(owner, sid, timeout=420)["runs"][0] for name, sid in submitted.items()}
    victim = stack.wait_for_runs(other, victim_id, timeout=420)["runs"][0]

    assert victim["status"] == "passed", victim
    forbidden = [secret_key, staff_hash, "SQLite format 3", marker]
    for name, run in statuses.items():
        assert run["status"] != "error", (name, run)
        page = owner.get(f"{stack.base_url}/runs/{run['id']}/").text
        api = owner.get(f"{stack.base_url}/api/runs/{run['id']}/").text
        for text in forbidden:
            assert text not in page and text not in api, (name, text)
        assert not re.search(r"LEAK (/|connected)", page), name  # what a kernel prints when it got through
    # The scan only notes names: on or off, every attack ran, was contained, and its honest cos passed.
    assert statuses["sleeper"]["status"] == "timeout"
    # The limit is max(floor 5 s, 1000 x the reference's time): on a loaded machine a 0-dim cos has taken
    # over 5 ms, so the limit can sit a little above the floor.
    limit = re.search(r"did not return within ([0-9.]+) s", statuses["sleeper"]["reason"])
    assert limit and float(limit.group(1)) >= 5, statuses["sleeper"]["reason"]
    assert {name: run["status"] for name, run in statuses.items() if name != "sleeper"} == {
        name: "passed" for name in uploads if name != "sleeper"
    }

    # Nothing outlived its judgement (no process of any uid these runs' sandboxes had); nothing of a sandbox
    # is left where the host's processes share files.
    uids = json.loads(
        stack.manage(
            "shell",
            "-c",
            (
                "import json; from evaluation.models import Run;"
                "print(json.dumps([r.environment.get('sandbox', {}).get('uid') for r in Run.objects.all()]))"
            ),
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    # (A slot another sandbox of this host holds by now is that sandbox's: its uid's processes are its own.)
    leftovers = [uid for uid in uids if uid is not None and isolation.processes_of_uid(uid)]
    assert [uid for uid in leftovers if not isolation.slot_in_use(uid)] == []
    for folder in ("/tmp", "/dev/shm", "/var/tmp"):
        assert not os.path.exists(os.path.join(folder, temp_marker))
    for path in glob.glob("/tmp/**/candidate_kernel.py", recursive=True):
        assert marker not in Path(path).read_text(errors="replace")

    # The worker survived all of it and judges the next honest upload.
    good_id, _ = stack.upload(owner, GOOD, scaffold="Honest Agent")
    assert [run["status"] for run in stack.wait_for_runs(owner, good_id)["runs"]] == ["passed"]
    evidence = json.loads(
        stack.manage(
            "shell",
            "-c",
            (
                "import json; from evaluation.models import Run;"
                f"print(json.dumps(Run.objects.filter(kernel__submission_id={good_id}).get().environment['sandbox']))"
            ),
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    assert any("own PID namespace" in item for item in evidence["applied"])
    assert re.fullmatch(r"\d+", str(evidence["uid"])) and evidence["uid"] >= isolation.uid_base()

"""The data dir is closed to other users (the sandbox runs as one): 0700 folders and 0600 files, as `migrate`,
the site, the broker and the worker create them, and repaired at start in a data dir an older version left
open. Everything here runs real ``manage.py`` processes on a data dir of the test's own."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def environment(data_dir: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "KGB_", "DATABASE_URL", "CELERY_", "SECRET_KEY", "PYTEST"))
    }
    env.update({"KGB_DATA_DIR": str(data_dir), "DJANGO_SETTINGS_MODULE": "kgbweb.settings", "PYTHONUNBUFFERED": "1"})
    return env


def manage(data_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=environment(data_dir),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )


def modes(data_dir: Path) -> dict[str, int]:
    """Every path under the data dir (itself as ".") and its permission bits."""
    found = {".": stat.S_IMODE(data_dir.stat().st_mode)}
    for path in data_dir.rglob("*"):
        found[str(path.relative_to(data_dir))] = stat.S_IMODE(path.lstat().st_mode)
    return found


def assert_closed(data_dir: Path) -> dict[str, int]:
    found = modes(data_dir)
    opened = {
        name: oct(mode) for name, mode in found.items() if mode != (0o700 if (data_dir / name).is_dir() else 0o600)
    }
    assert opened == {}
    return found


@pytest.fixture
def open_umask():
    """The umask most shells have: what manage.py must not rely on."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.slow
def test_a_fresh_migrate_and_broker_messages_are_closed_to_others(tmp_path, open_umask):
    data_dir = tmp_path / "var"
    manage(data_dir, "migrate", "--noinput")
    found = assert_closed(data_dir)
    assert {"db.sqlite3", "secret_key", "broker", "broker/queue", "broker/control"} <= set(found)
    # A message through the on-disk broker, written by a manage.py process as the site does.
    manage(
        data_dir,
        "shell",
        "-c",
        "from kgbweb.celery import app; app.send_task('evaluation.tasks.judge_run', args=[0], queue='chip.modes-test')",
    )
    messages = list((data_dir / "broker" / "queue").iterdir())
    assert len(messages) == 1
    assert_closed(data_dir)


@pytest.mark.slow
@pytest.mark.e2e
def test_a_worker_writes_nothing_open_to_others(tmp_path, open_umask):
    data_dir = tmp_path / "var"
    manage(data_dir, "migrate", "--noinput")
    log_path = tmp_path / "worker.log"
    with open(log_path, "wb") as log:
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "worker", "--chip", "cpu-interpreter", "--name", "modes@test"],
            cwd=ROOT,
            env=dict(environment(data_dir), KGB_HEARTBEAT_INTERVAL_S="1"),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 180
        while b"ready." not in log_path.read_bytes():
            assert worker.poll() is None and time.monotonic() < deadline, log_path.read_text()[-3000:]
            time.sleep(0.5)
        manage(
            data_dir,
            "shell",
            "-c",
            "from kgbweb.celery import app; "
            "app.send_task('evaluation.tasks.judge_run', args=[0], queue='chip.cpu-interpreter')",
        )
        time.sleep(3)  # the worker takes the message (and refuses run 0), heartbeats, writes its bindings
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(timeout=60)
        except subprocess.TimeoutExpired:
            # This test is about the modes of what the worker wrote, not how fast it shuts down: on a loaded
            # host its warm shutdown once outlasted 60 s. Files it wrote are on disk either way.
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=30)
    found = assert_closed(data_dir)
    assert any(name.startswith("broker/control/") for name in found), found  # the worker's queue bindings


@pytest.mark.slow
def test_an_open_data_dir_from_before_is_repaired_at_start(tmp_path, open_umask):
    data_dir = tmp_path / "var"
    (data_dir / "broker" / "queue").mkdir(parents=True)
    (data_dir / "log").mkdir()
    for name in ("db.sqlite3", "secret_key", "broker/queue/old.msg", "log/worker.log"):
        (data_dir / name).write_text("x" * 50 if name == "secret_key" else "")
    for path in [data_dir, *data_dir.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    manage(data_dir, "migrate", "--noinput")
    found = assert_closed(data_dir)
    assert {"broker/queue/old.msg", "log/worker.log"} <= set(found)

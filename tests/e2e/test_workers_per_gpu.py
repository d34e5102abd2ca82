"""One worker per device on one host (``manage.py worker --gpus 0,1``, what ``--all-gpus`` does on a GPU
host), both consuming one chip's queue: every run is judged exactly once, sandboxes judged at the same time
never share a uid (the host's slots, not each worker's), and a worker killed mid-run loses nothing and does
not stop the other, which the supervisor starts again.

On this CPU-only machine both workers judge on the interpreter; the device binding itself (one
CUDA_VISIBLE_DEVICES per worker) is the same code on a GPU host."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluation.judge import isolation
from tests.e2e.stack import ROOT, Stack

GOOD = ROOT / "tests" / "fixtures" / "kernels" / "aten__cos_correct.py"

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def runs_of(stack: Stack) -> list[dict]:
    script = (
        "import json; from evaluation.models import Run; print(json.dumps([{'id': r.id, 'kernel': r.kernel_id, "
        "'status': r.status, 'attempts': r.attempts, 'worker': r.worker, "
        "'uid': r.environment.get('sandbox', {}).get('uid'), "
        "'held': r.environment.get('sandbox', {}).get('identity_held'), "
        "'started': r.started_at.isoformat() if r.started_at else None, "
        "'finished': r.finished_at.isoformat() if r.finished_at else None} for r in Run.objects.all()]))"
    )
    return json.loads(stack.manage("shell", "-c", script).stdout.strip().splitlines()[-1])


def worker_children(supervisor: subprocess.Popen) -> dict[str, int]:
    """device -> pid of the worker the supervisor started for it (from /proc: its direct children)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
        if parent == supervisor.pid and b"--name" in cmdline:
            name = cmdline[cmdline.index(b"--name") + 1].decode()
            found[name.rsplit("-gpu", 1)[1]] = int(entry)
    return found


def alive(pid: int) -> bool:
    """The process exists and is not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def wait_until_gone(pids, seconds: float) -> list[int]:
    """The pids still alive after waiting up to ``seconds`` for them to end."""
    deadline = time.monotonic() + seconds
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.3)
    return [pid for pid in pids if alive(pid)]


def start_supervisor(stack: Stack, tmp_path: Path) -> subprocess.Popen:
    log = open(tmp_path / "supervisor.log", "ab")  # noqa: SIM115 - the child keeps it
    return subprocess.Popen(
        [sys.executable, "manage.py", "worker", "--gpus", "0,1", "--concurrency", "2", "--name", "pair@e2e"],
        cwd=ROOT,
        env={**stack.env, "KGB_WORKER_STOP_GRACE_S": "45"},
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def test_two_workers_on_one_host_share_a_queue_without_doubling_losing_or_colliding(tmp_path):
    stack = Stack(data_dir=tmp_path, database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}", broker_url="filesystem://")
    stack.prepare()
    stack.start_site()
    supervisor = start_supervisor(stack, tmp_path)
    started: dict[str, int] = {}
    try:
        session = stack.login()
        submissions = [stack.upload(session, GOOD, scaffold=f"Agent {index}")[0] for index in range(8)]
        assert all(submissions)
        deadline = time.monotonic() + 180
        while not any(run["status"] == "running" and run["worker"].endswith("-gpu1") for run in runs_of(stack)):
            assert time.monotonic() < deadline, (runs_of(stack), (tmp_path / "supervisor.log").read_text()[-3000:])
            time.sleep(0.3)
        children = worker_children(supervisor)
        assert set(children) == {"0", "1"}
        os.killpg(children["1"], signal.SIGKILL)  # one GPU's worker dies mid-run, with all it started

        for submission in submissions:
            runs = stack.wait_for_runs(session, submission, timeout=300)["runs"]
            assert [run["status"] for run in runs] == ["passed"]
        runs = runs_of(stack)
        assert len(runs) == 8 and len({run["kernel"] for run in runs}) == 8  # none lost, none doubled
        assert all(run["status"] == "passed" for run in runs)
        assert any(run["attempts"] == 2 for run in runs)  # the killed worker's run, re-queued and judged again
        assert {run["worker"].rsplit("-gpu", 1)[1].split("@")[0] for run in runs} >= {"0"}
        # Sandboxes alive at the same time had distinct uids, whichever worker ran them.
        spans = [(run["held"][0], run["held"][1], run["uid"]) for run in runs if run["held"]]
        assert len(spans) == 8
        for index, (start, end, uid) in enumerate(spans):
            assert uid >= isolation.uid_base()
            for other_start, other_end, other_uid in spans[index + 1 :]:
                if start < other_end and other_start < end:
                    assert uid != other_uid
        # The supervisor started the dead worker again; the other never stopped.
        deadline = time.monotonic() + 60
        while set(worker_children(supervisor)) != {"0", "1"} or worker_children(supervisor)["1"] == children["1"]:
            assert time.monotonic() < deadline, (tmp_path / "supervisor.log").read_text()[-3000:]
            time.sleep(0.5)
        assert worker_children(supervisor)["0"] == children["0"]
        assert "starting it again" in (tmp_path / "supervisor.log").read_text()

        # Stopped, the supervisor stops every worker it started (warm, or killed after the grace period).
        started = worker_children(supervisor)
        os.killpg(supervisor.pid, signal.SIGTERM)
        assert supervisor.wait(timeout=90) == 0, (tmp_path / "supervisor.log").read_text()[-3000:]
        assert wait_until_gone(started.values(), 30) == [], (tmp_path / "supervisor.log").read_text()[-3000:]

        # Killed, it takes its workers with it: none is left polling the queue on its own.
        supervisor = start_supervisor(stack, tmp_path)
        deadline = time.monotonic() + 120
        while set(worker_children(supervisor)) != {"0", "1"}:
            assert time.monotonic() < deadline, (tmp_path / "supervisor.log").read_text()[-3000:]
            time.sleep(0.3)
        # Killed before a worker arms its tie, the worker finds its parent gone when it does, and exits.
        started = worker_children(supervisor)
        os.kill(supervisor.pid, signal.SIGKILL)
        supervisor.wait(timeout=10)
        assert wait_until_gone(started.values(), 60) == [], (tmp_path / "supervisor.log").read_text()[-3000:]
    finally:
        started = {**started, **worker_children(supervisor)}  # their pids before the supervisor is gone
        if supervisor.poll() is None:
            os.killpg(supervisor.pid, signal.SIGTERM)
            try:
                supervisor.wait(timeout=90)
            except subprocess.TimeoutExpired:
                os.killpg(supervisor.pid, signal.SIGKILL)
        for pid in started.values():
            if alive(pid):
                os.killpg(pid, signal.SIGKILL)
        stack.stop()

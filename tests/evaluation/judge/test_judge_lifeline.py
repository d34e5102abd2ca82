"""When the judging process dies (a Celery worker child SIGKILLed), its zygote and sandboxes die with it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

JUDGING_PROCESS = """
import json, sys, time
from evaluation.judge.forkserver import warm_forkserver, shared_forkserver
from evaluation.judge.sandbox import Sandbox

warm_forkserver("cpu")
server = shared_forkserver("cpu")
forked = Sandbox("cpu", forkserver=server)
fresh = Sandbox("cpu")
deadline = time.monotonic() + 240
forked.wait_ready(deadline)
fresh.wait_ready(deadline)
print(json.dumps({"zygote": server.process.pid, "forked": forked.process.pid, "fresh": fresh.process.pid}), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state not in ("Z", "X")


def test_sandboxes_and_zygote_die_when_the_judging_process_is_killed():
    judging = subprocess.Popen(
        [sys.executable, "-c", JUDGING_PROCESS],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        text=True,
    )
    try:
        pids = json.loads(judging.stdout.readline())
        assert all(_alive(pid) for pid in pids.values())
        judging.send_signal(signal.SIGKILL)
        judging.wait(timeout=10)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids.values()):
            time.sleep(0.1)
        assert {name: _alive(pid) for name, pid in pids.items()} == {"zygote": False, "forked": False, "fresh": False}
    finally:
        if judging.poll() is None:
            judging.kill()


CHILD_ASKING_FOR_SIGTERM = """
import os, signal, sys, time
from evaluation.judge.untrusted.lifeline import die_with_parent

def warm_shutdown(*_):
    open(sys.argv[1], "w").write("SIGTERM")
    sys.exit(0)

signal.signal(signal.SIGTERM, warm_shutdown)
die_with_parent(int(sys.argv[2]), signal.SIGTERM)
print("armed", flush=True)
time.sleep(600)
"""

PARENT_OF_ONE = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2], str(__import__("os").getpid())])
print(child.pid, flush=True)
__import__("time").sleep(600)
"""


def test_a_supervised_worker_asks_for_sigterm_when_its_supervisor_dies(tmp_path):
    # manage.py worker --gpus arms SIGTERM (Celery's warm shutdown), not SIGKILL, on its supervisor's death:
    # the worker's own handler runs, so it stops its pool and gives its runs back instead of vanishing.
    marker = tmp_path / "signal"
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT_OF_ONE, CHILD_ASKING_FOR_SIGTERM, str(marker)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        text=True,
    )
    try:
        child = int(parent.stdout.readline())
        assert parent.stdout.readline().strip() == "armed"  # the child shares the parent's stdout
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(child):
            time.sleep(0.1)
        assert not _alive(child)
        assert marker.read_text() == "SIGTERM"
    finally:
        if parent.poll() is None:
            parent.kill()

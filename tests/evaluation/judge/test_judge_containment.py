"""Containment by the operating system: one hostile kernel per escape class, judged with the static scan on
and off (it only notes names: the attack runs either way). Nothing of the host reaches the verdict, nothing
the kernel started outlives the judgement, nothing is left in shared places, and two sandboxes at once
cannot see each other.

The kernels compute cos correctly and attack from their wrapper (tests/evaluation/kernels/hostile/); each
prints what it tried ("BLOCKED ...", or "LEAK ..." when it got through), so the tests see that the attack
ran and that it failed.
"""

from __future__ import annotations

import glob
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import KERNELS, small_cos_record

from evaluation.judge import isolation
from evaluation.judge.job import JudgeJob, JudgeResult
from evaluation.judge.runner import JudgeOptions, judge_with
from evaluation.judge.sandbox import Sandbox

pytestmark = pytest.mark.skipif(
    isolation.containment_available() is not None,
    reason=f"containment unavailable here: {isolation.containment_available()}",
)

PROJECT_ROOT = Path(__file__).resolve().parents[3]
SCAN = [pytest.param(True, id="scan-on"), pytest.param(False, id="scan-off")]


def hostile(name: str, **values: object) -> str:
    source = (KERNELS / "hostile" / name).read_text()
    for key, value in values.items():
        source = source.replace(f"__{key}__", repr(value) if not isinstance(value, (int, float)) else str(value))
    return source


def judge_source(source: str, *, scan: bool, floor_s: float | None = None, factory=None) -> JudgeResult:
    job = JudgeJob(
        operator_id="aten::cos",
        source_code=source,
        chip_slug="cpu-interpreter",
        device_type="cpu",
        tiers=("smoke",),
        time_budget_s=120.0,
        call_limit_floor_s=floor_s,
    )
    return judge_with(job, JudgeOptions(spec=small_cos_record(), static_scan=scan, sandbox_factory=factory))


def outlived(uid: int) -> list[int]:
    """Processes of ``uid`` left after its judgement (unless another sandbox of this host holds its slot now:
    other judges may run beside this test)."""
    return [] if isolation.slot_in_use(uid) else isolation.processes_of_uid(uid)


def stdout_of(result: JudgeResult) -> str:
    return result.environment.get("candidate_output", {}).get("stdout", "")


def assert_ran_or_refused(result: JudgeResult, scan: bool) -> None:
    """The attack ran (the scan, on or off, refuses nothing) and failed; the honest cos it wraps passed."""
    assert result.status == "passed", (result.status, result.reason, stdout_of(result))
    if scan:
        assert any(check.name == "static_scan" and check.outcome == "noted" for check in result.checks)


@pytest.fixture
def planted_secrets():
    """World-readable files holding a secret where the site keeps its data (the project's var/), and a
    secret key file: only the view, not file modes, keeps them from the sandbox."""
    secret = "kgb-secret-" + secrets.token_hex(12)
    data_dir = PROJECT_ROOT / "var" / f"containment-{secrets.token_hex(4)}"
    (data_dir / "broker" / "queue").mkdir(parents=True)
    files = [
        data_dir / "db.sqlite3",
        data_dir / "secret_key",
        data_dir / "broker" / "queue" / "message.json",
        PROJECT_ROOT / f".containment-{secrets.token_hex(4)}",
    ]
    for path in files:
        path.write_text(f"SQLite format 3 {secret}")
        path.chmod(0o644)
    os.chmod(data_dir, 0o755)
    try:
        yield secret, [str(path) for path in files] + [str(data_dir)]
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
        files[-1].unlink(missing_ok=True)


@pytest.mark.parametrize("scan", SCAN)
@pytest.mark.parametrize("kernel", ["read_host_files.py", "module_through_module.py"])
def test_data_at_rest_never_reaches_the_verdict(warm_forkserver, planted_secrets, kernel, scan):
    secret, paths = planted_secrets
    result = judge_source(hostile(kernel, SECRET_PATHS=paths), scan=scan)

    assert_ran_or_refused(result, scan)
    assert secret not in json.dumps(result.to_json())
    assert "LEAK" not in stdout_of(result)
    if result.status == "passed":
        assert stdout_of(result).count("BLOCKED") >= len(paths)
        # Folders it could list hold only what the view binds (Python's own tree under a home, say).
        bound = " ".join(result.environment["sandbox"].get("view", []))
        for line in stdout_of(result).splitlines():
            if line.startswith("SEEN"):
                _, folder, entries = line.split(" ", 2)
                for entry in eval(entries):  # noqa: S307 - a list literal the kernel printed
                    assert f"{folder.rstrip('/')}/{entry}" in bound, line


@pytest.mark.parametrize("scan", SCAN)
def test_nothing_the_kernel_started_outlives_the_judgement(warm_forkserver, scan):
    result = judge_source(hostile("detached_grandchild.py"), scan=scan)

    assert_ran_or_refused(result, scan)
    if result.status == "passed":
        assert "SPAWNED" in stdout_of(result)
        # Gone when the judgement returned, not eventually: no process of its uid is left on the host.
        assert not outlived(result.environment["sandbox"]["uid"])


@pytest.mark.parametrize("scan", SCAN)
def test_nothing_is_left_in_shared_places(warm_forkserver, scan):
    marker = "kgb-marker-" + secrets.token_hex(8)
    result = judge_source(hostile("shared_temp_folders.py", MARKER=marker), scan=scan)

    assert_ran_or_refused(result, scan)
    if result.status == "passed":
        assert "WROTE /tmp" in stdout_of(result) and "WROTE /dev/shm" in stdout_of(result)  # its own, private
    for folder in ("/tmp", "/dev/shm", "/var/tmp", "/run"):
        assert not os.path.exists(os.path.join(folder, marker))
    assert not glob.glob("/tmp/**/" + marker, recursive=True)


@pytest.mark.parametrize("scan", SCAN)
def test_bytes_written_are_capped_for_the_whole_sandbox(warm_forkserver, scan):
    small = isolation.ContainmentLimits(workdir_bytes=64 << 20, tmp_bytes=32 << 20, shm_bytes=16 << 20)
    result = judge_source(
        hostile("many_medium_files.py"),
        scan=scan,
        factory=lambda device: Sandbox(device, forkserver=warm_forkserver, containment=small),
    )

    assert_ran_or_refused(result, scan)
    if result.status == "passed":
        written = int(stdout_of(result).split("WROTE")[1].split()[0])
        assert 0 < written <= small.written_bytes


@pytest.mark.parametrize("scan", SCAN)
def test_no_network_reaches_the_hosts_services(warm_forkserver, scan):
    result = judge_source(hostile("network_reach.py"), scan=scan)

    assert_ran_or_refused(result, scan)
    assert "LEAK" not in stdout_of(result)
    if result.status == "passed":
        assert stdout_of(result).count("BLOCKED") == 6


@pytest.mark.parametrize("scan", SCAN)
def test_two_sandboxes_at_once_cannot_read_each_other(warm_forkserver, scan):
    marker = "victim-marker-" + secrets.token_hex(12)
    results: dict[str, JudgeResult] = {}
    snooper_source = hostile("sibling_snoop.py", MARKER_REVERSED=marker[::-1])

    def run(name: str, source: str, scan_on: bool) -> None:
        results[name] = judge_source(source, scan=scan_on)

    victim = threading.Thread(target=run, args=("victim", hostile("victim.py", MARKER=marker, VICTIM_SECONDS=6), False))
    victim.start()
    time.sleep(1.0)  # the victim is loaded and sleeping in its first call
    # Meanwhile the victim's source is nowhere on the host's shared paths.
    for path in glob.glob("/tmp/**/candidate_kernel.py", recursive=True):
        assert marker not in Path(path).read_text(errors="replace")
    run("snooper", snooper_source, scan)
    victim.join()

    assert results["victim"].status == "passed"
    assert_ran_or_refused(results["snooper"], scan)
    assert marker not in json.dumps(results["snooper"].to_json())
    assert "LEAK" not in stdout_of(results["snooper"])
    if results["snooper"].status == "passed":
        pids = stdout_of(results["snooper"]).split("PROCS")[1]
        assert (
            "'1'" in pids
            and results["snooper"].environment["sandbox"]["uid"] != results["victim"].environment["sandbox"]["uid"]
        )


@pytest.mark.parametrize("scan", SCAN)
def test_a_sleeping_kernel_is_a_timeout_for_its_case_not_for_the_whole_budget(warm_forkserver, scan):
    started = time.monotonic()
    result = judge_source(hostile("sleeper.py"), scan=scan, floor_s=3.0)
    elapsed = time.monotonic() - started

    assert result.status == "timeout"
    # The limit is max(floor, factor x the reference's time): the 3 s floor, or more where a loaded host
    # slowed the reference (6.53 s once in CI), never the whole budget.
    limit_s = float(re.search(r"did not return within ([0-9.]+) s", result.reason).group(1))
    assert result.reason.startswith("case ") and 3.0 <= limit_s < 30
    assert result.failed_case["case_id"] in result.reason
    assert elapsed < 60  # the budget is 120 s; the limit ended it after a few seconds
    assert not outlived(result.environment["sandbox"]["uid"])


def test_the_evidence_lists_the_containment(warm_forkserver):
    result = judge_source((KERNELS / "good" / "cos_plain.py").read_text(), scan=True)

    assert result.status == "passed"
    applied = " ".join(result.environment["sandbox"]["applied"])
    for words in ("own uid", "own PID namespace", "read-only view", "private tmpfs", "own network namespace"):
        assert words in applied
    assert result.environment["sandbox"]["uid"] >= isolation.uid_base()


def test_slots_give_every_live_sandbox_its_own_uid_and_free_on_release():
    leases = [isolation.lease_slot() for _ in range(8)]
    try:
        assert len({lease.uid for lease in leases}) == 8
        assert all(lease.uid >= isolation.uid_base() for lease in leases)
    finally:
        for lease in leases:
            lease.release()
    again = isolation.lease_slot()
    again.release()


def test_a_slot_held_by_a_dead_process_is_free_again():
    code = (
        "from evaluation.judge import isolation; lease = isolation.lease_slot(); "
        "print(lease.slot, flush=True); import os; os._exit(0)"
    )
    slot = int(
        subprocess.run(
            [sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
        ).stdout
    )
    fd = os.open(isolation.state_dir() / "slots" / f"{slot}.lock", os.O_RDWR)
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # would raise if the dead process still held it
    finally:
        os.close(fd)


def test_an_unreadable_judge_is_refused_in_words_a_person_can_act_on(tmp_path):
    private = tmp_path / "private.py"
    private.write_text("x = 1\n")
    private.chmod(0o600)

    with pytest.raises(isolation.IsolationError) as raised:
        isolation.check_readable([str(private)])
    assert str(private) in str(raised.value) and "chmod -R o+rX" in str(raised.value) and "600" in str(raised.value)


def test_a_checkout_under_a_private_folder_still_judges(tmp_path):
    """A clone in root's 0700 home: the view binds the judge's code at its own path, so the folders above
    it may stay private."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    clone = home / "kgb"
    shutil.copytree(PROJECT_ROOT / "evaluation", clone / "evaluation", ignore=shutil.ignore_patterns("__pycache__"))
    assert stat.S_IMODE(os.stat(home).st_mode) == 0o700
    kernel = KERNELS / "good" / "cos_plain.py"
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env["PYTHONPATH"] = str(clone)
    completed = subprocess.run(
        [sys.executable, "-m", "evaluation.judge", str(kernel), "--operator", "aten::cos", "--json"],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    result = json.loads(completed.stdout)
    assert result["status"] == "passed", (result["status"], result["reason"], completed.stderr[-2000:])
    assert any("read-only view" in item for item in result["environment"]["sandbox"]["applied"])


def test_a_worker_start_sweeps_what_dead_judgements_left():
    """Folders of judging processes that are gone, processes of free slots and their cgroups go; a live
    process's folders and a held slot stay."""
    import tempfile

    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True
    ).stdout.strip()
    stale = Path(tempfile.mkdtemp(prefix="kgb-sandbox-"))
    (stale / ".owner-pid").write_text(dead)
    (stale / "candidate_kernel.py").write_text("# a dead worker's candidate\n")
    live = Path(tempfile.mkdtemp(prefix="kgb-logs-"))
    (live / ".owner-pid").write_text(str(os.getpid()))
    held = isolation.lease_slot()
    free = isolation.lease_slot()
    free.release()  # free again, but a process still runs under its uid (a killed worker's orphan)
    orphan = subprocess.Popen(["sleep", "600"], preexec_fn=lambda: os.setresuid(free.uid, free.uid, free.uid))
    survivor = subprocess.Popen(["sleep", "600"], preexec_fn=lambda: os.setresuid(held.uid, held.uid, held.uid))
    try:
        cleaned = isolation.sweep_host()
        assert not stale.exists() and live.exists()
        assert cleaned["folders"] >= 1 and cleaned["processes"] >= 1
        assert orphan.wait(timeout=10) == -9
        assert survivor.poll() is None  # its slot is held: a live judgement's
    finally:
        survivor.kill()
        survivor.wait()
        held.release()
        shutil.rmtree(live, ignore_errors=True)


def test_a_zombie_of_a_slot_uid_is_not_a_live_process_but_a_running_one_is():
    # The zygote collects dead sandboxes only when it next serves: waiting for that cost each judgement >1 s.
    lease = isolation.lease_slot()
    try:
        pid = os.fork()
        if pid == 0:  # the child: become the slot's uid, then either die at once or keep running
            os.setresgid(lease.gid, lease.gid, lease.gid)
            os.setresuid(lease.uid, lease.uid, lease.uid)
            os._exit(0)
        deadline = time.monotonic() + 10
        while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert isolation.processes_of_uid(lease.uid) == []  # dead, not yet collected: nothing runs
        os.waitpid(pid, 0)
        sleeper = subprocess.Popen(
            ["sleep", "30"],
            preexec_fn=lambda: (
                os.setresgid(lease.gid, lease.gid, lease.gid),
                os.setresuid(lease.uid, lease.uid, lease.uid),
            ),
        )
        try:
            deadline = time.monotonic() + 10
            while isolation.processes_of_uid(lease.uid) != [sleeper.pid]:
                assert time.monotonic() < deadline
                time.sleep(0.01)
        finally:
            isolation.kill_uid(lease.uid)
            sleeper.wait(timeout=10)
        assert isolation.processes_of_uid(lease.uid) == []
    finally:
        lease.release()

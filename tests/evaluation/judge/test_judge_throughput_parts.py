"""The parts that make a GPU host judge fast: the fast comparison path, the timed-case selection, the
cross-process device lock (correctness shares the GPU, timing holds it alone), inputs drawn on a device."""

from __future__ import annotations

import multiprocessing
import os
import time
import types
from pathlib import Path
from unittest import mock

import pytest
import torch

from evaluation.catalog.spec import Call, Case
from evaluation.judge.compare import compare_outputs
from evaluation.judge.device_lock import DeviceBusy, DeviceLock
from evaluation.judge.timing_stats import select_timed_cases


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64])
def test_fast_comparison_agrees_with_the_explaining_path(dtype):
    """The one-pass ``isclose`` decides; the float64 path only explains. Both must see the same failures."""
    from conftest import small_cos_record

    spec = small_cos_record()
    generator = torch.Generator().manual_seed(7)
    ref = torch.randn(4096, generator=generator, dtype=torch.float64).to(dtype)
    call = Call(args=[torch.zeros(1)])
    plain = Case("cos", {"shape": [4096], "dtype": "x"})
    assert compare_outputs(spec, plain, call, (ref.clone(),), (ref,)) is None
    bumped = ref.clone()
    bumped[123] = bumped[123] + 1
    assert compare_outputs(spec, plain, call, (bumped,), (ref,)).startswith("output 0: 1 of 4096 values outside")
    if dtype.is_complex:
        return
    with_nan = ref.clone()
    with_nan[5] = float("nan")
    assert (
        compare_outputs(spec, plain, call, (with_nan,), (ref,))
        == "output 0: 1 NaN value(s) (the case does not allow NaN)"
    )
    nan_ok = Case("cos", {"shape": [4096], "dtype": "x"}, allow_nan=True)
    assert compare_outputs(spec, nan_ok, call, (with_nan,), (with_nan.clone(),)) is None
    assert (
        compare_outputs(spec, nan_ok, call, (with_nan,), (ref,)) == "output 0: NaN positions differ from the reference"
    )
    infinite = ref.clone()
    infinite[9] = float("inf")
    negative = infinite.clone()
    negative[9] = float("-inf")
    assert compare_outputs(spec, plain, call, (infinite.clone(),), (infinite,)) is None
    assert (
        compare_outputs(spec, plain, call, (negative,), (infinite,))
        == "output 0: infinities differ from the reference; first at [9]: -inf from the kernel, inf from the reference"
    )


def _case(shape: list[int], dtype: str, entry: str = "op") -> tuple[str, Case]:
    return "public", Case(entry, {"shape": shape, "dtype": dtype})


def test_timed_cases_are_the_largest_per_entry_point_and_dtype_then_the_largest_left():
    cases = [_case([n], dtype) for n in (1, 10, 1000, 100000) for dtype in ("float16", "float32")]
    cases.append(_case([5], "float16", entry="op_out"))
    sizes = {
        case.case_id: case.params["shape"][0] * (2 if case.params["dtype"] == "float16" else 4) for _, case in cases
    }
    chosen = select_timed_cases(cases, sizes, 4)
    assert [(case.entry_point, case.params["shape"][0], case.params["dtype"]) for _, case in chosen] == [
        ("op", 1000, "float32"),
        ("op", 100000, "float16"),
        ("op", 100000, "float32"),
        ("op_out", 5, "float16"),
    ]
    # The same cases on every run, in the record's order; no limit, or few cases: all of them.
    assert select_timed_cases(cases, sizes, 4) == chosen
    assert select_timed_cases(cases, sizes, 0) == cases
    assert select_timed_cases(cases[:3], sizes, 4) == cases[:3]


def _hold_exclusive(directory: str, ready, release, device_type: str = "cuda") -> None:
    lock = DeviceLock(device_type, directory)
    with lock.exclusive(time.monotonic() + 30):
        ready.set()
        release.wait(30)


def test_timing_holds_the_device_alone_and_correctness_shares_it(tmp_path):
    context = multiprocessing.get_context("fork")
    ready, release = context.Event(), context.Event()
    holder = context.Process(target=_hold_exclusive, args=(str(tmp_path), ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        lock = DeviceLock("cuda", str(tmp_path))
        # Another process is timing: no correctness case may start.
        with pytest.raises(DeviceBusy), lock.shared(time.monotonic() + 0.2):
            pass
        assert lock.waited_s >= 0.15  # the deadline was set just before the lock files were opened
        release.set()
        holder.join(30)
        first, second = DeviceLock("cuda", str(tmp_path)), DeviceLock("cuda", str(tmp_path))
        # A timing stage waits for the correctness cases in flight.
        with (
            first.shared(time.monotonic() + 5),
            second.shared(time.monotonic() + 5),
            pytest.raises(DeviceBusy),
            DeviceLock("cuda", str(tmp_path)).exclusive(time.monotonic() + 0.2),
        ):
            pass
        # The post-timing recheck runs inside the stage's own exclusive hold.
        with first.exclusive(time.monotonic() + 5), first.shared(time.monotonic() + 5):
            pass
    finally:
        release.set()
        holder.join(30)


def _queue_timer(directory: str, queued, held_at) -> None:
    lock = DeviceLock("cuda", directory)
    queued.set()
    with lock.exclusive(time.monotonic() + 30):
        held_at.value = time.monotonic()
        time.sleep(0.3)


def test_a_queued_timer_goes_before_correctness_when_the_running_timer_lets_go(tmp_path):
    """Timers chain: with timer B queued behind timer A, a correctness case asking for the device stands
    back until B has had its turn, so B never waits for a drain of holds that slipped in between."""
    context = multiprocessing.get_context("fork")
    ready, release, queued = context.Event(), context.Event(), context.Event()
    held_at = context.Value("d", 0.0)
    first = context.Process(target=_hold_exclusive, args=(str(tmp_path), ready, release))
    first.start()
    second = None
    try:
        assert ready.wait(30)
        second = context.Process(target=_queue_timer, args=(str(tmp_path), queued, held_at))
        second.start()
        assert queued.wait(30)
        time.sleep(0.2)  # B has declared its intent and waits behind A
        lock = DeviceLock("cuda", str(tmp_path))
        release.set()
        with lock.shared(time.monotonic() + 10):
            shared_at = time.monotonic()
        assert 0 < held_at.value < shared_at  # B held the device first
        assert shared_at - held_at.value >= 0.25  # and the case waited out B's hold
    finally:
        release.set()
        first.join(30)
        if second is not None:
            second.join(30)


def test_a_shared_hold_lent_out_lets_a_timer_in_and_is_taken_back_after_it(tmp_path):
    """While a sandbox compiles (CPU work) its judge lends the GPU out: a waiting timer may take it alone,
    and the judge holds it shared again only once the timer is done."""
    context = multiprocessing.get_context("fork")
    ready, release = context.Event(), context.Event()
    lock = DeviceLock("cuda", str(tmp_path))
    with lock.shared(time.monotonic() + 5):
        with pytest.raises(DeviceBusy), DeviceLock("cuda", str(tmp_path)).exclusive(time.monotonic() + 0.2):
            pass
        assert lock.lend() and not lock.lend()  # lent once; a second lend changes nothing
        timer = context.Process(target=_hold_exclusive, args=(str(tmp_path), ready, release))
        timer.start()
        try:
            assert ready.wait(30)  # the timer got the device while this hold was lent
            context.Process(target=lambda: (time.sleep(0.3), release.set())).start()
            started = time.monotonic()
            lock.take_back(time.monotonic() + 10)
            assert time.monotonic() - started >= 0.25  # waited for the timer to finish
        finally:
            release.set()
            timer.join(30)
        with pytest.raises(DeviceBusy), DeviceLock("cuda", str(tmp_path)).exclusive(time.monotonic() + 0.2):
            pass  # held shared again
    with DeviceLock("cuda", str(tmp_path)).exclusive(time.monotonic() + 1):
        pass  # and released at the end of the hold
    assert not lock.lend()  # outside a shared hold there is nothing to lend


def test_a_shared_hold_yields_to_a_waiting_timer_between_steps_and_only_then(tmp_path):
    """A hold made of several GPU steps (comparisons and the next case's inputs, a timed case's draws) lets a
    timer that declared its intent in between two steps, and holds the GPU shared again after it; with no
    timer waiting it keeps its hold."""
    context = multiprocessing.get_context("fork")
    ready, release = context.Event(), context.Event()
    lock = DeviceLock("cuda", str(tmp_path))
    with lock.shared(time.monotonic() + 5):
        assert not lock.timer_waiting() and not lock.yield_to_timer(time.monotonic() + 5)  # nobody to let in
        timer = context.Process(target=_hold_exclusive, args=(str(tmp_path), ready, release))
        timer.start()
        try:
            deadline = time.monotonic() + 10
            while not lock.timer_waiting():  # the timer declared its intent and waits for this hold
                assert time.monotonic() < deadline
                time.sleep(0.01)
            assert not ready.is_set()
            context.Process(target=lambda: (ready.wait(30), time.sleep(0.3), release.set())).start()
            started = time.monotonic()
            assert lock.yield_to_timer(time.monotonic() + 10)
            assert ready.is_set()  # the timer held the GPU alone in between
            assert time.monotonic() - started >= 0.25  # and this judge waited for it to finish
        finally:
            release.set()
            timer.join(30)
        assert lock.shared_held and not lock.lent
        with pytest.raises(DeviceBusy), DeviceLock("cuda", str(tmp_path)).exclusive(time.monotonic() + 0.2):
            pass  # held shared again
    with DeviceLock("cuda", str(tmp_path)).exclusive(time.monotonic() + 1):
        pass  # and released at the end of the hold


def _script(name: str):
    """A script of scripts/gpu loaded as a module (they are not a package)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[3] / "scripts" / "gpu" / f"{name}.py"
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def test_the_load_sampler_splits_cpu_time_by_role_and_counts_compilers_when_reaped(tmp_path):
    """scripts/gpu/sample_load.py: per process, CPU ticks between two samples, by role; a sandbox's reaped
    children (ptxas) count as compilers; a process first seen in the later sample counts from then on."""
    sample_load = _script("sample_load")
    ticks = sample_load.TICKS
    before = {10: ("trusted", 100, 0), 11: ("sandbox", 50, 7), 12: ("other", 5, 0)}
    after = {10: ("trusted", 100 + 2 * ticks, 0), 11: ("sandbox", 50 + ticks, 7 + 3 * ticks), 13: ("sandbox", 999, 999)}
    cores = sample_load.role_cores(before, after, seconds=2.0)
    assert cores == {"trusted": 1.0, "sandbox": 0.5, "compilers": 1.5, "other": 0.0}
    assert set(sample_load.process_ticks()) and all(  # this very process is seen, with a known role
        role in sample_load.ROLES for role, _, _ in sample_load.process_ticks().values()
    )
    csv = tmp_path / "load.csv"
    csv.write_text(
        "seconds,cpu_busy,gpu_util,sm_mhz,cores_trusted,cores_sandbox,cores_compilers,cores_other\n"
        "1.0,0.500,20,1980,4.00,2.00,1.00,0.50\n2.0,0.700,30,1980,6.00,3.00,0.00,0.50\n"
    )
    assert sample_load.summary(csv).endswith("core-seconds by role: trusted 10, sandbox 5, compilers 1, other 1")


@pytest.mark.skipif(os.geteuid() != 0, reason="starting a process as a sandbox slot's uid needs root")
def test_the_load_sampler_counts_a_process_of_a_sandbox_slots_uid_as_a_sandbox():
    """Contained sandboxes run as slot uids (isolation.SlotLease), not as nobody: their CPU is the sandboxes'."""
    import subprocess

    from evaluation.judge.isolation import uid_base

    sample_load = _script("sample_load")
    slot_uid = uid_base() + 250
    child = subprocess.Popen(["setpriv", f"--reuid={slot_uid}", f"--regid={slot_uid}", "--clear-groups", "sleep", "30"])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            seen = sample_load.process_ticks().get(child.pid)
            if seen is not None and Path(f"/proc/{child.pid}").stat().st_uid == slot_uid:
                break
            time.sleep(0.05)
        assert sample_load.process_ticks()[child.pid][0] == "sandbox"
    finally:
        child.kill()
        child.wait()


def _compact_row(name: str, status: str, speedups: dict[str, tuple[float, float, float]]) -> dict:
    """A row as summarise_reference_kernels.py --compact writes it: case -> (reference ms, candidate ms,
    speedup); the operator's speedup is their geometric mean."""
    import math

    values = [speedup for _, _, speedup in speedups.values()]
    return {
        "file": name,
        "status": status,
        "speedup": math.exp(sum(map(math.log, values)) / len(values)),
        "timed_cases": [
            {"case_id": case_id, "reference_ms": reference, "candidate_ms": candidate, "speedup": speedup}
            for case_id, (reference, candidate, speedup) in speedups.items()
        ],
    }


def test_the_run_comparison_counts_only_kernels_that_passed_everywhere_and_cases_of_10_us():
    """scripts/gpu/compare_runs.py: the spreads reported for repeatability across whole runs."""
    compare_runs = _script("compare_runs")
    runs = [
        {
            "a.py": _compact_row("a.py", "passed", {"long": (0.02, 0.01, long), "short": (0.002, 0.001, short)}),
            "b.py": _compact_row("b.py", status, {"long": (0.02, 0.01, 2.0)}),
        }
        for long, short, status in ((2.0, 1.0, "passed"), (2.2, 1.5, "failed_correctness"), (1.8, 2.0, "passed"))
    ]
    found = compare_runs.spreads(runs, min_ms=0.010)

    assert set(found["operators"]) == {"a.py"}  # b failed once: it says nothing about repeatability
    assert found["long_operators"]["a.py"] == pytest.approx(0.1)  # 2.0, 2.2, 1.8: sd 0.2 over mean 2.0
    assert [(name, case_id) for name, case_id, _ in found["cases"]] == [("a.py", "long")]  # 1 us cases left out
    assert found["operators"]["a.py"] > found["long_operators"]["a.py"]  # the short case's swing counts there


def test_a_kernel_judged_twice_in_one_run_keeps_its_failure_in_the_summary(tmp_path, capsys, monkeypatch):
    """summarise_reference_kernels.py: the 110-kernel submission judges seven kernels twice; a pass the
    second time must not hide the first judgement's failure (it did, for cublasSgemmBatched_64 in run i)."""
    import json

    summarise = _script("summarise_reference_kernels")

    def entry(status: str) -> dict:
        return {
            "file": "k.py",
            "seconds": 1.0,
            "result": {
                "status": status,
                "reason": "" if status == "passed" else "case x: relative error",
                "cases_passed": 1,
                "cases_total": 2,
                "speedup": 1.0 if status == "passed" else None,
                "case_results": [],
            },
        }

    run = tmp_path / "run.json"
    run.write_text(json.dumps({"results": [entry("failed_correctness"), entry("passed")]}))
    later = tmp_path / "later.json"
    later.write_text(json.dumps({"results": [entry("passed")]}))
    compact = tmp_path / "compact.json"

    for runs, status in (([run], "failed_correctness"), ([run, later], "passed")):  # a later run may recheck
        monkeypatch.setattr("sys.argv", ["summarise", *map(str, runs), "--compact", str(compact)])
        summarise.main()
        assert json.loads(compact.read_text())[0]["status"] == status
    assert "0 of 1 judged kernels passed" in capsys.readouterr().out


def test_the_lock_trace_tells_exclusive_shared_and_idle_time_apart(tmp_path, monkeypatch):
    """KGB_DEVICE_LOCK_TRACE: every hold and release is logged, and scripts/gpu/lock_timeline.py splits a
    run's span into the GPU held alone, shared, and by nobody."""
    trace = tmp_path / "lock.trace"
    monkeypatch.setenv("KGB_DEVICE_LOCK_TRACE", str(trace))
    lock = DeviceLock("cuda", str(tmp_path))
    with lock.shared(time.monotonic() + 5):
        time.sleep(0.05)
    time.sleep(0.05)
    with lock.exclusive(time.monotonic() + 5):
        time.sleep(0.1)
    events = [line.split()[2:] for line in trace.read_text().splitlines()]
    assert events == [
        ["wait", "shared"],
        ["hold", "shared"],
        ["release", "shared"],
        ["wait", "exclusive"],
        ["hold", "exclusive"],
        ["release", "exclusive"],
    ]
    lock_timeline = _script("lock_timeline")
    summary = lock_timeline.timeline(lock_timeline.read_trace(trace))
    assert summary["exclusive_holds"] == 1 and 0.09 <= summary["exclusive_s"] <= 0.5
    assert 0.04 <= summary["shared_s"] <= 0.3 and 0.04 <= summary["idle_no_waiters_s"] <= 0.3
    assert summary["span_s"] == pytest.approx(
        sum(summary[key] for key in ("exclusive_s", "shared_s", "idle_with_waiters_s", "idle_no_waiters_s"))
    )
    assert summary["shared_holds"] == 1 and 40 <= summary["shared_hold_median_ms"] <= 300
    # A timer that waits while two correctness holds finish: that wait is "draining", with its holders.
    rows = [
        (0.0, 1, "hold", "shared"),
        (0.0, 2, "hold", "shared"),
        (1.0, 3, "wait", "exclusive"),
        (2.0, 1, "release", "shared"),
        (3.0, 2, "release", "shared"),
        (3.0, 3, "hold", "exclusive"),
        (4.0, 3, "release", "exclusive"),
    ]
    drained = lock_timeline.timeline(rows)
    assert drained["draining_s"] == 2.0 and drained["mean_holders_while_draining"] == 1.5
    assert drained["shared_s"] == 3.0 and drained["exclusive_s"] == 1.0 and drained["shared_holds"] == 2


# Appended to good/cos_plain.py (its cos renamed _plain_cos): a cos that "compiles" the way Triton does on a
# GPU (the interpreter never compiles): the pre-compile hook, CPU time, the post-compile hook; the second
# call's compile "raises" (no post hook) before its launch.
COMPILING_COS = """
import time
from triton import knobs

CALLS = [0]


def cos(x):
    CALLS[0] += 1
    if CALLS[0] <= 2:
        knobs.runtime.jit_cache_hook(key="simulated")
        time.sleep(0.4)
        if CALLS[0] == 1:
            knobs.runtime.jit_post_compile_hook(key="simulated")
    return _plain_cos(x)
"""


def test_correctness_lends_the_gpu_while_the_sandbox_compiles(warm_forkserver, tmp_path, monkeypatch):
    from conftest import kernel_source, small_cos_record

    from evaluation.judge import JudgeJob
    from evaluation.judge.runner import JudgeOptions, judge_with

    monkeypatch.setenv("KGB_DEVICE_LOCK_DIR", str(tmp_path))
    source = kernel_source("good/cos_plain.py").replace("def cos(", "def _plain_cos(") + COMPILING_COS
    job = JudgeJob(
        operator_id="aten::cos",
        source_code=source,
        chip_slug="cpu-interpreter",
        device_type="cpu",
        tiers=("smoke",),
        time_budget_s=120,
    )
    result = judge_with(
        job, JudgeOptions(spec=small_cos_record(), static_scan=False, device_lock_on_cpu_for_tests=True)
    )

    assert result.status == "passed", result.reason
    breakdown = result.environment["stage_breakdown"]
    # Both windows lent: the one closed by the post-compile hook and the one closed by the next launch.
    assert breakdown["device_lock.lent_while_compiling"] >= 0.7
    assert "device_lock.shared_held" in breakdown
    # The simulated post-compile hook names no compiled kernel, so no launcher was built ahead of the launch
    # (on a GPU each compilation's launcher is built here, while the GPU is still lent: prebuild_launcher).
    assert "sandbox.launchers_lent" not in breakdown
    with DeviceLock("cpu", str(tmp_path)).exclusive(time.monotonic() + 1):
        pass  # nothing left held


def test_building_a_launcher_ahead_never_gets_in_the_way_of_the_compilation_it_follows():
    """prebuild_launcher is an optimisation inside the untrusted sandbox: whatever the hook hands it (another
    Triton's arguments, a kernel it cannot find, no GPU driver), it does nothing and says so, and Triton
    builds the launcher at the launch as it always did."""
    from evaluation.judge.untrusted.gpu_gate import LAUNCHER_SECONDS, prebuild_launcher

    before = LAUNCHER_SECONDS[0]
    assert prebuild_launcher({}) is False
    assert prebuild_launcher({"key": "k", "fn": object(), "compile": {"device": 0}}) is False
    assert LAUNCHER_SECONDS[0] == before


def _recording_sandboxes(tmp_path):
    """A sandbox factory whose sandboxes record, per request: its op, whether the GPU was free when it was
    sent, the GPU events the sandbox reported (each with whether the GPU was free once the judge handled
    it), and whether the GPU was free once the reply was read."""
    import fcntl

    from evaluation.judge.forkserver import shared_forkserver
    from evaluation.judge.sandbox import Sandbox

    probe = DeviceLock("cpu", str(tmp_path))

    def device_free() -> bool:
        try:
            fcntl.flock(probe._fds()[1], fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(probe._fds()[1], fcntl.LOCK_UN)
        return True

    requests = []

    def recording_sandbox(device_type):
        sandbox = Sandbox(device_type, forkserver=shared_forkserver("cpu"))
        request = sandbox.request

        def recording(header, blobs, deadline, *args, on_event=None, **kwargs):
            events = []

            def on(event):
                if on_event is not None:
                    on_event(event)
                events.append((event, device_free()))

            free_when_sent = device_free()
            reply = request(header, blobs, deadline, *args, on_event=on if on_event else None, **kwargs)
            requests.append((header["op"], free_when_sent, events, device_free()))
            return reply

        sandbox.request = recording
        return sandbox

    return recording_sandbox, requests


GATED = (True, [("want_gpu", False), ("gpu_done", True)], True)  # free when sent, held between, free after


def test_a_sandbox_call_holds_the_gpu_only_between_want_gpu_and_gpu_done(warm_forkserver, tmp_path, monkeypatch):
    """Gated requests: the request crosses the pipe before the judge queues for the GPU, and the reply after
    it let go, so large inputs and outputs in transit never keep a waiting timer out."""
    from conftest import kernel_source, small_cos_record

    from evaluation.judge import JudgeJob
    from evaluation.judge.runner import JudgeOptions, judge_with

    monkeypatch.setenv("KGB_DEVICE_LOCK_DIR", str(tmp_path))
    factory, requests = _recording_sandboxes(tmp_path)
    job = JudgeJob(
        operator_id="aten::cos",
        source_code=kernel_source("good/cos_plain.py"),
        chip_slug="cpu-interpreter",
        device_type="cpu",
        tiers=("smoke",),
        time_budget_s=120,
    )
    result = judge_with(
        job, JudgeOptions(spec=small_cos_record(), sandbox_factory=factory, device_lock_on_cpu_for_tests=True)
    )

    assert result.status == "passed", result.reason
    calls = [request for request in requests if request[0] == "call"]
    assert len(calls) == result.cases_total
    assert all(call[1:] == GATED for call in calls), calls
    assert result.environment["stage_breakdown"]["device_lock.shared_held"] > 0


# A gated request made of pieces (two timed cases' sets, their spot copies) with pausing off: one hold; with
# a pause due at once: held for the first case, given back and taken again for the second.
PAUSED = (True, [("want_gpu", False), ("gpu_done", True)] * 2, True)


@pytest.mark.parametrize(("gate_pause_s", "pieces_gated"), [(0.0, GATED), (1e-9, PAUSED)])
def test_timing_loads_and_spot_copies_are_gated_and_the_timed_loops_are_not(
    warm_forkserver, tmp_path, monkeypatch, gate_pause_s, pieces_gated
):
    """Timing's shared steps (shipping the input sets, reading the spot copies back) are gated like calls,
    one request for every case of a chunk; the timed loops run under the exclusive hold, which the gate
    leaves alone. Their device work comes a case at a time: once the sandbox has held the GPU GATE_PAUSE_S
    it gives it back between two cases and asks again, so a timer queued meanwhile waits for one case, not
    the chunk; never before the first piece, never inside a correctness call (one piece), and the verdict is
    the same."""
    from conftest import kernel_source, small_cos_record

    from evaluation.judge import JudgeJob, session
    from evaluation.judge.runner import JudgeOptions, TimingOptions, judge_with

    monkeypatch.setenv("KGB_DEVICE_LOCK_DIR", str(tmp_path))
    monkeypatch.setattr(session, "GATE_PAUSE_S", gate_pause_s)
    factory, requests = _recording_sandboxes(tmp_path)
    job = JudgeJob(
        operator_id="aten::cos",
        source_code=kernel_source("good/cos_plain.py"),
        chip_slug="cpu-interpreter",
        device_type="cpu",
        tiers=("smoke",),
        time_budget_s=120,
        measure_timing=True,
    )
    result = judge_with(
        job,
        JudgeOptions(
            spec=small_cos_record(),
            sandbox_factory=factory,
            device_lock_on_cpu_for_tests=True,
            timing_on_cpu_for_tests=True,
            timing=TimingOptions(sets_per_side=2, min_iterations=4, max_iterations=4, max_timed_cases=2),
        ),
    )

    assert result.status == "passed", result.reason
    by_op = {}
    for op, *rest in requests:
        by_op.setdefault(op, []).append(tuple(rest))
    assert by_op["time_load"] == [pieces_gated]  # both timed cases' sets in one request
    assert by_op["time_spots"] == [pieces_gated]  # every timed case's spots in one request
    assert all(call == GATED for call in by_op["call"])
    # Timed loops: both cases back to back under one exclusive hold (never free), no events.
    assert by_op["time"] == [(False, [], False)] * 2


def test_the_protocol_stage_ships_and_times_its_cases_chunk_by_chunk(warm_forkserver, tmp_path, monkeypatch):
    """Every case of a chunk is drawn under one shared hold, shipped in one request and timed in one
    exclusive hold; a chunk ends at the stage's byte bound (here one case's sets). The first chunk is shipped
    before the device-time stage's sets and timed in that stage's exclusive hold, after its loops."""
    from conftest import kernel_source, small_cos_record

    from evaluation.judge import JudgeJob, timing_protocol
    from evaluation.judge.context import protocol_timing_options
    from evaluation.judge.runner import JudgeOptions, TimingOptions, judge_with

    monkeypatch.setenv("KGB_DEVICE_LOCK_DIR", str(tmp_path))
    job = JudgeJob(
        operator_id="aten::cos",
        source_code=kernel_source("good/cos_plain.py"),
        chip_slug="cpu-interpreter",
        device_type="cpu",
        tiers=("smoke",),
        time_budget_s=120,
        measure_timing=True,
    )

    def judged(bound):
        monkeypatch.setattr(timing_protocol, "chunk_bytes", lambda judgement: bound)
        trace = tmp_path / f"trace-{bound}"
        monkeypatch.setenv("KGB_DEVICE_LOCK_TRACE", str(trace))
        factory, requests = _recording_sandboxes(tmp_path)
        result = judge_with(
            job,
            JudgeOptions(
                spec=small_cos_record(),
                sandbox_factory=factory,
                device_lock_on_cpu_for_tests=True,
                timing_on_cpu_for_tests=True,
                timing=TimingOptions(sets_per_side=2, min_iterations=4, max_iterations=4, max_timed_cases=1),
                protocol_timing=protocol_timing_options(),
            ),
        )
        assert result.status == "passed", result.reason
        assert result.protocol_speedup is not None and result.speedup is not None
        timed_ops = [request[0] for request in requests if request[0] in ("time_load", "time")]
        exclusive_holds = trace.read_text().count(" hold exclusive")
        return timed_ops, exclusive_holds

    protocol_cases = sum(1 for case in small_cos_record().smoke if case.timed)
    assert protocol_cases >= 2
    # The protocol stage's cases in one chunk, loaded first; the device-time stage's one case; both
    # stages' loops in one exclusive hold...
    assert judged(1 << 40) == (["time_load", "time_load", "time", *(["time"] * protocol_cases)], 1)
    # ...or one chunk a case once a case's sets reach the bound: the first rides in the device-time
    # stage's hold, the others take holds of their own.
    assert judged(1) == (
        ["time_load", "time_load", "time", "time", *(["time_load", "time"] * (protocol_cases - 1))],
        protocol_cases,
    )


@pytest.mark.parametrize(
    ("kernel", "status"), [("wrong/segfault.py", "failed_runtime"), ("wrong/infinite_loop.py", "timeout")]
)
def test_a_sandbox_that_dies_or_hangs_inside_its_gpu_hold_leaves_the_gpu_free(
    warm_forkserver, tmp_path, monkeypatch, kernel, status
):
    # The gated hold is the judge's: it ends with the request, however the sandbox ended.
    from conftest import kernel_source, small_cos_record

    from evaluation.judge import JudgeJob
    from evaluation.judge.runner import JudgeOptions, judge_with

    monkeypatch.setenv("KGB_DEVICE_LOCK_DIR", str(tmp_path))
    job = JudgeJob(
        operator_id="aten::cos",
        source_code=kernel_source(kernel),
        chip_slug="cpu-interpreter",
        device_type="cpu",
        tiers=("smoke",),
        time_budget_s=8,
    )
    result = judge_with(
        job, JudgeOptions(spec=small_cos_record(), static_scan=False, device_lock_on_cpu_for_tests=True)
    )

    assert result.status == status, result.reason
    with DeviceLock("cpu", str(tmp_path)).exclusive(time.monotonic() + 1):
        pass  # nothing left held


def test_a_gpu_held_past_the_wait_limit_is_a_retryable_judge_error(warm_forkserver, tmp_path, monkeypatch):
    # Other judgements kept the device (here: a timer that never lets go) past the judgement's wait limit:
    # nothing is known about the kernel, so the result is an error the worker may queue again.
    from conftest import kernel_source, small_cos_record

    from evaluation.judge import JudgeJob
    from evaluation.judge.runner import JudgeOptions, judge_with

    monkeypatch.setenv("KGB_DEVICE_LOCK_DIR", str(tmp_path))
    context = multiprocessing.get_context("fork")
    ready, release = context.Event(), context.Event()
    holder = context.Process(target=_hold_exclusive, args=(str(tmp_path), ready, release, "cpu"))
    holder.start()
    try:
        assert ready.wait(30)
        job = JudgeJob(
            operator_id="aten::cos",
            source_code=kernel_source("good/cos_plain.py"),
            chip_slug="cpu-interpreter",
            device_type="cpu",
            tiers=("smoke",),
            time_budget_s=60,
            device_wait_limit_s=0.5,
        )
        result = judge_with(job, JudgeOptions(spec=small_cos_record(), device_lock_on_cpu_for_tests=True))
    finally:
        release.set()
        holder.join(30)
    assert (result.status, result.retryable) == ("error", True)
    assert "held the GPU for over 0.5 s" in result.reason


def test_values_drawn_on_a_generation_device_come_back_on_the_cpu_and_follow_the_seed():
    from evaluation.catalog.inputs import generate_on, make_tensor

    def draw(device):
        with generate_on(device):
            return make_tensor([64, 8], "float16", torch.Generator().manual_seed(3), layout="transposed")

    on_cpu, elsewhere = draw(None), draw(torch.device("cpu"))
    assert on_cpu.device.type == elsewhere.device.type == "cpu"
    assert on_cpu.shape == elsewhere.shape == (64, 8) and elsewhere.stride() == (1, 64)
    assert torch.equal(elsewhere, draw(torch.device("cpu")))  # same seed, same device: same values
    assert not torch.equal(on_cpu, elsewhere)  # a derived generator, not the caller's own stream


def test_random_permutations_are_permutations_on_any_generation_device():
    from evaluation.catalog.inputs import generate_on, random_permutations

    for device in (None, torch.device("cpu")):
        with generate_on(device):
            permutations = random_permutations([4, 9, 3], 1, torch.Generator().manual_seed(2))
        assert permutations.device.type == "cpu" and permutations.dtype == torch.int64
        assert torch.equal(permutations.sort(dim=1).values, torch.arange(9).view(1, 9, 1).expand(4, 9, 3))


@pytest.mark.parametrize("builder", ["randn", "rand", "randint"])
def test_the_vllm_records_bulk_draws_follow_the_generation_device_too(builder):
    # They drew on the host inside the judge's GPU hold (up to 1.8 s a case): now where the judge says.
    from evaluation.catalog.inputs import generate_on
    from evaluation.catalog.vllm import common

    def draw(device):
        with generate_on(device):
            generator = torch.Generator().manual_seed(5)
            if builder == "randint":
                return common.randint(0, 1000, [32, 16], generator, dtype=torch.int32)
            return getattr(common, builder)([32, 16], torch.bfloat16, generator)

    on_cpu, elsewhere = draw(None), draw(torch.device("cpu"))
    assert on_cpu.device.type == elsewhere.device.type == "cpu"
    assert on_cpu.dtype == elsewhere.dtype and on_cpu.shape == elsewhere.shape == (32, 16)
    assert torch.equal(elsewhere, draw(torch.device("cpu")))  # the seed decides the values
    assert not torch.equal(on_cpu, elsewhere)  # drawn from the generation device's generator


def test_sending_to_a_dead_or_stalled_sandbox_ends_cleanly():
    """A sandbox that died between calls (seen on the H200: a BrokenPipeError became an infrastructure error)
    reads as PeerClosed, which the judge turns into failed_runtime; one that stops reading times out."""
    import os

    from evaluation.judge import wire

    read_end, write_end = os.pipe()
    os.close(read_end)
    with pytest.raises(wire.PeerClosed):
        wire.send(write_end, {"op": "call"}, [b"x" * 1024], time.monotonic() + 5)
    os.close(write_end)

    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    started = time.monotonic()
    with pytest.raises(wire.ChannelTimeout):  # nobody reads: the pipe fills, the deadline passes
        wire.send(write_end, {"op": "call"}, [b"x" * (8 << 20)], time.monotonic() + 0.3)
    assert 0.25 < time.monotonic() - started < 5
    os.close(read_end)
    os.close(write_end)


def test_a_spare_sandbox_warms_up_before_its_job_and_then_judges_as_any_other(warm_forkserver):
    """GPU judgements take a spare forked during the previous one (pool.shared_spare), which has initialised
    its device and compiled a kernel of ours by the time it says it is ready. Here the same plumbing on the
    interpreter: the spare warms, then serves exactly one job, and the next job gets a new spare."""
    from conftest import kernel_source, small_cos_record

    from evaluation.judge import JudgeJob
    from evaluation.judge.forkserver import shared_forkserver
    from evaluation.judge.pool import SandboxPool
    from evaluation.judge.runner import JudgeOptions, judge_with

    with SandboxPool("cpu", size=1, forkserver=shared_forkserver("cpu"), prewarm=True) as pool:
        results = [
            judge_with(
                JudgeJob(
                    operator_id="aten::cos",
                    source_code=kernel_source("good/cos_plain.py"),
                    chip_slug="cpu-interpreter",
                    device_type="cpu",
                    time_budget_s=120,
                ),
                JudgeOptions(spec=small_cos_record(), sandbox_factory=pool.acquire),
            )
            for _ in range(2)
        ]
    assert [result.status for result in results] == ["passed", "passed"], [r.reason for r in results]
    assert all(result.environment["sandbox"]["prewarm_s"] > 0 for result in results)
    assert results[0].environment["sandbox"]["launcher"] == "forkserver"


def test_shared_spares_hand_out_a_fresh_sandbox_each_time(warm_forkserver):
    from evaluation.judge.forkserver import shared_forkserver
    from evaluation.judge.pool import shared_spare

    server = shared_forkserver("cpu")
    first, second = shared_spare("cpu", server), shared_spare("cpu", server)
    try:
        assert first is not second and first.token != second.token
        # Two live sandboxes never share an identity (contained: a slot uid each) nor a folder.
        assert (first.lease.uid != second.lease.uid) if first.contained else (first.workdir != second.workdir)
        assert first.wait_ready(time.monotonic() + 60).prewarm_s > 0
    finally:
        first.close()
        second.close()


@pytest.mark.skipif(__import__("os").geteuid() != 0, reason="only root may raise a priority again")
def test_a_sandbox_runs_niced_and_its_timed_loops_ahead(warm_forkserver):
    """GPU judges nice their sandbox for correctness and compiling, and raise it for the timed loops
    (session.CORRECTNESS_NICE / TIMING_NICE): the priorities land on the sandbox's process group."""
    import os

    from evaluation.judge.sandbox import Sandbox
    from evaluation.judge.session import CORRECTNESS_NICE, TIMING_NICE

    sandbox = Sandbox("cpu", forkserver=warm_forkserver)
    try:
        sandbox.wait_ready(time.monotonic() + 120)
        assert sandbox.set_priority(CORRECTNESS_NICE)
        assert os.getpriority(os.PRIO_PROCESS, sandbox.process.pid) == CORRECTNESS_NICE
        assert sandbox.set_priority(TIMING_NICE)
        assert os.getpriority(os.PRIO_PROCESS, sandbox.process.pid) == TIMING_NICE
    finally:
        sandbox.close()


def test_each_judge_keeps_less_device_memory_cached_the_more_share_the_gpu():
    from evaluation.judge.context import SANDBOX_KEEP_ALIVE_BYTES, TRUSTED_CACHE_BYTES, device_memory_budget

    gib = 1024**3
    # Alone, or on a device that cannot say its size: the defaults.
    assert device_memory_budget(None, 24) == (TRUSTED_CACHE_BYTES, SANDBOX_KEEP_ALIVE_BYTES)
    assert device_memory_budget(140 * gib, 1) == (TRUSTED_CACHE_BYTES, SANDBOX_KEEP_ALIVE_BYTES)
    # 16 judges on an H200: a little under the defaults (2 and 4 GiB).
    trusted16, sandbox16 = device_memory_budget(140 * gib, 16)
    assert 1.5 * gib < trusted16 < 2 * gib and 2 * gib < sandbox16 < 4 * gib
    # 24 judges: both shrink, and every judge's allowance (contexts included) fits the device together.
    trusted24, sandbox24 = device_memory_budget(140 * gib, 24)
    assert trusted24 < trusted16 and sandbox24 < sandbox16
    assert 24 * (trusted24 + sandbox24 + 3 * 512 * 1024**2) < 140 * gib
    # Never below a floor a single large case needs.
    assert device_memory_budget(16 * gib, 64) == (256 * 1024**2, 512 * 1024**2)


def test_a_device_takes_no_more_judges_at_once_than_its_memory_holds(monkeypatch):
    """16 judges asked for: all 16 on an H200's 139 GiB, 9 on an H100's 79 GiB (16 ran three judgements out of
    memory there, 13 twelve), all of them where the memory is unknown (the CPU interpreter), never none."""
    from evaluation.judge.context import judges_for_device

    gib = 1024**3
    monkeypatch.delenv("KGB_DEVICE_BYTES_PER_JUDGE", raising=False)
    assert judges_for_device(16, 139 * gib) == 16
    assert judges_for_device(16, 79 * gib) == 9
    assert judges_for_device(16, None) == 16
    assert judges_for_device(4, 2 * gib) == 1
    assert judges_for_device(0, 139 * gib) == 1
    monkeypatch.setenv("KGB_DEVICE_BYTES_PER_JUDGE", str(4 * gib))  # a host whose grids are smaller
    assert judges_for_device(24, 79 * gib) == 19


def test_the_agreement_split_keeps_cases_where_do_bench_disagreed_with_itself_apart():
    """scripts/gpu/agreement_split.py: per operator, the judge's and do_bench's second run's ratios to do_bench
    over every case and over the steady ones (do_bench's two runs within 5 %), and over every steady case how
    many the judge was within 10 % of."""
    split = _script("agreement_split")

    def case(judge, do_bench, again):
        return {"judge": judge, "do_bench": do_bench, "do_bench_again": again}

    data = {
        "protocol_dobench": [
            # Steady on both cases; the judge within 10 % on the first only.
            {"operator": "aten::a", "cases": [case(1.05, 1.0, 1.01), case(0.5, 1.0, 0.99)]},
            # do_bench flipped between its runs on the second case (the launch-bound race): not steady.
            {"operator": "aten::b", "cases": [case(2.0, 2.0, 2.0), case(0.2, 0.2, 1.0), case(None, 1.0, 1.0)]},
        ]
    }
    rows, steady_total, steady_within = split.split_by_steadiness(data)
    a, b = rows
    assert (a["cases"], a["steady"]) == (2, 2)
    assert a["judge"] == pytest.approx((1.05 * 0.5) ** 0.5)
    assert (b["cases"], b["steady"]) == (2, 1)  # a case without a judge figure is left out
    assert b["self"] == pytest.approx(5**0.5) and b["steady_self"] == pytest.approx(1.0)
    assert b["steady_judge"] == pytest.approx(1.0)
    assert (steady_total, steady_within) == (3, 2)


def test_protocol_repeatability_compares_each_figure_by_the_operators_launch_bound_share(tmp_path):
    """scripts/gpu/protocol_repeatability.py: between two runs, each operator's device-time and protocol
    speedups' relative change, the protocol's grouped by class (cuBLAS; mostly launch-bound; the rest) read
    from the run with launch-bound marks; a repeat judged in the same run counts once, a failed kernel not."""
    import gzip
    import json

    repeat = _script("protocol_repeatability")

    def kernel(name, device, protocol, marks=None, status="passed"):
        cases = [{"protocol_timing": {"launch_bound": mark} if mark is not None else {}} for mark in marks or [None]]
        return {
            "file": name,
            "result": {"status": status, "speedup": device, "protocol_speedup": protocol, "case_results": cases},
        }

    old = [
        kernel("aten__cos.py", 1.0, 0.2),
        kernel("aten__mm.py", 0.5, 0.5),
        kernel("cublas__cublasSaxpy_v2.py", 0.8, 0.8),
        kernel("aten__sum.py", 2.0, 1.0, status="failed_correctness"),
    ]
    new = [
        kernel("aten__cos.py", 1.01, 0.4, marks=[True] * 9 + [False]),  # 90 % launch-bound, doubled
        kernel("aten__cos.py", 5.0, 5.0, marks=[False]),  # its repeat: not counted
        kernel("aten__mm.py", 0.5, 0.56, marks=[True, False]),  # half launch-bound: "other"
        kernel("cublas__cublasSaxpy_v2.py", 0.8, 0.84, marks=[False]),
        kernel("aten__sum.py", 2.0, 1.0, marks=[False]),
    ]
    paths = []
    for index, results in enumerate((old, new)):
        path = tmp_path / f"run{index}.json.gz"
        path.write_bytes(gzip.compress(json.dumps({"results": results}).encode()))
        paths.append(path)
    runs = [repeat.load(path) for path in paths]
    assert runs[0]["aten__cos.py"]["launch_bound"] is None and runs[1]["aten__cos.py"]["launch_bound"] == 9
    kinds = repeat.classes(runs)
    assert kinds == {
        "aten__cos.py": "launch-bound",
        "aten__mm.py": "other",
        "cublas__cublasSaxpy_v2.py": "cublas",
        "aten__sum.py": "other",
    }
    found = {label: repeat.summary(changes) for label, changes in repeat.moves(runs[0], runs[1], kinds).items()}
    assert found["protocol launch-bound"] == (1, pytest.approx(1.0), 0)
    assert found["protocol other"] == (1, pytest.approx(0.12), 0)
    assert found["protocol cublas"] == (1, pytest.approx(0.05), 1)
    operators, median, within = found["device"]
    assert (operators, within) == (3, 3) and median == pytest.approx(0.0)
    with pytest.raises(SystemExit):
        repeat.classes(runs[:1])  # no marks anywhere: nothing to classify by


def test_the_agreement_split_compares_only_cases_whose_every_reading_outlasts_a_flush():
    """scripts/gpu/agreement_split.py's second split: a case is past the launch race where both timers read
    both sides at least one L2 flush long; per operator the ratio of the two speedups over those cases."""
    split = _script("agreement_split")

    def case(judge_us, do_bench_us):
        (judge_ref, judge_cand), (bench_ref, bench_cand) = judge_us, do_bench_us
        return {
            "judge": judge_ref / judge_cand,
            "do_bench": bench_ref / bench_cand,
            "judge_reference_ms": judge_ref / 1000,
            "judge_candidate_ms": judge_cand / 1000,
            "do_bench_reference_ms": bench_ref / 1000,
            "do_bench_candidate_ms": bench_cand / 1000,
        }

    data = {
        "protocol_dobench": [
            # A long case within 4 %, and a launch-bound one (the candidate read 4 us by one timer, 40 by the
            # other: the race) left out.
            {"operator": "aten::mm", "cases": [case((200, 100), (208, 100)), case((40, 4), (40, 40))]},
            # Only launch-bound cases: nothing to compare.
            {"operator": "aten::cos", "cases": [case((5, 4), (30, 50))]},
            # A long case 20 % apart.
            {"operator": "aten::sum", "cases": [case((300, 300), (300, 250))]},
        ]
    }
    rows, compared, agree = split.past_the_race(data, flush_us=66)
    mm, cos, total = rows
    assert (mm["cases"], mm["past"]) == (2, 1) and mm["ratio"] == pytest.approx(2.0 / 2.08)
    assert (cos["past"], cos["ratio"]) == (0, None)
    assert total["ratio"] == pytest.approx(1 / 1.2)
    assert (compared, agree) == (2, 1)


def test_the_loop_variants_read_the_kernels_cpulist_format():
    """scripts/gpu/do_bench_loop_variants.py pins a process near the GPU from its PCI device's local_cpulist
    (``0-3,8,10-11``) and says which CPU it runs on (/proc/self/stat)."""
    import os

    variants = _script("do_bench_loop_variants")
    assert variants.parse_cpulist("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11]
    assert variants.parse_cpulist("") == []
    assert variants.current_cpu() in os.sched_getaffinity(0)


def test_the_launch_race_table_reads_each_child_against_the_least_any_child_read(capsys):
    """scripts/gpu/launch_race_by_cpu.py: per child and operator, each timer's candidate microseconds over
    the least do_bench read for that case in any child (1.0: the kernel alone; ~10: the host's launch path),
    then each loop variant against do_bench in the same child."""
    race = _script("launch_race_by_cpu")

    def child(cpu, do_bench_us, loop_us, ahead_us, host_us):
        rows = []
        for index, case in enumerate(("small", "large")):
            row = {"operator": "aten::clone", "case": case, "do_bench_us": [do_bench_us[index], 4.0]}
            for key in race.LOOP_VARIANTS:
                row[key] = [(ahead_us if key == "head_start_us" else loop_us)[index], 4.0]
            rows.append({**row, "host_us": host_us})
        return {"cpu_start": cpu, "cpu_end": cpu, "flush_us": 66.0, "seconds": 9.0, "pinned": None, "rows": rows}

    race.summarise(
        [
            child(0, [3.0, 12.0], [3.0, 12.0], [3.0, 12.0], 31.0),
            child(1, [30.0, 12.0], [30.0, 24.0], [3.0, 12.0], 58.0),
        ],
        ["aten::clone"],
    )
    out = capsys.readouterr().out
    lines = [line.split() for line in out.splitlines() if line[:1].isdigit()]
    # child, pin, cpu, flush, host, then do_bench's figure and each loop variant's (the head start's third)
    assert lines[0][4:] == ["31.0", "1.00", "1.00", "1.00", "1.00", "1.00"]
    # sqrt(10 x 1) for do_bench, sqrt(10 x 2) for the loops, the kernel alone behind the head start
    assert lines[1][4:] == ["58.0", "3.16", "4.47", "1.00", "4.47", "4.47"]
    summary = {line[:13].strip(): line[13:].split() for line in out.splitlines() if " of 2 " in line}
    # kernel alone "of" figures, then the candidate's us within 10 % of do_bench's / above / below, then the
    # speedup's. The loop read 2x do_bench's us on child 1's large case (sqrt 2: above; its speedup below);
    # the head start read the kernel alone there, 0.32 of do_bench's us (below; its speedup above).
    assert summary["do_bench"] == ["1", "of", "2", "2", "0", "0", "2", "0", "0"]
    assert summary["judge loop"] == ["1", "of", "2", "1", "1", "0", "1", "0", "1"]
    assert summary["head start"] == ["2", "of", "2", "1", "0", "1", "1", "1", "0"]
    assert summary["untimed 25"] == summary["judge loop"]


def test_a_loop_variant_changes_the_judge_s_loop_only_while_it_is_on():
    race = _script("launch_race_by_cpu")
    module = types.SimpleNamespace(_batch=lambda *args, **kwargs: "batch", STEADY_STATE_CALLS=5)
    original = module._batch
    spins = []
    with mock.patch("torch.cuda._sleep", spins.append):
        with race.loop_variant(module, 0.3, 25, cycles_per_ms=1000.0):
            assert module.STEADY_STATE_CALLS == 25
            assert module._batch("thunk") == "batch" and spins == [300]  # spun first, then the loop's batch
        assert module._batch is original and module.STEADY_STATE_CALLS == 5
        with race.loop_variant(module, 0.0, None, cycles_per_ms=1000.0):
            assert module._batch is original and module.STEADY_STATE_CALLS == 5


def test_the_gate_pauses_only_between_pieces_and_only_once_held_long_enough():
    """GpuGate.next_piece: nothing before the first piece, a pause (gpu_done, then want_gpu and its wait)
    between two pieces once the GPU has been held pause_s, none when pause_s is 0 or not yet reached."""
    from evaluation.judge.untrusted.gpu_gate import GpuGate

    class Harness:
        backend = type("Backend", (), {"synchronize": staticmethod(lambda: None)})()

        def __init__(self):
            self.said = []

        def reply(self, message, blobs=()):
            self.said.append(message.event)

        def report_and_wait(self, event):
            self.said.append(event)

    def pieces(pause_s, count, held_s=0.0):
        harness = Harness()
        gate = GpuGate(harness)
        gate.open(True, pause_s)
        for _ in range(count):
            gate.opened_at -= held_s  # as if the previous piece had held the GPU that long
            gate.next_piece()
        gate.close()
        return harness.said

    assert pieces(0.05, 1, held_s=1.0) == ["want_gpu", "gpu_done"]  # one piece: never paused
    assert pieces(0.05, 3, held_s=1.0) == ["want_gpu", "gpu_done"] * 3
    assert pieces(0.05, 3, held_s=0.0) == ["want_gpu", "gpu_done"]  # not held long enough
    assert pieces(0.0, 3, held_s=1.0) == ["want_gpu", "gpu_done"]  # pausing switched off
    closed = Harness()
    GpuGate(closed).next_piece()  # a request without a gate: nothing said
    assert closed.said == []

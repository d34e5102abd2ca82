"""One kernel per EXPLOITS.md class: each is refused with the right status and the right check named.

Cheats the static scan stops are also run with the scan switched off (a test-only option) where a run-time
defence exists, to prove that layer holds on its own.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch
from conftest import check_outcomes, kernel_source, small_cos_record

from evaluation.catalog.spec import Case
from evaluation.judge.context import protocol_timing_options
from evaluation.judge.job import JudgeJob
from evaluation.judge.runner import JudgeOptions, TimingOptions, judge_with

# Kernels that name what the old static scan refused, with the rule that notes them and the verdict what they
# do earns (the same with the scan on or off: a name convicts nothing). "passed" ones only name a module (an
# import the operating system's containment makes harmless) and compute honestly in Triton.
BY_BEHAVIOUR = [
    ("torch_cos.py", "torch_call", "rejected", "computed outside Triton: aten::cos"),  # 1: torch op
    ("method_cos.py", "tensor_method", "rejected", "computed outside Triton: aten::cos"),  # 1: tensor method
    ("alias_cos.py", "torch_call", "rejected", "computed outside Triton: aten::cos"),  # 1: f = torch.cos
    ("getattr_cos.py", "banned_builtin", "rejected", "computed outside Triton: aten::cos"),  # 1: built name
    ("dunder_import.py", "banned_builtin", "rejected", "computed outside Triton: aten::cos"),  # 1: __import__
    ("torch_ops_aten.py", "torch_call", "rejected", "computed outside Triton: aten::cos"),  # 1: torch.ops.aten
    ("matmul_operator.py", "matmul_operator", "rejected", "computed outside Triton: aten::add.Tensor"),  # 1: @
    ("fallback_try_except.py", "torch_call", "rejected", "computed outside Triton: aten::cos"),  # 2: fallback
    ("host_math_ghost.py", "tensor_method", "rejected", "case cos["),  # 1/2: host math (ghost replay)
    ("file_write.py", "banned_builtin", "passed", "all 3 cases passed"),  # 7/17: its own private tmpfs
    ("proc_read.py", "banned_builtin", "failed_runtime", "raised: PermissionError"),  # 13/17: /proc
    ("spawn_thread.py", "import", "rejected", "the kernel's process used kgb.thread.start"),  # 9: thread
    ("patch_timer.py", "import", "rejected", "harness integrity: time.perf_counter was replaced"),  # 11
    ("patch_assert_close.py", "import", "rejected", "harness integrity: torch.testing.assert_close"),  # 11
    ("patch_synchronize.py", "attribute_store", "rejected", "harness integrity: torch.cuda.synchronize"),  # 11
    ("patch_launch_hook.py", "import", "rejected", "harness integrity: JITFunction.run"),  # 11
    ("forge_result_pipe.py", "import", "rejected", "the result channel was tampered with"),  # 12
    # 12: a forged reply whose header decodes but whose tensors do not (a view past its blob)
    ("forge_corrupt_tensors.py", "import", "rejected", '[-2.0,2.0],"shape":[33]}]: tensor view runs past its storage'),
    ("import_os.py", "import", "passed", "all 3 cases passed"),  # 9/17: contained by the OS
    ("import_subprocess.py", "import", "passed", "all 3 cases passed"),  # 9/17
    ("import_socket.py", "import", "passed", "all 3 cases passed"),  # 9/17: no network in the sandbox
    ("import_ctypes.py", "import", "passed", "all 3 cases passed"),  # 1: ctypes, unused
    ("import_importlib.py", "import", "passed", "all 3 cases passed"),  # dynamic imports
    ("tensor_subclass.py", "torch_subclass", "rejected", "output is not a plain tensor"),  # 10
    ("env_secret.py", "import", "failed_runtime", "raised: RuntimeError: ENVIRONMENT="),  # 14/17: no secrets
    ("stream_hide.py", "torch_call", "failed_runtime", "torch.cuda.Stream"),  # 9: no CUDA stream on the CPU
    ("gc_scan.py", "import", "rejected", "the kernel's process used gc.get_objects"),  # 13: the heap is closed
    # The round-7 red team's (scan off, every one passed or ended as our error before its defence):
    # 1: host math through Tensor.numpy(); within the budget (the first case) the array a twin replay hands
    # back is a copy, so what numpy computes in it never reaches the twin Triton reads next.
    ("numpy_host_math_triton_copy.py", "import", "failed_correctness", "failed on another draw of its inputs"),
    ("fork_child_compute.py", "import", "rejected", "the kernel's process used os.fork"),  # 1/9: unaudited copy
    ("ctypes_read_data_ptr.py", "import", "rejected", "the kernel's process used ctypes.cdata"),  # 1: raw memory
    # 1/2: torch with the dispatch mode popped or the Python key excluded, the ghost replay told apart by a
    # marker kernel's value read back (a replay reads the real call's values back)
    ("disable_dispatch_modes_marker_ghost.py", "torch_call", "rejected", "still correct with every Triton launch"),
    ("exclude_python_key_marker_ghost.py", "torch_call", "rejected", "still correct with every Triton launch"),
    ("widen_allowed_aten.py", "import", "rejected", "guard.ALLOWED_ATEN was replaced"),  # 11: the policy
    ("patch_harness_run_once.py", "import", "rejected", "Harness._run_once was replaced"),  # 11/12: evidence
    ("fake_jitfunction_self.py", "import", "failed_runtime", "not a Triton kernel"),  # 1: a paused stand-in
    ("custom_op_named_clone.py", "torch_call", "rejected", "computed outside Triton: aten::cos"),  # 1: its body
    ("aten_overload_computes.py", "torch_call", "rejected", "torch.library in namespace aten"),  # 1: aten::x.y
    ("aten_kernel_replaced.py", "torch_call", "rejected", "torch.library in namespace aten"),  # 1: a CPU kernel
    ("gc_callback_after_the_call.py", "import", "rejected", "harness integrity: gc.callbacks was changed"),  # 1
    # The twin replay (guard.Twins): Triton reads another draw, so work done where Triton is not gives another
    # answer, whether the audit was evaded with the judge's source in hand or without it
    ("audit_switched_off.py", "import", "rejected", "the work was done outside Triton"),  # 1/11: STATE flipped
    ("ghost_told_by_time.py", "torch_call", "rejected", "the work was done outside Triton"),  # 1/2: a timed marker
    ("ghost_told_by_kernel_body.py", "torch_call", "rejected", "the work was done outside Triton"),  # 1/2
    ("huge_int_reply.py", "import", "rejected", "header is not JSON this side reads"),  # 12: not our error
    ("kernel_body_torch.py", "torch_in_kernel", "passed", "all 3 cases passed"),  # torch in a kernel never launched
]


# Host math on a buffer a Triton kernel filled: in the twin replay Triton wrote only the buffer's twin, so the
# host computed from what the buffer held before, the real call's stale values where the allocator handed the
# same memory back (the call's own answer: rejected) or anything else (failed on another draw).
FROM_UNWRITTEN_MEMORY = ["tensorbase_numpy_host_math.py", "subprocess_computes.py"]
# The round-8 and round-9 red teams' ways to tell a twin replay from the real call, each then computing
# with torch unaudited outside it: a tensor's address against its storage's, a pointer a Triton kernel
# stored against data_ptr(), a marker Triton wrote read through numpy at data_ptr(). Every address the call
# can learn is a twin's in a twin replay, so none differs, and the unaudited work shows there.
FROM_UNWRITTEN_MEMORY += [
    "twin_told_by_storage_address.py",
    "twin_told_by_revealed_pointer.py",
    "twin_told_by_numpy_marker.py",
]
# torch laid over a bare address (data_ptr(), or a pointer a Triton kernel stored and the wrapper read
# back): at a twin's address it would follow the twins.
RAW_MEMORY = ["raw_memory_storage_at_data_ptr.py", "raw_memory_storage_at_revealed_pointer.py"]
# numpy's __array_interface__ takes a bare address, and numpy has no hook to refuse it. On a GPU the address is
# device memory, which numpy cannot read; on the CPU interpreter a twin replay runs each launch on the twins
# and again on the real memory (guard.Twins, time_shared), so host math between launches reads the call's own
# inputs, and what it writes there never reaches the twins.
NUMPY_RAW_MEMORY = [
    "raw_memory_numpy_at_data_ptr.py",
    "raw_memory_numpy_at_revealed_pointer.py",
    "raw_memory_numpy_into_from_numpy.py",
    "raw_memory_numpy_past_a_budgeted_read.py",
]


@pytest.mark.parametrize("scan", ["on", "off"])
@pytest.mark.parametrize("name", NUMPY_RAW_MEMORY)
def test_numpy_at_a_bare_address_fails_the_twin_replay_on_the_interpreter(run_judge, name, scan):
    result = run_judge(f"cheats/{name}", static_scan=scan == "on")

    # The answer for the call's own inputs is "work done outside Triton"; a mix of them and what the kernels
    # left fails on the twins' draw.
    assert (result.status, check_outcomes(result).get("twin_replay")) in {
        ("rejected", "failed"),
        ("failed_correctness", None),
    }, (result.status, result.reason)
    assert "the work was done outside Triton" in result.reason or "failed on another draw" in result.reason


@pytest.mark.xfail(
    strict=True, reason="open: a kernel written against the guard's source reads the twin replay's map (docs/judge.md)"
)
def test_a_kernel_that_reads_the_twin_replays_own_state_is_refused(run_judge):
    assert run_judge("cheats/twin_replay_read_from_the_guard.py", static_scan=False).status != "passed"


@pytest.mark.parametrize("scan", ["on", "off"])
@pytest.mark.parametrize("name", FROM_UNWRITTEN_MEMORY)
def test_host_math_on_what_triton_wrote_fails_the_twin_replay(run_judge, name, scan):
    result = run_judge(f"cheats/{name}", static_scan=scan == "on")

    assert (result.status, check_outcomes(result).get("twin_replay")) in {
        ("rejected", "failed"),
        ("failed_correctness", None),
    }, (result.status, result.reason)
    assert "the work was done outside Triton" in result.reason or "failed on another draw" in result.reason


@pytest.mark.parametrize("scan", ["on", "off"])
@pytest.mark.parametrize(("name", "rule", "status", "reason"), BY_BEHAVIOUR)
def test_a_cheat_is_judged_by_what_it_does_with_the_scan_on_or_off(run_judge, name, rule, status, reason, scan):
    result = run_judge(f"cheats/{name}", static_scan=scan == "on")

    assert result.status == status
    assert reason in result.reason
    if scan == "on":
        outcome = next(check for check in result.checks if check.name == "static_scan")
        assert outcome.outcome == "noted" and f"[{rule}]" in outcome.detail


def test_only_a_file_that_does_not_parse_fails_the_scan(run_judge):
    result = run_judge("", source="def cos(x:\n    return x\n")

    assert result.status == "failed_compile" and result.reason.startswith("syntax error: ")
    assert "process_start" not in result.stage_seconds  # no sandbox was started


def test_torch_run_inside_an_interpreted_kernel_body_is_caught_by_the_audit(run_judge):
    # Under the CPU interpreter a jit body is plain Python; launches there stay audited.
    result = run_judge("cheats/kernel_body_torch_global.py")

    assert result.status == "rejected"
    assert result.reason == "computed outside Triton: aten::cos (inside a kernel, under the CPU interpreter)"


def test_reading_a_whole_tensor_back_to_the_host_is_over_the_budget(run_judge):
    spec = dataclasses.replace(
        small_cos_record(), smoke=(Case("cos", {"shape": [300], "dtype": "float32", "range": [-2.0, 2.0]}),)
    )
    result = run_judge("cheats/host_reads_item.py", spec=spec)

    assert result.status == "rejected"
    assert result.reason == "computed outside Triton: host reads of more than 64 tensor elements in one call"


def test_reading_back_one_value_triton_computed_is_honest(run_judge):
    result = run_judge("good/cos_readback.py")

    assert (result.status, result.cases_passed) == ("passed", 3)
    assert check_outcomes(result)["static_scan"] == "passed"  # one element read back: not even named


def _runtime(run_judge, name, **kwargs):
    return run_judge(f"cheats/{name}", static_scan=False, **kwargs)


def test_torch_compute_is_caught_by_the_dispatch_audit(run_judge):
    result = _runtime(run_judge, "torch_cos.py")

    assert (result.status, result.reason) == ("rejected", "computed outside Triton: aten::cos")
    assert check_outcomes(result)["dispatch_audit"] == "failed"
    assert check_outcomes(result)["static_scan"] == "skipped"


def test_compute_that_starts_only_in_timing_is_caught_by_the_timed_audit(warm_forkserver):
    # Timed calls run under the dispatch audit as correctness calls do (the stream hold before each timed
    # call would otherwise hide work done elsewhere). Host-clock timing on the interpreter.
    spec = dataclasses.replace(
        small_cos_record(),
        smoke=(
            Case("cos", {"shape": [], "dtype": "float32", "range": [-2.0, 2.0]}),
            Case("cos", {"shape": [], "dtype": "float16", "range": [-2.0, 2.0]}),
        ),
    )
    job = JudgeJob(
        "aten::cos", kernel_source("cheats/compute_in_timing.py"), "cpu-interpreter", "cpu", measure_timing=True
    )
    result = judge_with(
        job,
        JudgeOptions(
            spec=spec,
            static_scan=False,
            timing_on_cpu_for_tests=True,
            timing=TimingOptions(min_iterations=12, max_iterations=12),
        ),
    )

    assert result.status == "rejected"
    assert result.reason.startswith("timing case cos[") and "computed outside Triton: aten::cos" in result.reason
    assert check_outcomes(result)["dispatch_audit"] == "failed"


def _judge_timed_one_case_cos(kernel, static_scan=False):
    """``kernel`` judged on the interpreter with both timing stages on (host-clock "events"), on one cos case
    of 300 values: the set-up of the unwatched-call tests below."""
    spec = dataclasses.replace(
        small_cos_record(), smoke=(Case("cos", {"shape": [300], "dtype": "float32", "range": [-2.0, 2.0]}),)
    )
    job = JudgeJob("aten::cos", kernel_source(kernel), "cpu-interpreter", "cpu", measure_timing=True)
    return judge_with(
        job,
        JudgeOptions(
            spec=spec,
            static_scan=static_scan,
            timing_on_cpu_for_tests=True,
            timing=TimingOptions(min_iterations=4, max_iterations=4),
            protocol_timing=protocol_timing_options(),
        ),
    )


@pytest.mark.parametrize("scan", ["on", "off"])
def test_a_kernel_that_computes_outside_triton_only_when_unwatched_is_refused_by_the_protocol_stage(
    warm_forkserver, scan
):
    # The protocol stage times the latency a caller sees, with none of the judge's hooks inside the call, so
    # a kernel can tell it is not audited there. Whatever it does then, it cannot do it faster than the
    # audited device time of the same case: a caller's window holds that work and more.
    result = _judge_timed_one_case_cos("cheats/fast_when_unwatched.py", static_scan=scan == "on")

    assert result.status == "rejected"
    assert result.reason.startswith("timing case cos[") and "it does less work when it is not watched" in result.reason
    assert check_outcomes(result)["timing_crosscheck"] == "failed"
    assert check_outcomes(result)["dispatch_audit"] == "passed"  # honest wherever it was audited


@pytest.mark.parametrize("scan", ["on", "off"])
def test_a_kernel_that_does_part_of_the_work_when_unwatched_fails_the_protocol_stage_s_spot_check(
    warm_forkserver, scan
):
    # Twice as fast unwatched is above the unwatched check's floor (and on the interpreter, whose audit slows
    # audited calls, far above it), so only its output gives it away: the protocol stage spot-checks one call
    # on a few random cases of its grid (here the only one).
    result = _judge_timed_one_case_cos("cheats/partial_when_unwatched.py", static_scan=scan == "on")

    assert result.status == "rejected", result.reason
    assert result.reason.startswith("timing case cos[")
    assert "in the protocol stage: a timed call's output was wrong" in result.reason
    assert check_outcomes(result)["timing_spot_check"] == "failed"
    assert check_outcomes(result)["dispatch_audit"] == "passed"  # honest wherever it was audited


@pytest.mark.parametrize("marked_host_bound", [True, False])
@pytest.mark.parametrize(
    ("kernel", "status", "reason"),
    [
        ("cheats/fast_when_unwatched.py", "rejected", "it does less work when it is not watched"),
        ("cheats/fast_when_unwatched_noop_probe.py", "rejected", "its probe call's output was wrong"),
        ("cheats/cache_answers_the_probe.py", "rejected", "it does less work when it is not watched"),
        ("good/cos_readback.py", "passed", "passed"),
    ],
)
def test_the_unwatched_floor_is_the_probed_kernels_device_time_whatever_the_host_bound_mark(
    warm_forkserver, monkeypatch, kernel, status, reason, marked_host_bound
):
    # Whether an audited window also held host time (a readback's wait; on the H200 the 24 slow launches
    # fast_when_unwatched makes while audited, under load) is a race with the stream hold, so the mark that
    # says so moves with the host's load: on the H200 it once let fast_when_unwatched pass (compared with
    # nothing) and once refused the honest readback (compared with a window holding its wait). The floor is
    # the smaller of the window and the device-time loop's probe call, whose kernels' own device time holds
    # no host time, on every case, marked or not; and the probe's call is spot-checked, so a kernel cannot
    # lower that floor by launching a no-op when probed.
    from evaluation.judge import timing_trusted

    monkeypatch.setattr(
        timing_trusted, "host_bound_sides", lambda holds, iterations: ["candidate"] if marked_host_bound else []
    )
    result = _judge_timed_one_case_cos(kernel)

    assert result.status == status, result.reason
    assert reason in result.reason
    if status == "passed":
        timed = next(case for case in result.case_results if case.timed)
        # The probe's figure where its call came back checked (it would lower the floor), else none.
        probed = timed.spread["kernel_device_ms"]
        assert probed is None or 0 < probed < timed.candidate_ms
        assert ("host_bound_sides" in timed.spread) == marked_host_bound  # shown, deciding nothing


def test_a_result_cached_by_address_is_stale_in_timing_and_the_spot_check_sees_it(warm_forkserver):
    # EXPLOITS 7 in the timed loop: the rotating sets' buffers come back every few calls, but never with the
    # values they held the round before (untrusted.timing.ValueRotation), and spot checks come from those
    # rounds. Without the refill this kernel "passes" at a speedup its no-op launches make up.
    spec = dataclasses.replace(
        small_cos_record(), smoke=(Case("cos", {"shape": [300], "dtype": "float32", "range": [-2.0, 2.0]}),)
    )
    job = JudgeJob(
        "aten::cos",
        kernel_source("cheats/cache_by_address_in_timing.py"),
        "cpu-interpreter",
        "cpu",
        measure_timing=True,
    )
    result = judge_with(
        job,
        JudgeOptions(
            spec=spec, timing_on_cpu_for_tests=True, timing=TimingOptions(min_iterations=12, max_iterations=12)
        ),
    )

    assert result.status == "rejected"
    assert result.reason.startswith("timing case cos[") and "a timed call's output was wrong" in result.reason
    assert check_outcomes(result)["timing_spot_check"] == "failed"


SPOT_CASE = Case("cos", {"shape": [8], "dtype": "float32", "range": [-2.0, 2.0]})


def _spot_judgement(reply, blobs, checks=None):
    """What fetch_and_check_spots reads of a judgement, on the CPU: the sandbox's side is ``reply`` and its
    blobs; the judge's own side (its secret, its draws of the rotating sets, the reference) is real."""
    import contextlib
    import functools
    from types import SimpleNamespace

    from evaluation.judge import inputs
    from evaluation.judge.session import SandboxSession

    spec = small_cos_record()
    return SimpleNamespace(
        options=SimpleNamespace(timing=TimingOptions(spot_checks=1, min_iterations=12)),
        case_bytes={},
        spec=spec,
        secret=b"spot-test-secret",
        poison_keys={},
        reference_device=torch.device("cpu"),
        make_call=lambda case, seed: inputs.make_call(spec, case, seed, torch.device("cpu")),
        check=lambda name, outcome, detail="": (checks if checks is not None else []).append((name, outcome)),
        session=SimpleNamespace(
            request=lambda *args, **kwargs: (reply, blobs),
            decoding_reply=functools.partial(SandboxSession.decoding_reply, None),
            device_shared=lambda label="": contextlib.nullcontext(),
            yield_to_timer=lambda label="": None,
        ),
    )


def _spot_reply(before, set_index=1, case=SPOT_CASE, also=(), **marks):
    """The reply an honest sandbox sends for one spot-checked call of ``case`` on ``before`` (a Call): its
    inputs, the index of the set it names, and the right answer for those inputs (in ``out=`` when given);
    ``marks``: the probe call's ("probe", "side"); ``also``: more such spots, as (before, set_index, marks)."""
    from evaluation.judge import protocol
    from evaluation.judge.untrusted.timing_sets import encode_spots

    spots = []
    for call, index, extra in ((before, set_index, marks), *also):
        answer = torch.cos(call.args[0])
        after = {key: answer.clone() for key in call.kwargs}  # cos_out's out=
        spot = {"set": index, "before": {"args": call.args, "kwargs": call.kwargs}, **extra}
        spot.update(returned=after.get("out", answer), args=[call.args[0].clone()], kwargs=after)
        spots.append(spot)
    entries, blobs = encode_spots(spots)
    listed = [{"value": item.value, "blob_offset": item.blob_offset, "blob_count": item.blob_count} for item in entries]
    header = {"event": "spots", "spots": {case.case_id: listed}, "ok": True, "integrity": []}
    return protocol.Spots.decode(header), [bytearray(blob) for blob in blobs]


def test_malformed_spot_checks_are_a_tampered_result_channel():
    # What the sandbox sends back is untrusted: spot copies that do not decode (a view past its storage,
    # a missing field) reject the kernel, they do not crash the judge.
    from evaluation.judge import protocol, timing_spots
    from evaluation.judge.verdicts import Verdict

    # Well-formed as a message (the session decodes it); its spot's wire tree is what does not decode.
    malformed = protocol.Spots.decode(
        {
            "event": "spots",
            "spots": {SPOT_CASE.case_id: [{"value": {"kind": "nonsense"}, "blob_offset": 0, "blob_count": 1}]},
            "ok": True,
            "integrity": [],
        }
    )

    with pytest.raises(Verdict) as raised:
        timing_spots.fetch_and_check_spots(_spot_judgement(malformed, [b"\x00" * 4]), [("public", SPOT_CASE, 32, 2)])
    assert (raised.value.status, raised.value.check) == ("rejected", "result_channel")
    assert "malformed spot checks" in raised.value.reason


def _drawn_set(judgement, index, case=SPOT_CASE):
    from evaluation.judge import timing_spots

    return judgement.make_call(case, timing_spots.timing_set_seed(judgement.secret, "candidate", case, index))


@pytest.mark.parametrize("case", [SPOT_CASE, *small_cos_record().smoke], ids=lambda case: case.case_id)
def test_a_spot_check_on_a_set_the_judge_drew_is_checked_against_the_reference(case):
    # As the timed loop sends it: cloned inputs (a transposed set stays transposed), and an out= buffer
    # poisoned before the call, whose contents are not the draw's.
    from evaluation.catalog.spec import Call
    from evaluation.judge import timing_spots
    from evaluation.judge.untrusted.guard import poison_tree

    checks = []
    judgement = _spot_judgement(None, [], checks)
    judgement.poison_keys = {case.case_id: list(judgement.spec.entry_point(case.entry_point).mutates)}
    drawn = _drawn_set(judgement, 1, case)
    before = Call(
        args=[drawn.args[0].clone()], kwargs={key: poison_tree(out.clone()) for key, out in drawn.kwargs.items()}
    )
    judgement.session.request = lambda *args, **kwargs: _spot_reply(before, case=case)

    timing_spots.fetch_and_check_spots(judgement, [("public", case, 32, 2)])

    assert checks == [("timing_spot_check", "passed")]


def test_a_spot_whose_inputs_are_the_draw_but_for_a_unit_in_the_last_place_is_the_draw():
    # A case builder that reduces with atomics on a GPU may redraw a set a few units in the last place apart;
    # that is the judge's own noise, not a forgery (nothing a kernel could choose), so the spot is checked.
    from evaluation.catalog.spec import Call
    from evaluation.judge import timing_spots

    checks = []
    judgement = _spot_judgement(None, [], checks)
    x = _drawn_set(judgement, 1).args[0]
    one_ulp = torch.nextafter(x, torch.full_like(x, float("inf")))
    assert not torch.equal(one_ulp, x)
    judgement.session.request = lambda *args, **kwargs: _spot_reply(Call(args=[one_ulp], kwargs={}))

    timing_spots.fetch_and_check_spots(judgement, [("public", SPOT_CASE, 32, 2)])

    assert checks == [("timing_spot_check", "passed")]


def _forged_before(drawn):
    """Spot inputs the reference takes and the kernel answers right, none of them a set the judge drew."""
    from evaluation.catalog.spec import Call

    x = drawn.args[0]
    return {
        "shape": Call(args=[torch.zeros(4, dtype=x.dtype)], kwargs={}),
        "dtype": Call(args=[x.double()], kwargs={}),
        "values": Call(args=[torch.zeros_like(x)], kwargs={}),
        "strides": Call(args=[torch.empty(2 * x.numel(), dtype=x.dtype)[::2].copy_(x)], kwargs={}),
        "nearby": Call(args=[x * 1.01 + 0.01], kwargs={}),
    }


@pytest.mark.parametrize("forgery", ["shape", "dtype", "values", "strides", "nearby", "set"])
def test_spot_inputs_the_judge_did_not_draw_are_a_tampered_result_channel(forgery):
    # The sandbox reports what a timed call got; the reference runs on it. Inputs of its own choosing (of
    # another shape, dtype or layout, or other values: the answer to those is right) or a set it names but
    # the judge never drew are the result channel's forgery, not a judge error and not a pass.
    from evaluation.catalog.spec import Call
    from evaluation.judge import timing_spots
    from evaluation.judge.verdicts import Verdict

    judgement = _spot_judgement(None, [])
    drawn = _drawn_set(judgement, 1)
    if forgery == "set":
        reply = _spot_reply(Call(args=[drawn.args[0].clone()], kwargs={}), set_index=2)  # 2 sets were drawn
    else:
        reply = _spot_reply(_forged_before(drawn)[forgery])
    judgement.session.request = lambda *args, **kwargs: reply

    with pytest.raises(Verdict) as raised:
        timing_spots.fetch_and_check_spots(judgement, [("public", SPOT_CASE, 32, 2)])
    assert (raised.value.status, raised.value.check) == ("rejected", "result_channel")
    assert "timing case cos[" in raised.value.reason and "drawn" in raised.value.reason


def test_the_probe_call_may_run_on_a_reference_set_and_only_it():
    # The probe runs on a reference set (values no candidate call saw: a cache of earlier answers cannot
    # answer it), checked against the judge's own draw of that set; a timed call never runs on one, and a
    # probe that names a reference set must hold that set's values.
    from evaluation.catalog.spec import Call
    from evaluation.judge import timing_spots
    from evaluation.judge.verdicts import Verdict

    checks = []
    judgement = _spot_judgement(None, [], checks)
    seed = timing_spots.timing_set_seed(judgement.secret, "reference", SPOT_CASE, 1)
    reference_set = Call(args=[judgement.make_call(SPOT_CASE, seed).args[0].clone()], kwargs={})
    candidate_set = Call(args=[_drawn_set(judgement, 1).args[0].clone()], kwargs={})
    timed = ((candidate_set, 1, {}),)  # the loop's own spot, beside the probe's
    judgement.session.request = lambda *args, **kwargs: _spot_reply(
        reference_set, probe=True, side="reference", also=timed
    )
    assert timing_spots.fetch_and_check_spots(judgement, [("public", SPOT_CASE, 32, 2)]) == {SPOT_CASE.case_id}
    assert checks == [("timing_spot_check", "passed")]

    forgeries = [
        (_spot_reply(reference_set, side="reference"), "is not one a timed call has"),  # a timed call: never
        (_spot_reply(candidate_set, probe=True, side="reference", also=timed), "drawn"),  # not that set's values
        (_spot_reply(reference_set, probe=True, side="trusted", also=timed), "is not one a probe call has"),
    ]
    for reply, words in forgeries:
        judgement.session.request = lambda *args, reply=reply, **kwargs: reply
        with pytest.raises(Verdict) as raised:
            timing_spots.fetch_and_check_spots(judgement, [("public", SPOT_CASE, 32, 2)])
        assert (raised.value.status, raised.value.check) == ("rejected", "result_channel")
        assert words in raised.value.reason


def test_tensor_method_compute_is_caught_by_the_dispatch_audit(run_judge):
    result = _runtime(run_judge, "method_cos.py")

    assert (result.status, result.reason) == ("rejected", "computed outside Triton: aten::cos")


def test_try_except_fallback_is_caught_at_run_time(run_judge):
    result = _runtime(run_judge, "fallback_try_except.py")

    assert (result.status, result.reason) == ("rejected", "computed outside Triton: aten::cos")


def test_host_math_with_an_idle_launch_is_caught_by_ghost_replay(run_judge):
    result = _runtime(run_judge, "host_math_ghost.py")

    assert result.status == "rejected"
    assert check_outcomes(result)["ghost_replay"] == "failed"
    assert result.reason.endswith("the output is still correct with every Triton launch turned into a no-op")
    assert result.failed_case["params"] == {"shape": [33], "dtype": "float32", "range": [-2.0, 2.0]}


def test_cache_by_shape_is_caught_when_a_later_call_of_the_shape_launches_nothing(run_judge):
    # The twin replay is the first later call of a case's shape that is checked; the ghost replay,
    # judged after it, would convict the cache too.
    result = run_judge("cheats/cache_by_shape.py")

    assert (result.status, result.reason) == ("rejected", "no Triton kernel was launched in the twin replay")
    assert check_outcomes(result)["triton_launched"] == "failed"


def test_cache_by_shape_is_caught_by_ghost_replay_without_the_twin_replay(run_judge):
    result = run_judge("cheats/cache_by_shape.py", twin_replay=False)

    assert result.status == "rejected"
    assert check_outcomes(result)["ghost_replay"] == "failed"
    assert result.failed_case["params"]["shape"] == [33]


def test_cache_by_data_ptr_never_hits_because_inputs_are_fresh_buffers(run_judge):
    # EXPLOITS 7: every call gets new buffers and old ones stay alive, so an address-keyed cache is useless.
    result = run_judge("cheats/cache_by_data_ptr.py")

    assert (result.status, result.cases_passed) == ("passed", 3)


def test_mutating_the_input_is_rejected(run_judge):
    result = run_judge("cheats/mutate_input.py")

    assert (result.status, result.reason) == ("rejected", "the call modified input #0")
    assert check_outcomes(result)["inputs_unchanged"] == "failed"


def test_returning_the_input_fails_correctness(run_judge):
    result = run_judge("cheats/return_input.py")

    assert result.status == "failed_correctness"
    assert result.failed_case["params"]["shape"] == [33]


def test_returning_zeros_fails_correctness(run_judge):
    result = run_judge("cheats/return_zeros.py")

    assert result.status == "failed_correctness"
    assert "values outside atol=0.0001 rtol=1e-05" in result.failed_case["message"]


def test_no_triton_launch_is_rejected(run_judge):
    result = run_judge("cheats/no_launch.py")

    assert (result.status, result.reason) == ("rejected", "no Triton kernel was launched")
    assert check_outcomes(result)["triton_launched"] == "failed"


def test_spawning_a_thread_ends_the_process_and_one_started_past_the_hook_is_counted(run_judge):
    # Dispatch modes are per thread: torch in a thread runs unaudited. Starting one raises an audit event the
    # sandbox refuses; a kernel that unwraps the starter to get at _thread's own (no event, and threading does
    # not count it) is seen by the process's thread count after the call.
    result = _runtime(run_judge, "spawn_thread.py")

    assert result.status == "rejected"
    assert result.reason.startswith("the kernel's process used kgb.thread.start")
    assert check_outcomes(result)["sandbox_audit_hook"] == "failed"

    result = run_judge("cheats/spawn_thread_unwrapped.py", static_scan=False)

    assert result.status == "rejected"
    assert check_outcomes(result)["harness_integrity"] == "failed"
    assert result.reason.startswith("harness integrity: thread count grew from") and "(native)" in result.reason


@pytest.mark.parametrize(
    ("name", "replaced"),
    [
        ("patch_timer.py", "time.perf_counter was replaced"),
        ("patch_assert_close.py", "torch.testing.assert_close was replaced"),
        ("patch_synchronize.py", "torch.cuda.synchronize was replaced"),
        ("patch_launch_hook.py", "JITFunction.run (launch hook) was replaced"),
    ],
)
def test_monkeypatching_the_harness_is_caught_after_import(run_judge, name, replaced):
    result = _runtime(run_judge, name)

    assert result.status == "rejected"
    assert check_outcomes(result)["harness_integrity"] == "failed"
    assert result.failed_case is None  # caught right after the import, before any case
    assert replaced in next(check.detail for check in result.checks if check.name == "harness_integrity")


def test_printing_a_forged_result_changes_nothing(run_judge):
    result = run_judge("cheats/forge_stdout.py")

    assert result.status == "failed_correctness"
    assert result.environment["candidate_output"]["stdout"].startswith('{"status": "passed"')


def test_forging_a_frame_on_the_result_pipe_is_rejected(run_judge):
    result = _runtime(run_judge, "forge_result_pipe.py")

    assert (result.status, result.reason.split(":")[0]) == (
        "rejected",
        'the result channel was tampered with in case cos[{"dtype"',
    )
    assert result.reason.endswith("reply without this run's token")
    assert check_outcomes(result)["result_channel"] == "failed"


def test_a_kernel_cannot_pass_its_failure_off_as_the_judges_error(run_judge):
    # `error` is retried and counts neither for nor against a method. Once the kernel's code has run in the
    # sandbox, a harness failure there (here forged with the harness's own token) is the kernel's.
    for result in (_runtime(run_judge, "forge_harness_error.py"), run_judge("cheats/forge_harness_error.py")):
        assert result.status == "failed_runtime"
        assert result.reason.startswith("the kernel's process failed in case cos[")
        assert result.reason.endswith("failed: RuntimeError: the judge broke, not me")
        assert not result.retryable


def test_a_kernel_raising_the_allocators_words_is_judged_for_its_failure(run_judge):
    # A wrong kernel raising a "CUDA out of memory ... of which 100 MiB is free" of its own was a retried
    # `error` on every device (the red team's round 7): on the interpreter no judge shares device memory.
    result = run_judge("cheats/forge_device_full.py", static_scan=False)

    assert result.status == "failed_runtime" and "ran out of memory" in result.reason
    assert not result.retryable


def test_a_reason_quoting_a_lone_surrogate_can_be_stored_and_printed(run_judge):
    result = run_judge("cheats/lone_surrogate_reason.py", static_scan=False)

    assert result.status == "failed_runtime" and "broken kernel" in result.reason
    result.reason.encode("utf-8")  # raised UnicodeEncodeError before: SQLite and the CLI could not take it
    json.dumps(result.to_json()).encode("utf-8")


def test_tensor_subclass_output_is_rejected(run_judge):
    result = _runtime(run_judge, "tensor_subclass.py")

    assert result.status == "rejected"
    assert result.reason == "output is not a plain tensor: return is a Lazy, not a plain torch.Tensor"
    assert check_outcomes(result)["plain_tensor_outputs"] == "failed"


def test_special_casing_published_shapes_fails_on_held_out_cases(run_judge):
    from conftest import cos_record

    spec = cos_record()
    public_only = run_judge("cheats/published_shapes.py", spec=spec)
    assert (public_only.status, public_only.cases_passed) == ("passed", 20)

    result = run_judge("cheats/published_shapes.py", spec=spec, tiers=("smoke", "held_out"))
    assert result.status == "failed_correctness"
    assert result.failed_case["tier"] == "held_out"
    assert result.cases_passed == 20


@pytest.mark.parametrize("launcher", ["forkserver", "popen"])
def test_sandbox_environment_holds_no_secrets(run_judge, monkeypatch, launcher):
    monkeypatch.setenv("SECRET_KEY", "parent-secret-key")
    monkeypatch.setenv("DATABASE_URL", "postgres://user:pw@db/kgb")
    monkeypatch.setenv("CELERY_BROKER_URL", "redis://broker:6379/0")
    # popen: a process started after the secrets were set, so the allow-list is what keeps them out.
    result = _runtime(run_judge, "env_secret.py", launcher=launcher)

    assert result.status == "failed_runtime"
    message = result.failed_case["message"]
    assert "ENVIRONMENT=" in message
    for leaked in ("SECRET_KEY", "parent-secret-key", "DATABASE_URL", "CELERY_BROKER_URL", "KGB_"):
        assert leaked not in message
    assert "'TRITON_INTERPRET', '1'" in message


def test_gc_scan_finds_no_expected_output_in_the_sandbox(run_judge):
    # EXPLOITS 3/13: expected outputs never exist in the candidate's process; the best tensor it finds is wrong.
    result = _runtime(run_judge, "gc_scan.py")

    assert result.status in {"failed_correctness", "rejected"}
    assert result.status != "passed"


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (tf32 matmul precision loss)")
def test_tf32_matmul_fails_the_fp64_second_opinion():  # pragma: no cover - GPU only
    from conftest import kernel_source

    from evaluation.judge.job import JudgeJob
    from evaluation.judge.records import find_operator
    from evaluation.judge.runner import JudgeOptions, judge_with

    spec = find_operator("aten::mm")
    job = JudgeJob("aten::mm", kernel_source("cheats/gpu_tf32_mm.py"), "gpu", "cuda", tiers=("public",))
    result = judge_with(job, JudgeOptions(spec=spec))

    assert result.status == "failed_correctness"
    assert result.failed_case["params"]["dtype"] == "float32"
    # Small K: tf32 passes atol = 1e-4 * K and only the float64 second opinion sees it; larger errors fail
    # the plain comparison first.
    assert (
        check_outcomes(result).get("fp64_second_opinion") == "failed"
        or "values outside" in result.failed_case["message"]
    )


def test_no_launch_is_honest_only_where_there_is_nothing_to_compute(run_judge):
    """An empty result needs no kernel: a wrapper that returns early there passes; the same wrapper skipping
    its launch on a non-empty input is still refused (cheats/no_launch.py above)."""
    import dataclasses

    from conftest import small_cos_record

    from evaluation.catalog.spec import Case

    spec = small_cos_record()
    spec = dataclasses.replace(
        spec, smoke=spec.smoke + (Case("cos", {"shape": [3, 0], "dtype": "float32", "range": [-2.0, 2.0]}),)
    )
    result = run_judge("good/cos_returns_early_when_empty.py", spec=spec)
    assert (result.status, result.cases_passed) == ("passed", 4), result.reason
    assert run_judge("cheats/no_launch.py", spec=spec).status == "rejected"


def test_a_lazily_negated_input_handed_back_is_not_a_resolved_output():
    # The wire carries resolve_neg's neg bit to the kernel and back: values that only read right through
    # the bit are the input's own, not an output.
    from conftest import kernel_source

    from evaluation.judge.job import JudgeJob
    from evaluation.judge.runner import JudgeOptions, judge_with

    source = kernel_source("cheats/resolve_neg_hands_back_its_input.py")
    for scan in (True, False):
        job = JudgeJob("aten::resolve_neg", source, "cpu-interpreter", "cpu", tiers=("smoke",), time_budget_s=120)
        result = judge_with(job, JudgeOptions(static_scan=scan))

        assert result.status == "rejected"
        assert "output is not a plain tensor: return is a lazily negated view" in result.reason


def test_a_statistical_record_with_a_deterministic_answer_gets_a_twin_replay():
    # moe_align_block_size is checked by stat_check (the order inside a segment is free) but its answer is
    # not random: numpy on TensorBase.numpy (outside the host-read budget) computed it, Triton copied it out.
    from conftest import kernel_source

    from evaluation.judge.job import JudgeJob
    from evaluation.judge.runner import JudgeOptions, judge_with

    source = kernel_source("cheats/moe_align_numpy_on_the_base_class.py")
    job = JudgeJob(
        "vllm13::moe_align_block_size", source, "cpu-interpreter", "cpu", tiers=("smoke",), time_budget_s=120
    )
    result = judge_with(job, JudgeOptions(static_scan=False))

    assert result.status == "rejected" and "the work was done outside Triton" in result.reason
    assert check_outcomes(result)["twin_replay"] == "failed"


def test_offsets_between_allocations_from_one_base_pointer_pass_the_twin_replay():
    # Honest (round-9 red team): the kernel addresses every input of a cat from the first one's pointer plus
    # each one's offset from it, data_ptr() differences. The twins' addresses keep them consistent.
    from conftest import kernel_source

    from evaluation.judge.job import JudgeJob
    from evaluation.judge.runner import JudgeOptions, judge_with

    job = JudgeJob("aten::cat", kernel_source("good/cat_offsets_from_one_base.py"), "cpu-interpreter", "cpu")
    result = judge_with(job, JudgeOptions(static_scan=False))

    assert (result.status, check_outcomes(result).get("twin_replay")) == ("passed", "passed"), result.reason

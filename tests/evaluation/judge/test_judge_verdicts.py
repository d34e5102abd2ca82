"""Honest kernels pass; broken ones fail for the right reason; the judge survives every crash (CPU interpreter)."""

from __future__ import annotations

import pytest
from conftest import check_outcomes, cos_record, kernel_source

GOOD = ["cos_plain.py", "cos_autotune.py", "cos_two_kernels.py", "cos_views.py", "cos_strided.py"]


@pytest.mark.parametrize("name", GOOD)
def test_good_kernel_passes_small_record(run_judge, name):
    result = run_judge(f"good/{name}")

    assert (result.status, result.reason) == ("passed", "all 3 cases passed")
    assert (result.cases_total, result.cases_passed) == (3, 3)
    assert result.failed_case is None
    assert result.speedup is None  # the interpreter's times mean nothing
    outcomes = check_outcomes(result)
    assert outcomes == {
        "static_scan": "passed",
        "entry_points": "passed",
        "dispatch_audit": "passed",
        "triton_launched": "passed",
        "plain_tensor_outputs": "passed",
        "inputs_unchanged": "passed",
        "harness_integrity": "passed",
        "result_channel": "passed",
        "ghost_replay": "passed",
        "twin_replay": "passed",
        "timing": "skipped",
    }


def test_good_kernel_passes_every_smoke_case_of_the_real_record(run_judge):
    result = run_judge("good/cos_plain.py", spec=cos_record())

    assert result.status == "passed"
    assert (result.cases_total, result.cases_passed) == (20, 20)
    assert set(result.stage_seconds) == {"process_start", "compile", "correctness"}


def test_sandbox_protections_are_recorded(run_judge):
    import os

    result = run_judge("good/cos_plain.py")

    sandbox = result.environment["sandbox"]
    assert "scrubbed environment (allow-list)" in sandbox["applied"]
    assert "rlimit address space" in sandbox["applied"]
    if os.geteuid() == 0:  # contained: an unprivileged uid of its own, not root's nor anybody else's
        from evaluation.judge.isolation import uid_base

        assert any(item.startswith("own uid ") for item in sandbox["applied"])
        assert sandbox["uid"] >= uid_base()
        assert any(item.startswith("no network") for item in sandbox["applied"])


def test_wrong_values_fail_correctness_naming_the_first_case(run_judge):
    result = run_judge("wrong/wrong_values.py")

    assert result.status == "failed_correctness"
    assert result.failed_case["case_id"] == 'cos[{"dtype":"float32","range":[-2.0,2.0],"shape":[33]}]'
    assert result.failed_case["params"] == {"shape": [33], "dtype": "float32", "range": [-2.0, 2.0]}
    assert "values outside atol=0.0001 rtol=1e-05" in result.failed_case["message"]
    assert (result.cases_total, result.cases_passed) == (3, 0)


def test_wrong_dtype_fails_correctness(run_judge):
    result = run_judge("wrong/wrong_dtype.py")

    assert result.status == "failed_correctness"
    assert result.failed_case["params"]["dtype"] == "float16"
    assert result.failed_case["message"] == "output 0: dtype torch.float32 != expected torch.float16"
    assert result.cases_passed == 1


def test_wrong_shape_fails_correctness(run_judge):
    result = run_judge("wrong/wrong_shape.py")

    assert result.status == "failed_correctness"
    assert result.failed_case["message"] == "output 0: shape [33] != expected [33]" or result.failed_case[
        "message"
    ].startswith("output 0: shape [68] != expected [4, 17]")


def test_syntax_error_is_a_compile_failure(run_judge):
    result = run_judge("wrong/syntax_error.py")

    assert result.status == "failed_compile"
    assert result.reason == "syntax error: expected ':' (line 3)"


def test_raise_at_import_is_a_compile_failure_with_the_error(run_judge):
    result = run_judge("wrong/raise_import.py")

    assert result.status == "failed_compile"
    # The exception comes first: pages and the API truncate reasons.
    first_line, traceback = result.reason.split("\n", 1)
    assert first_line == "the kernel file raised on import: RuntimeError: this kernel file is broken at import"
    assert traceback.startswith("Traceback (most recent call last):")


def test_missing_entry_point_is_a_compile_failure_naming_it(run_judge):
    result = run_judge("wrong/missing_entry.py")

    assert (result.status, result.reason) == ("failed_compile", "missing entry point(s): cos_out")


def test_raise_during_a_case_is_a_runtime_failure_naming_the_case(run_judge):
    result = run_judge("wrong/raise_runtime.py")

    assert result.status == "failed_runtime"
    assert result.failed_case["params"] == {"shape": [33], "dtype": "float32", "range": [-2.0, 2.0]}
    assert result.reason.endswith("raised: ValueError: kernel does not support this input")


def test_infinite_loop_times_out_and_the_process_group_is_killed(run_judge):
    result = run_judge("wrong/infinite_loop.py", budget=8.0)

    assert result.status == "timeout"
    assert result.reason.startswith("the wall-clock budget of 8 s ran out in case cos[")
    assert result.failed_case["message"] == "timeout"


def test_huge_allocation_is_a_runtime_failure_about_memory(run_judge):
    result = run_judge("wrong/huge_allocation.py")

    assert result.status == "failed_runtime"
    assert "ran out of memory" in result.reason


def test_a_store_far_outside_the_buffer_is_the_kernels_runtime_failure(run_judge):
    # On a GPU an illegal address; on the CPU interpreter the bounds check catches the store as it is made
    # (before it could kill the sandbox with a SIGSEGV). Either way the kernel's fault: never an `error`
    # (retried, and kept out of a method's accuracy), and the first case that makes it is the one named.
    result = run_judge("wrong/illegal_address.py")

    assert (result.status, result.retryable) == ("failed_runtime", False)
    assert result.cases_passed == 0 and "out-of-bounds store: the kernel wrote outside its buffers" in result.reason
    assert "bytes past the end of argument `out_ptr`" in result.reason


def test_os_exit_is_a_runtime_failure_with_the_exit_code(run_judge):
    result = run_judge("wrong/exit_process.py")  # names os: the scan notes it, the exit decides

    assert result.status == "failed_runtime"
    assert result.reason.endswith("the sandbox process died in case " + result.failed_case["case_id"] + ": exit code 7")


def test_a_dead_process_last_words_reach_the_failed_case_message(run_judge):
    # On the H200 a sandbox died with exit code 3 (a harness failure it could not report) and nothing else was
    # known; what the process last wrote to stderr now travels in the message (not the reason).
    source = kernel_source("wrong/exit_process.py").replace(
        "    import os\n", "    import os\n    import sys\n    print('giving up on this input', file=sys.stderr)\n"
    )
    result = run_judge("wrong/exit_process.py", static_scan=False, source=source)

    assert result.reason.endswith(": exit code 7")
    assert "giving up on this input" in result.failed_case["message"]
    assert "giving up" not in result.reason


def test_segfault_is_a_runtime_failure_with_the_signal(run_judge):
    result = run_judge("wrong/segfault.py", static_scan=False)

    assert result.status == "failed_runtime"
    assert "killed by signal SIGSEGV (a memory access outside the process's memory" in result.reason


def test_file_flood_hits_the_file_size_limit(run_judge):
    result = run_judge("wrong/file_flood.py", static_scan=False)

    assert result.status == "failed_runtime"
    # Python ignores SIGXFSZ, so the write past RLIMIT_FSIZE fails with EFBIG instead of killing the process.
    assert result.reason.endswith("raised: OSError: [Errno 27] File too large")


def test_judge_survives_and_judges_again_after_crashes(run_judge):
    assert run_judge("wrong/segfault.py", static_scan=False).status == "failed_runtime"
    assert run_judge("good/cos_plain.py").status == "passed"


def test_popen_launcher_and_pool_give_the_same_verdicts(run_judge):
    from evaluation.judge.pool import SandboxPool

    fresh = run_judge("good/cos_plain.py", launcher="popen")
    with SandboxPool("cpu", size=1) as pool:
        pooled = run_judge("wrong/wrong_values.py", pool=pool)

    assert (fresh.status, fresh.environment["sandbox"]["launcher"]) == ("passed", "popen")
    assert (pooled.status, pooled.environment["sandbox"]["launcher"]) == ("failed_correctness", "popen")


def test_forked_sandboxes_run_as_their_own_slot_uid_in_their_own_namespaces(run_judge):
    import os

    from evaluation.judge.isolation import uid_base

    result = run_judge("good/cos_plain.py")

    assert result.environment["sandbox"]["launcher"] == "forkserver"
    if os.geteuid() == 0:
        assert result.environment["sandbox"]["uid"] >= uid_base()
        assert "no network (own network namespace)" in result.environment["sandbox"]["applied"]


def test_giant_output_is_refused_without_reading_it(run_judge):
    result = run_judge("wrong/giant_output.py")

    assert result.status == "failed_runtime"
    assert "are far larger than expected" in result.reason
    assert "exceed the cap" in result.failed_case["message"]


@pytest.mark.parametrize("scan", ["on", "off"])
def test_a_wrapper_under_torch_compile_passes(run_judge, scan):
    # torch.compile's first use loads operators into prims' namespace, which the audit hook refuses once the
    # candidate loads: the sandbox imports that module ahead of the candidate. The scan only notes the name.
    result = run_judge("good/cos_torch_compile_wrapper.py", static_scan=scan == "on")

    assert (result.status, result.reason) == ("passed", "all 3 cases passed")


@pytest.mark.parametrize("scan", ["on", "off"])
def test_an_answer_staged_in_a_scratch_kept_between_calls_passes(run_judge, scan):
    # The kernel writes a module-level scratch, the wrapper copies it out: in the ghost replay the no-op
    # launch poisons the scratch it would have written (put back afterwards), so the copy is not the real
    # call's answer left behind there.
    result = run_judge("good/cos_scratch_kept_between_calls.py", static_scan=scan == "on")

    assert (result.status, result.reason) == ("passed", "all 3 cases passed")

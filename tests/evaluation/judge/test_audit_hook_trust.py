"""The audit hook lets a ctypes call through only where every frame runs code the judge loaded before arming
(the cuBLAS baseline in the timing loops): the candidate's code, on the stack whenever it runs, never is.

Each scenario runs in a fresh interpreter (an audit hook cannot be removed), with a small package standing in
for the judge's: ``judge_side.call_libc()`` looks a libc routine up through ctypes (``ctypes.dlsym``, the
event the cuBLAS baseline raises; the foreign call itself raises none) and calls it."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evaluation.judge.untrusted.audit_hook import REFUSED_EXIT, REFUSED_MARK

ROOT = Path(__file__).resolve().parents[3]

JUDGE_SIDE = """
import ctypes

LIBC = ctypes.CDLL(None)


def call_libc():
    return LIBC.getpid()


def call_through(function):
    return function()
"""

PROLOGUE = """
import os, sys
sys.path.insert(0, {package_parent!r})
sys.path.insert(0, {root!r})
import judge_pkg.judge_side as judge_side
from evaluation.judge.untrusted import audit_hook
audit_hook.arm(audit_hook.trusted_code({package_dir!r}))
"""


def run_armed(tmp_path: Path, body: str, *, as_candidate: bool = True) -> subprocess.CompletedProcess:
    """``body`` runs as the candidate's code (compiled after arming, as the sandbox imports it) unless
    ``as_candidate`` is False: then it runs in the frame that armed the hook, as the harness's own loop."""
    package = tmp_path / "judge_pkg"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "judge_side.py").write_text(JUDGE_SIDE)
    prologue = PROLOGUE.format(package_parent=str(tmp_path), root=str(ROOT), package_dir=str(package) + "/")
    body = textwrap.dedent(body)
    code = f"exec(compile({body!r}, 'candidate_kernel.py', 'exec'))" if as_candidate else body
    return subprocess.run(
        [sys.executable, "-c", prologue + code + "\nprint('finished')"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_judges_own_ctypes_call_goes_through(tmp_path):
    result = run_armed(tmp_path, "assert judge_side.call_libc() == os.getpid()", as_candidate=False)

    assert result.returncode == 0, result.stderr
    assert "finished" in result.stdout


@pytest.mark.parametrize(
    "body",
    [
        # The candidate calls the judge's function: its own frame is on the stack.
        "judge_side.call_libc()",
        # A judge function calls back into the candidate, which makes the call.
        "import ctypes\njudge_side.call_through(lambda: ctypes.CDLL(None).getpid())",
        # Code compiled after arming under the judge's own file name is still not the judge's code.
        "exec(compile('judge_side.call_libc()', judge_side.__file__, 'exec'))",
        # A judge function handed a builtin callable: the candidate's frame is still below it.
        "judge_side.call_through(judge_side.LIBC.getpid)",
    ],
    ids=["direct", "callback", "forged_file_name", "builtin_callable"],
)
def test_a_ctypes_call_with_the_candidates_code_on_the_stack_ends_the_process(tmp_path, body):
    result = run_armed(tmp_path, body)

    assert result.returncode == REFUSED_EXIT, (result.returncode, result.stderr)
    assert f"{REFUSED_MARK} ctypes." in result.stderr
    assert "finished" not in result.stdout


def test_the_sandbox_trusts_the_cublas_baseline_and_the_timing_loops_that_call_it():
    import types

    from evaluation.catalog.cublas import cublas_baseline
    from evaluation.judge.untrusted import audit_hook, harness, timing, timing_back_to_back, timing_do_bench

    trusted = audit_hook.trusted_code(harness.JUDGE_PACKAGE_DIR)

    def nested(code: types.CodeType) -> list[types.CodeType]:
        inner = [constant for constant in code.co_consts if isinstance(constant, types.CodeType)]
        return [code] + [deeper for constant in inner for deeper in nested(constant)]

    thunk_codes = nested(cublas_baseline.baseline_for.__code__)  # baseline_for -> baseline -> run
    assert {code.co_name for code in thunk_codes} >= {"baseline_for", "baseline", "run"}
    assert all(code in trusted for code in thunk_codes)
    for loop in (timing.time_interleaved, timing_back_to_back.time_back_to_back, timing_do_bench.time_like_do_bench):
        assert loop.__code__ in trusted
    assert harness.Harness.load.__code__ in trusted
    assert not any(code.co_filename.endswith("candidate_kernel.py") for code in trusted)

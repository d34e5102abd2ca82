"""Known Triton CPU interpreter defects: each still reproduces with a real small kernel on the interpreter
(when a Triton release fixes one, its test here fails: drop the entry), the evidence that names each, and
the judge naming them in the reason of a verdict it does not change."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from evaluation.catalog.spec import Case
from evaluation.judge import interpreter_defects as defects

REPRO = Path(__file__).with_name("interpreter_repro.py")


@cache
def reproduced() -> dict:
    """Every reproduction, in one interpreter process (torch is imported once)."""
    done = subprocess.run(
        [sys.executable, str(REPRO)],
        env={**os.environ, "TRITON_INTERPRET": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("seen", "named"),
    [
        ("unsigned_invert", "unsigned_invert"),
        ("bf16_constant", "bf16_constant"),
        ("float_argument_method", None),  # mended in the sandbox: never named
        ("bf16_atomic", "bf16_atomic"),
        ("bf16_rounding", None),  # mended in the sandbox: never named
        ("bf16_bits", "bf16_bits"),
        ("bf16_bits_compare", "bf16_bits"),
        ("fp8_rounding", None),  # mended in the sandbox: never named
    ],
)
def test_each_known_defect_still_reproduces_on_the_interpreter_and_is_named(seen, named):
    found = reproduced()[seen]
    assert found["reproduced"], f"the interpreter no longer shows {seen} (fixed upstream?): drop its entry. {found}"
    assert found["named"] == named, found
    if "workaround_right" in found:
        assert found["workaround_right"], f"the workaround the reason suggests for {seen} does not work: {found}"
    if "mended_right" in found:
        assert found["mended_right"], f"the sandbox's mend of {seen} does not compute what torch does: {found}"


def test_the_mended_defect_is_mended_in_the_sandbox_and_named_nowhere():
    assert set(defects.MENDED).isdisjoint(defects.ALL)
    for defect in defects.MENDED:
        assert reproduced()[defect.name]["mended_right"] is True, defect.name


def test_every_entry_has_a_why_and_a_reproduction():
    every = defects.ALL + defects.MENDED
    names = {defect.name for defect in every}
    assert len(names) == len(every)
    assert all(defect.why and defect.says for defect in every)
    assert names <= set(reproduced())


def test_an_error_names_a_defect_only_with_the_interpreters_words_and_the_dtype_it_needs():
    interpreted = "triton.runtime.errors.InterpreterError: ValueError('Unsupported data type')"
    assert defects.for_error(interpreted, dtypes={"bfloat16"}) is defects.BF16_ATOMIC
    assert defects.for_error(interpreted, dtypes={"float32"}) is None
    # The same words raised by the kernel's own host code are not the interpreter's.
    assert defects.for_error("AttributeError: 'float' object has no attribute 'to'", dtypes={"float32"}) is None
    assert defects.for_error("IndexError: index 9 is out of bounds", dtypes={"uint8"}) is None


def test_wrong_values_name_the_interpreter_only_on_its_evidence():
    # A bfloat16 case is blamed on the interpreter's bf16 arithmetic only when cases of other dtypes passed.
    assert defects.for_mismatch(dtypes={"bfloat16"}, other_dtypes_passed=True) is defects.BF16_BITS
    assert defects.for_mismatch(dtypes={"bfloat16"}, other_dtypes_passed=False) is None
    # No bfloat16 in the case: no interpreter defect explains wrong values. Float8 and bfloat16 rounding are
    # mended in the sandbox, so values rounded wrongly there are the kernel's own doing.
    assert defects.for_mismatch(dtypes={"float32"}, other_dtypes_passed=True) is None
    assert defects.for_mismatch(dtypes={"float32", "float8_e4m3fn"}, other_dtypes_passed=True) is None


def _record(operator_id: str, entry_point: str, dtypes: list[str]):
    from evaluation.catalog.registry import get_operator

    spec = get_operator(operator_id)
    smoke = tuple(Case(entry_point, {"shape": [37], "dtype": dtype, "range": [0, 90]}) for dtype in dtypes)
    return dataclasses.replace(spec, smoke=smoke)


def test_the_judge_names_unsigned_invert_and_keeps_the_verdict(run_judge):
    result = run_judge(
        "interpreter/bitwise_not_invert.py", spec=_record("aten::bitwise_not", "bitwise_not", ["int32", "uint8"])
    )
    assert result.status == "failed_runtime" and result.cases_passed == 1
    assert "OverflowError" in result.reason
    assert defects.UNSIGNED_INVERT.note in result.reason
    assert {check.name: check.outcome for check in result.checks}["interpreter_defect"] == "noted"


def test_the_judge_names_bf16_arithmetic_after_other_dtypes_passed(run_judge):
    result = run_judge("interpreter/neg_in_own_dtype.py", spec=_record("aten::neg", "neg", ["float32", "bfloat16"]))
    assert result.status == "failed_correctness" and result.cases_passed == 1
    assert "from the kernel" in result.reason and defects.BF16_BITS.note in result.reason
    assert result.reason.endswith("(1 case without bfloat16 passed; 0 cases with bfloat16 not run after it)")


def test_a_bf16_failure_blamed_on_the_interpreter_waits_for_the_other_dtypes_cases(run_judge):
    """The kernel is wrong past its first block in every dtype; its small bf16 case fails first, on the
    interpreter's bf16 defect. The cases without bf16 still run, and the first of them to fail is the
    verdict: the kernel's own bug, with no interpreter excuse."""
    from evaluation.catalog.registry import get_operator

    cases = [("float32", 5), ("bfloat16", 5), ("bfloat16", 200), ("float32", 200), ("float32", 7)]
    spec = dataclasses.replace(
        get_operator("aten::neg"),
        smoke=tuple(Case("neg", {"shape": [size], "dtype": dtype, "range": [0, 90]}) for dtype, size in cases),
    )
    result = run_judge("interpreter/neg_first_block_only.py", spec=spec)
    assert result.status == "failed_correctness", result.reason
    assert result.failed_case["case_id"] == spec.smoke[3].case_id and defects.PREFIX not in result.reason
    assert "interpreter_defect" not in {check.name for check in result.checks}
    assert "a bfloat16 case failed" in result.failed_case["message"]
    # Right in every dtype but bf16: the interpreter's failure stands, with the evidence counted.
    result = run_judge("interpreter/neg_in_own_dtype.py", spec=spec)
    assert result.status == "failed_correctness" and defects.BF16_BITS.note in result.reason
    assert result.failed_case["case_id"] == spec.smoke[1].case_id
    assert result.reason.endswith("(3 cases without bfloat16 passed; 1 case with bfloat16 not run after it)")


def test_a_kernel_wrong_everywhere_gets_no_interpreter_excuse(run_judge):
    wrong = run_judge("interpreter/neg_wrong.py", spec=_record("aten::neg", "neg", ["float32", "bfloat16"]))
    assert wrong.status == "failed_correctness" and wrong.cases_passed == 0
    assert defects.PREFIX not in wrong.reason
    # Wrong only in bfloat16, but with no other dtype's case before it: no excuse either.
    first = run_judge("interpreter/neg_in_own_dtype.py", spec=_record("aten::neg", "neg", ["bfloat16", "float32"]))
    assert first.status == "failed_correctness" and defects.PREFIX not in first.reason
    assert "interpreter_defect" not in {check.name for check in first.checks}


def test_a_store_past_the_end_fails_on_the_first_case_that_makes_it(run_judge):
    """On the interpreter a store outside every buffer writes the host's heap: it is caught as it is made
    (untrusted/interpreter_bounds.py), on the case that makes it, every run, not by a crash cases later."""
    spec = _record("aten::neg", "neg", ["float32", "float16"])
    result = run_judge("interpreter/neg_store_past_end.py", spec=spec)
    assert result.status == "failed_runtime" and result.cases_passed == 0, result.reason
    assert "out-of-bounds store: the kernel wrote outside its buffers" in result.reason
    assert "the first byte past the end of argument `out_ptr`" in result.reason
    assert "kernel `_neg_kernel` at line 10 of the kernel" in result.reason  # the tl.store: linked on the run page


def test_a_store_through_a_pointer_table_into_what_the_call_allocated_is_in_bounds(run_judge):
    spec = _record("aten::neg", "neg", ["float32", "float16"])
    result = run_judge("interpreter/neg_through_pointer_table.py", spec=spec)
    assert result.status == "passed", result.reason


def test_a_store_mask_of_integers_is_read_by_its_truth(run_judge):
    # A block comparison and-ed with a scalar one reaches the store as int64 0s and 1s on the interpreter;
    # the bounds check once used them as indices and failed an honest kernel with an IndexError.
    spec = _record("aten::neg", "neg", ["float32", "float16"])
    result = run_judge("interpreter/neg_mask_and_scalar_flag.py", spec=spec)
    assert result.status == "passed", result.reason

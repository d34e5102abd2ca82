"""Ghost replay is inconclusive, not damning, when an in-place call's right answer is its untouched input.

Seen on the H200: ``x.add_(y, alpha=0.001)`` on a bfloat16 scalar near 1 leaves ``x`` as it was, so the
honest reference kernel's no-op replay was "still correct" and the kernel was wrongly rejected.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch

from evaluation.catalog.registry import get_operator
from evaluation.catalog.spec import Call, Case

REFERENCE = Path(__file__).resolve().parents[3] / "evaluation/catalog/reference_kernels/aten__add_.py"


def identity_case_record(x_value: float, alpha: float = 0.001):
    record = get_operator("aten::add_")
    case = Case("add__Tensor", {"alpha": alpha, "dtype": "bfloat16", "shape": [], "other_shape": []})

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        return Call(
            args=[torch.tensor(x_value, dtype=torch.bfloat16), torch.tensor(0.5, dtype=torch.bfloat16)],
            kwargs={"alpha": alpha},
        )

    return dataclasses.replace(record, make_inputs=make_inputs, smoke=(case,))


def test_an_in_place_call_that_leaves_its_input_unchanged_is_not_rejected(run_judge):
    result = run_judge("", spec=identity_case_record(1.0), source=REFERENCE.read_text())
    assert (result.status, result.cases_passed, result.cases_total) == ("passed", 1, 1), result.reason


def test_a_no_op_kernel_is_still_rejected_when_the_call_must_change_its_input(run_judge):
    no_op = REFERENCE.read_text() + "\n\ndef add__Tensor(self, other, *, alpha=1):\n    return self\n"
    result = run_judge("", spec=identity_case_record(0.25, alpha=1.0), source=no_op)
    assert result.status != "passed"


def test_a_call_whose_answer_is_its_untouched_input_may_launch_nothing(run_judge):
    # 0.25 + 0.001 * 0.5 rounds back to 0.25 in bfloat16: returning self unlaunched is the exact answer, as
    # BLAS's quick return (alpha 0, beta 1) is. Where the answer is only within tolerance of the input, a
    # launch is still owed.
    no_op = REFERENCE.read_text() + "\n\ndef add__Tensor(self, other, *, alpha=1):\n    return self\n"
    assert run_judge("", spec=identity_case_record(0.25), source=no_op).status == "passed"
    assert run_judge("", spec=identity_case_record(0.25, alpha=0.004), source=no_op).status == "rejected"

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


def identity_case_record(x_value: float):
    record = get_operator("aten::add_")
    case = Case("add__Tensor", {"alpha": 0.001, "dtype": "bfloat16", "shape": [], "other_shape": []})

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        return Call(
            args=[torch.tensor(x_value, dtype=torch.bfloat16), torch.tensor(0.5, dtype=torch.bfloat16)],
            kwargs={"alpha": 0.001},
        )

    return dataclasses.replace(record, make_inputs=make_inputs, smoke=(case,))


def test_an_in_place_call_that_leaves_its_input_unchanged_is_not_rejected(run_judge):
    result = run_judge("", spec=identity_case_record(1.0), source=REFERENCE.read_text())
    assert (result.status, result.cases_passed, result.cases_total) == ("passed", 1, 1), result.reason


def test_a_no_op_kernel_is_still_rejected_when_the_call_must_change_its_input(run_judge):
    no_op = REFERENCE.read_text() + "\n\ndef add__Tensor(self, other, *, alpha=1):\n    return self\n"
    result = run_judge("", spec=identity_case_record(0.25), source=no_op)
    assert result.status != "passed"

"""Fixtures shared by the evaluation app's tests."""

from __future__ import annotations

import pytest

from evaluation.models import Run
from leaderboard.services import KernelUpload, method_get_or_create, submission_create

COS = "def cos(self):\n    return self\n\ndef cos_out(self, *, out):\n    return out\n"


@pytest.fixture
def upload(catalog, cpu_chip, django_capture_on_commit_callbacks):
    """``upload(owner, count=1)``: that many one-kernel aten::cos submissions of ``owner`` on the CPU chip,
    each leaving one queued run (its message not sent); returns the runs' ids, oldest first."""

    def upload(owner, count: int = 1) -> list[int]:
        method = method_get_or_create(owner=owner, scaffold="Agent", model="M")
        ids = []
        for _ in range(count):
            with django_capture_on_commit_callbacks(execute=False):
                submission = submission_create(
                    owner=owner,
                    method=method,
                    chips=[cpu_chip],
                    uploads=[KernelUpload(operator_id="aten::cos", source_code=COS)],
                )
            ids.append(Run.objects.get(kernel__submission=submission).pk)
        return ids

    return upload

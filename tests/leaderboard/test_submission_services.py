"""Uploads: validated as a whole, saved whole or not at all, runs queued on each chip's queue after commit."""

from __future__ import annotations

import pytest

from evaluation.models import Run
from leaderboard.models import Kernel, Submission
from leaderboard.services import (
    KernelUpload,
    SubmissionRejected,
    decode_kernel_file,
    method_get_or_create,
    submission_create,
)

GOOD = "def cos(self):\n    return self\n\ndef cos_out(self, *, out):\n    return out\n"


def upload(operator_id="aten::cos", code=GOOD, filename="aten__cos.py", **kwargs):
    return KernelUpload(operator_id=operator_id, source_code=code, filename=filename, **kwargs)


def test_submission_saves_kernels_and_queues_one_run_per_chip(
    catalog, cpu_chip, user, django_capture_on_commit_callbacks, monkeypatch
):
    from evaluation import tasks

    sent = []
    monkeypatch.setattr(
        tasks.judge_run, "apply_async", lambda args, kwargs=None, **options: sent.append((list(args), options["queue"]))
    )
    method = method_get_or_create(owner=user, scaffold="Agent", model="M")
    with django_capture_on_commit_callbacks(execute=True):
        submission = submission_create(
            owner=user, method=method, chips=[cpu_chip], uploads=[upload(input_tokens=10, output_tokens=5)]
        )
    run = Run.objects.get(kernel__submission=submission)
    assert sent == [([run.pk], "chip.cpu-interpreter")]
    kernel = Kernel.objects.get(submission=submission)
    assert (kernel.total_tokens, kernel.sha256) == (15, Kernel.hash_source(GOOD))
    assert (run.status, run.operator_version) == ("queued", kernel.operator.version)


def test_every_problem_is_named_and_nothing_is_saved(catalog, cpu_chip, user, django_capture_on_commit_callbacks):
    method = method_get_or_create(owner=user, scaffold="Agent")
    uploads = [
        upload(),
        upload(filename="dup.py"),
        upload(operator_id="aten::nonexistent", filename="aten__nonexistent.py"),
        upload(operator_id="aten::cos", code="def cos(self):\n    return self\n", filename="partial.py", round=2),
    ]
    with django_capture_on_commit_callbacks(execute=True) as callbacks, pytest.raises(SubmissionRejected) as error:
        submission_create(owner=user, method=method, chips=[cpu_chip], uploads=uploads)
    assert error.value.problems == [
        "dup.py: duplicate operator aten::cos (also in aten__cos.py)",
        "aten__nonexistent.py: unknown operator 'aten::nonexistent'",
        "partial.py: missing entry point(s) cos_out required by aten::cos",
    ]
    assert (Submission.objects.count(), Kernel.objects.count(), Run.objects.count(), len(callbacks)) == (0, 0, 0, 0)


def test_a_file_that_does_not_parse_is_accepted_for_the_judge_to_refuse(
    catalog, cpu_chip, user, django_capture_on_commit_callbacks
):
    method = method_get_or_create(owner=user, scaffold="Agent")
    with django_capture_on_commit_callbacks(execute=False):
        submission = submission_create(
            owner=user, method=method, chips=[cpu_chip], uploads=[upload(code="def cos(:\n")]
        )
    assert Run.objects.filter(kernel__submission=submission).count() == 1


def test_undecodable_and_oversized_files_are_refused(settings):
    with pytest.raises(SubmissionRejected, match=r"k.py: not UTF-8 text"):
        decode_kernel_file(data=b"\xff\xfe\x00", filename="k.py")
    settings.KGB_MAX_KERNEL_BYTES = 10
    with pytest.raises(SubmissionRejected, match=r"big.py: too large \(11 bytes; the limit is 10\)"):
        decode_kernel_file(data=b"x" * 11, filename="big.py")


def test_daily_quota(catalog, cpu_chip, user, settings, django_capture_on_commit_callbacks):
    settings.KGB_DAILY_UPLOAD_QUOTA = 1
    method = method_get_or_create(owner=user, scaffold="Agent")
    with django_capture_on_commit_callbacks(execute=False):
        submission_create(owner=user, method=method, chips=[cpu_chip], uploads=[upload()])
    with pytest.raises(SubmissionRejected, match="daily quota exceeded"):
        submission_create(owner=user, method=method, chips=[cpu_chip], uploads=[upload()])
    assert Submission.objects.count() == 1


def test_no_chip_chosen(catalog, user):
    method = method_get_or_create(owner=user, scaffold="Agent")
    with pytest.raises(SubmissionRejected, match="choose at least one chip"):
        submission_create(owner=user, method=method, chips=[], uploads=[upload()])


def test_catalog_load_is_idempotent_and_builds_the_builtin_sets(catalog):
    from leaderboard.catalog_loader import catalog_load
    from leaderboard.models import Operator, OperatorSet

    again = catalog_load()
    assert again["created"] == 0 and again["updated"] == 0
    sizes = {s.slug: s.operators.count() for s in OperatorSet.objects.filter(builtin=True)}
    assert sizes == {"kgb-ms": 210, "kgb-mc": 110, "aten": 110, "vllm": 50, "cublas": 50}
    assert Operator.objects.get(operator_id="aten::cos").version == 1

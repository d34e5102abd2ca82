"""``manage.py judge_reference_kernels``: the catalog's reference kernels as a ranked method, queued once."""

from __future__ import annotations

from io import StringIO

from django.core.management import call_command

from evaluation.models import Run
from leaderboard.models import Kernel, Method, MethodKind, Submission
from leaderboard.reference_seed import FIRST_OPERATORS, KERNEL_DIR, SCAFFOLD, SYSTEM_USERNAME


def test_reference_kernels_are_queued_quick_ones_first_and_only_once(
    catalog, cpu_chip, django_user_model, django_capture_on_commit_callbacks, monkeypatch
):
    from evaluation import tasks

    sent: list[str] = []
    monkeypatch.setattr(
        tasks.judge_run, "apply_async", lambda args, kwargs=None, **options: sent.append(options["queue"])
    )
    out = StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("judge_reference_kernels", stdout=out)
    method = Method.objects.get(scaffold=SCAFFOLD)
    assert (method.kind, method.public, method.owner.username) == (MethodKind.LIBRARY, True, SYSTEM_USERNAME)
    assert not method.owner.has_usable_password()
    submissions = list(Submission.objects.filter(method=method).order_by("pk"))
    first = sorted(submissions[0].kernels.values_list("operator__operator_id", flat=True))
    assert first == sorted(FIRST_OPERATORS)
    files = len(list(KERNEL_DIR.glob("*.py")))
    kernels = Kernel.objects.filter(submission__method=method).count()
    assert kernels == Run.objects.filter(kernel__submission__method=method, chip=cpu_chip).count() == len(sent)
    assert set(sent) == {"chip.cpu-interpreter"} and kernels <= files
    assert f"reference kernels: {kernels} queued on cpu-interpreter in 2 submission(s)" in out.getvalue()

    again = StringIO()
    call_command("judge_reference_kernels", stdout=again)
    assert Kernel.objects.filter(submission__method=method).count() == kernels
    assert f"0 queued on cpu-interpreter in 0 submission(s); {kernels} already submitted" in again.getvalue()


def test_a_limit_takes_the_quick_ones(catalog, cpu_chip):
    call_command("judge_reference_kernels", "--limit", "3", stdout=StringIO())
    kernels = list(
        Kernel.objects.filter(submission__method__scaffold=SCAFFOLD).values_list("operator__operator_id", flat=True)
    )
    assert sorted(kernels) == sorted(FIRST_OPERATORS[:3])

"""The admin a curator uses: every model listed and searchable, and the actions do what they say."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.models import Run
from leaderboard.models import Operator, OperatorSet
from leaderboard.services import KernelUpload, method_get_or_create, submission_create

GOOD = "def cos(self):\n    return self\n\ndef cos_out(self, *, out):\n    return out\n"

ADMIN_PAGES = [
    "leaderboard_operator",
    "leaderboard_operatorset",
    "leaderboard_method",
    "leaderboard_submission",
    "leaderboard_kernel",
    "leaderboard_paperresult",
    "leaderboard_papercost",
    "evaluation_chip",
    "evaluation_worker",
    "evaluation_run",
    "evaluation_rejudgebatch",
]


@pytest.fixture
def staff_client(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="root-pass-123")
    client.force_login(admin)
    return client


@pytest.fixture
def submission(catalog, cpu_chip, user, django_capture_on_commit_callbacks):
    method = method_get_or_create(owner=user, scaffold="Agent", model="M")
    with django_capture_on_commit_callbacks(execute=False):
        return submission_create(
            owner=user,
            method=method,
            chips=[cpu_chip],
            uploads=[KernelUpload(operator_id="aten::cos", source_code=GOOD)],
        )


@pytest.mark.parametrize("page", ADMIN_PAGES)
def test_every_changelist_renders_with_search(staff_client, submission, page):
    response = staff_client.get(reverse(f"admin:{page}_changelist"), {"q": "cos"})
    assert response.status_code == 200


def test_non_staff_cannot_reach_the_admin(client, user):
    client.force_login(user)
    response = client.get(reverse("admin:leaderboard_operator_changelist"))
    assert response.status_code == 302 and "/admin/login/" in response.url


def test_deactivate_and_activate_operators(staff_client, catalog):
    ids = list(Operator.objects.filter(operator_id__in=["aten::cos", "aten::sin"]).values_list("pk", flat=True))
    url = reverse("admin:leaderboard_operator_changelist")
    staff_client.post(url, {"action": "deactivate", "_selected_action": ids})
    assert set(Operator.objects.filter(pk__in=ids).values_list("active", flat=True)) == {False}
    staff_client.post(url, {"action": "activate", "_selected_action": ids})
    assert set(Operator.objects.filter(pk__in=ids).values_list("active", flat=True)) == {True}


def test_add_operators_to_a_curated_set(staff_client, catalog):
    curated = OperatorSet.objects.create(slug="trig", title="Trigonometry")
    ids = list(Operator.objects.filter(operator_id__in=["aten::cos", "aten::sin"]).values_list("pk", flat=True))
    url = reverse("admin:leaderboard_operator_changelist")
    form_page = staff_client.post(url, {"action": "add_to_set", "_selected_action": ids})
    assert form_page.status_code == 200 and b"Add operators to a set" in form_page.content
    staff_client.post(url, {"action": "add_to_set", "_selected_action": ids, "apply": "1", "operator_set": curated.pk})
    assert sorted(curated.operators.values_list("operator_id", flat=True)) == ["aten::cos", "aten::sin"]


def test_rerun_creates_new_runs_and_keeps_the_old_verdicts(
    staff_client, submission, cpu_chip, django_capture_on_commit_callbacks
):
    original = Run.objects.get(kernel__submission=submission)
    url = reverse("admin:evaluation_run_changelist")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        staff_client.post(url, {"action": "rerun_same_chip", "_selected_action": [original.pk]})
    runs = Run.objects.filter(kernel__submission=submission).order_by("pk")
    assert [run.status for run in runs] == ["queued", "queued"]
    assert runs[0].pk == original.pk and len(callbacks) == 1

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        staff_client.post(
            reverse("admin:leaderboard_submission_changelist"),
            {"action": "rerun_on_chip", "_selected_action": [submission.pk], "apply": "1", "chip": cpu_chip.pk},
        )
    assert Run.objects.filter(kernel__submission=submission).count() == 3 and len(callbacks) == 1

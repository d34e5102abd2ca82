"""Shared fixtures: users, chips, the loaded catalog."""

from __future__ import annotations

import os

import pytest

# Unit tests never talk to a broker: tasks are sent after commit, and tests capture those callbacks.
os.environ.setdefault("CELERY_BROKER_URL", "memory://")


def pytest_configure(config) -> None:
    """Static files from the source folders, as with DEBUG: no collectstatic before a test run. (pytest-django
    has imported the settings by now; nothing has used the storage yet.) The hashed, compressed storage of
    production is tested on a real server (tests/site/test_production_server.py)."""
    from django.conf import settings

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Tests create many users; the production hasher is slow on purpose."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """Load the real catalog once into the test database; each test's transaction rolls back over it."""
    from django.core.management import call_command

    with django_db_blocker.unblock():
        call_command("load_catalog", verbosity=0)


@pytest.fixture
def catalog(db):
    """The real catalog and the known chips (reloaded only if a transactional test flushed them)."""
    from django.core.management import call_command

    from leaderboard.models import Operator

    if not Operator.objects.exists():
        call_command("load_catalog", verbosity=0)


@pytest.fixture
def cpu_chip(db):
    from evaluation.services import chip_ensure

    return chip_ensure(slug="cpu-interpreter")


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("alice", password="alice-pass-123")


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user("bob", password="bob-pass-123")


@pytest.fixture
def staff_user(django_user_model):
    return django_user_model.objects.create_user("carol", password="carol-pass-123", is_staff=True)


# A correct aten::cos kernel file (the function and its out= overload), the uploads' default.
COS = "def cos(self):\n    return self\n\ndef cos_out(self, *, out):\n    return out\n"


@pytest.fixture
def upload(catalog, cpu_chip, django_capture_on_commit_callbacks):
    """``upload(owner, count=1, chip=None)``: that many one-kernel aten::cos submissions of ``owner`` on
    ``chip`` (the CPU interpreter by default), each leaving one queued run (its message not sent); returns the
    runs' ids, oldest first."""
    from evaluation.models import Run
    from leaderboard.services import KernelUpload, method_get_or_create, submission_create

    def upload(owner, count: int = 1, chip=None) -> list[int]:
        method = method_get_or_create(owner=owner, scaffold="Agent", model="M")
        ids = []
        for _ in range(count):
            with django_capture_on_commit_callbacks(execute=False):
                submission = submission_create(
                    owner=owner,
                    method=method,
                    chips=[chip or cpu_chip],
                    uploads=[KernelUpload(operator_id="aten::cos", source_code=COS)],
                )
            ids.append(Run.objects.get(kernel__submission=submission).pk)
        return ids

    return upload


@pytest.fixture
def queue_h200_cos(upload, user):
    """A function that uploads an aten::cos kernel for the H200 (a chip whose timings mean something) and
    returns its queued run, the task left unsent: for tests of what a recorded GPU verdict keeps."""
    from evaluation import services
    from evaluation.models import Run

    def queue():
        return Run.objects.get(pk=upload(user, chip=services.chip_ensure(slug="nvidia-h200"))[0])

    return queue

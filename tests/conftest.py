"""Shared fixtures: users, chips, the loaded catalog."""

from __future__ import annotations

import os

import pytest

# Unit tests never talk to a broker: tasks are sent after commit, and tests capture those callbacks.
os.environ.setdefault("CELERY_BROKER_URL", "memory://")


@pytest.fixture
def catalog(db):
    """The real catalog loaded into the test database, with the known chips."""
    from django.core.management import call_command

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

"""API fixtures: a small catalog made in the test (independent of the full catalog's load time), users with
tokens, and one public and one private submission with finished runs."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from knox.models import AuthToken
from rest_framework.test import APIClient

from evaluation.models import Chip, Run, RunStatus
from leaderboard import best_verdicts
from leaderboard.models import Kernel, Method, Operator, OperatorSet, Submission, Visibility

COS_CODE = "def cos(self):\n    return self\n\ndef cos_out(self, *, out):\n    return out\n"
SIN_CODE = "def sin(self):\n    return self\n"


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    # The default hasher costs about a second per user on a loaded machine; these tests make 3 users each.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def fresh_throttles(request):
    """Throttle counts live in the cache (the database's table): one test's requests must not throttle the
    next. Only tests with a database have a cache to clear."""
    # (The cache's table is no model's: a transactional test's flush leaves it as it was.)
    names = set(request.fixturenames)
    database = "transactional_db" if names & {"transactional_db", "live_server"} else "db" if "db" in names else None
    if database is None:
        yield
        return
    request.getfixturevalue(database)
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def operators(db):
    # Exact expectations need a known catalog: swap the session's real one (tests/conftest.py) for three
    # operators inside this test's transaction, which rolls back afterwards.
    OperatorSet.objects.all().delete()
    Operator.objects.all().delete()
    Chip.objects.exclude(slug="cpu-interpreter").delete()
    cos = Operator.objects.create(
        operator_id="aten::cos",
        source="aten",
        name="cos",
        in_mc=True,
        entry_points=[
            {"name": "cos", "signature": "cos(self)"},
            {"name": "cos_out", "signature": "cos_out(self, *, out)"},
        ],
    )
    sin = Operator.objects.create(
        operator_id="aten::sin",
        source="aten",
        name="sin",
        in_mc=True,
        entry_points=[{"name": "sin", "signature": "sin(self)"}],
    )
    rms = Operator.objects.create(
        operator_id="vllm13::rms_norm",
        source="vllm",
        name="rms_norm",
        entry_points=[{"name": "rms_norm", "signature": "rms_norm(out, input, weight, epsilon)"}],
    )
    mc = OperatorSet.objects.create(slug="kgb-mc", title="KernelGenBench-MC", builtin=True, position=2)
    mc.operators.set([cos, sin])
    ms = OperatorSet.objects.create(slug="kgb-ms", title="KernelGenBench-MS", builtin=True, position=1)
    ms.operators.set([cos, sin, rms])
    hidden = OperatorSet.objects.create(slug="curated-draft", title="Draft", public=False, position=9)
    hidden.operators.set([cos])
    return {"cos": cos, "sin": sin, "rms": rms}


def token_client(user) -> APIClient:
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Token {AuthToken.objects.create(user=user)[1]}")
    return client


@pytest.fixture
def clients(user, other_user, staff_user):
    """anonymous / another user / owner / staff, each authenticated by token."""
    return {
        "anonymous": token_client(None),
        "other": token_client(other_user),
        "owner": token_client(user),
        "staff": token_client(staff_user),
    }


def finished_run(kernel: Kernel, chip, status: str = RunStatus.PASSED, speedup: float | None = None) -> Run:
    run = Run.objects.create(
        kernel=kernel,
        chip=chip,
        operator_version=kernel.operator.version,
        status=status,
        cases_total=4,
        cases_passed=4 if status == RunStatus.PASSED else 2,
        speedup=speedup,
        reason="all cases passed" if status == RunStatus.PASSED else "cos[2]: wrong",
        case_results=[{"case_id": "cos[0]", "passed": True}],
    )
    # Written finished, past the services: bring the boards' summary in line, as a verdict would.
    best_verdicts.runs_changed(run_ids=[run.pk])
    return run


@pytest.fixture
def world(operators, cpu_chip, user, staff_user):
    """Alice's public and private submissions (cos passed / sin failed; a private cos) with finished runs."""
    method = Method.objects.create(scaffold="Agent", model="M1", owner=user)
    public = Submission.objects.create(owner=user, method=method, visibility=Visibility.PUBLIC)
    private = Submission.objects.create(owner=user, method=method, visibility=Visibility.PRIVATE)
    public_cos = Kernel.objects.create(
        submission=public,
        operator=operators["cos"],
        source_code=COS_CODE,
        sha256=Kernel.hash_source(COS_CODE),
        filename="aten__cos.py",
        total_tokens=1000,
    )
    public_sin = Kernel.objects.create(
        submission=public,
        operator=operators["sin"],
        source_code=SIN_CODE,
        sha256=Kernel.hash_source(SIN_CODE),
        filename="aten__sin.py",
        total_tokens=500,
    )
    private_cos = Kernel.objects.create(
        submission=private,
        operator=operators["cos"],
        source_code="# secret\n" + COS_CODE,
        sha256="x" * 64,
        filename="aten__cos.py",
    )
    runs = {
        "public_cos": finished_run(public_cos, cpu_chip),
        "public_sin": finished_run(public_sin, cpu_chip, RunStatus.FAILED_CORRECTNESS),
        "private_cos": finished_run(private_cos, cpu_chip),
    }
    private_method = Method.objects.create(scaffold="Secret", model="", owner=user, public=False)
    return {
        "method": method,
        "private_method": private_method,
        "public": public,
        "private": private,
        "kernels": {"public_cos": public_cos, "public_sin": public_sin, "private_cos": private_cos},
        "runs": runs,
    }

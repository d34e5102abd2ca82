"""Every board, plot and export asks the database the same number of questions however long the history behind
it: they read the best-verdict summary, not the runs."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluation.models import Run, RunStatus
from leaderboard import best_verdicts, selectors
from leaderboard.models import Kernel, Submission, Visibility
from tests.leaderboard.board_data import make_world

PAGES = (
    "/?chip=nvidia-h200&set=kgb-ms",
    "/?chip=platform-a&set=kgb-ms&sort=-aten.speedup&kind=agent",
    "/sets/pointwise/?chip=nvidia-h200",
    "/boards/multi-chip/?set=kgb-mc",
    "/boards/cost/?chip=nvidia-h200&set=kgb-ms",
    "/boards/matched/?chip=nvidia-h200&set=kgb-ms",
    "/boards/portability/?set=kgb-mc",
    "/plots/?chip=nvidia-h200&set=kgb-ms",
    "/?chip=nvidia-h200&set=kgb-ms&format=csv",
    "/boards/multi-chip/?set=kgb-mc&format=json",
    "/boards/cost/?chip=nvidia-h200&set=kgb-ms&format=csv",
    "/boards/matched/?chip=nvidia-h200&set=kgb-ms&format=json",
    "/api/leaderboards/?chip=nvidia-h200&set=kgb-ms",
    "/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&format=csv",
    "/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&operators=1",
    "/operators/aten::cos/?chip=nvidia-h200",
)


@pytest.fixture
def world(django_user_model):
    return make_world(
        owner=django_user_model.objects.create_user("alice", password=None),
        other=django_user_model.objects.create_user("bob", password=None),
    )


def grow_history(world, *, rounds: int) -> int:
    """More of everything the boards summarise: per round, each method's new public and private submissions
    with a kernel per operator, judged on every chip, each judged twice. Returns how many runs there are."""
    statuses = [RunStatus.PASSED, RunStatus.FAILED_CORRECTNESS, RunStatus.PASSED, RunStatus.TIMEOUT]
    made = []
    for round_number in range(rounds):
        for name in ("fast", "slow", "secret"):
            method = world.methods[name]
            for visibility in (Visibility.PUBLIC, Visibility.PRIVATE):
                submission = Submission.objects.create(owner=method.owner, method=method, visibility=visibility)
                for index, operator in enumerate(world.operators.values()):
                    kernel = Kernel.objects.create(
                        submission=submission,
                        operator=operator,
                        source_code="def f(x):\n    return x\n",
                        sha256="0" * 64,
                        total_tokens=100 * (index + 1),
                    )
                    for chip in world.chips.values():
                        for attempt in range(2):
                            status = statuses[(round_number + index + attempt) % len(statuses)]
                            made.append(
                                Run.objects.create(
                                    kernel=kernel,
                                    chip=chip,
                                    operator_version=operator.version,
                                    status=status,
                                    speedup=0.5 + index + attempt if status == RunStatus.PASSED else None,
                                    case_results=[{"case_id": "c0", "candidate_ms": 1.0, "roofline_floor_ms": 0.5}],
                                )
                            )
    # Written finished, past the services: bring the summary in line, as each verdict would.
    best_verdicts.runs_changed(run_ids=[run.pk for run in made])
    return Run.objects.count()


def queries_per_page(client) -> dict[str, int]:
    counts = {}
    for url in PAGES:
        selectors.clear_board_memo()  # cold: nothing memoised
        with CaptureQueriesContext(connection) as queries:
            response = client.get(url)
        assert response.status_code == 200, url
        counts[url] = len(queries)
        if not url.startswith("/operators/"):  # the operator page picks its chip, and loads its standings' runs
            assert not [q["sql"] for q in queries if '"evaluation_run"' in q["sql"]], url
    return counts


def test_query_counts_per_page_do_not_grow_with_the_runs(world, client):
    small_runs = Run.objects.count()
    small = queries_per_page(client)
    large_runs = grow_history(world, rounds=4)
    large = queries_per_page(client)
    assert large_runs > 20 * small_runs
    assert large == small
    # A page's few reads (the API's include its throttle's cache table): a handful, not one per method or run.
    assert max(small.values()) <= 20, small

"""Boards that stay fast: every board, plot and export asks the database the same number of questions however
long the history behind it (they read the best-verdict summary, not the runs), and what they write is what
Django's slower helpers would."""

from __future__ import annotations

import datetime
import decimal
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.html import json_script
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer

from evaluation.models import Run, RunStatus
from leaderboard import best_verdicts, selectors
from leaderboard.api import exports
from leaderboard.models import Kernel, Submission, Visibility
from leaderboard.templatetags.board import figure_script
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


@pytest.mark.parametrize(
    ("figure", "index"), [("device", "best_verdict_clean_speedup"), ("protocol", "best_verdict_clean_protocol")]
)
def test_each_speedup_figure_is_read_from_its_own_partial_index(world, figure, index):
    """What keeps the matched board and the speedup plots cheap at scale: a figure's clean passes are read
    from that figure's partial index (on PostgreSQL a covering one: from the index alone), not from every
    row of the chip. The query as the selector sends it, planned by the database in use."""
    selectors.clear_board_memo()
    with CaptureQueriesContext(connection) as queries:
        selectors.clean_speedups(
            chip=world.chips["nvidia-h200"],
            operator_set=world.sets["kgb-ms"],
            method_ids=[method.pk for method in world.methods.values()],
            figure=figure,
        )
    (read,) = [query["sql"] for query in queries if '"leaderboard_bestverdict"' in query["sql"]]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL enable_seqscan = off")  # a table this small is otherwise read whole
            cursor.execute(f"EXPLAIN {read}")
        else:
            cursor.execute(f"EXPLAIN QUERY PLAN {read}")
        plan = " ".join(str(part) for line in cursor.fetchall() for part in line)
    assert index in plan, plan
    if connection.vendor == "postgresql":
        assert "Index Only Scan" in plan, plan


@pytest.mark.parametrize(
    "figure",
    [
        {"text": ["</script><b>&amp;", "a<>b&c", "é ✓ \u2028"], "y": [1.5, None, 2e-300, True, 3e-05, 1e22]},
        {"when": datetime.date(2026, 12, 1), "amount": decimal.Decimal("1.5"), 3: "int key"},
        {"title": gettext_lazy("Accuracy"), "x": [1, 2]},
    ],
)
def test_figure_script_writes_what_json_script_writes(figure):
    """The same element and escapes as ``json_script``, and the same values when the browser parses it (its
    text is read raw, entities and all: there must be no ``<``, ``>`` or ``&`` in it)."""
    ours, django = figure_script(figure, "plots-data"), json_script(figure, "plots-data")
    start, end = '<script id="plots-data" type="application/json">', "</script>"
    assert ours.startswith(start) and ours.endswith(end) and ours.count("</script>") == 1
    text = ours[len(start) : -len(end)]
    assert not {"<", ">", "&"} & set(text)
    assert json.loads(text) == json.loads(django[len(start) : -len(end)])
    if not isinstance(figure.get("text"), list):  # orjson's types are DjangoJSONEncoder's bytes
        assert ours == django


# The template markup each cell tag replaced, verbatim: the tags must write exactly what it wrote (the protocol
# speedup's cell, added since, by its own tag).
MARKUP = {
    "matrix": """{% load board %}{% for cell in line.cells %}<td class="cell {{ cell.state }}" title="{{ line.operator_id }} on {{ cell.chip.label }}: {{ cell.state }}{% if cell.outcome.speedup %}, {{ cell.outcome.speedup|num:2 }}×{% endif %}{% if cell.outcome.stale %} (stale){% endif %}">{% if cell.run_id %}<a href="{% url 'leaderboard:run' cell.run_id %}">{% if cell.state == "passed" %}✓{% else %}✗{% endif %}</a>{% elif cell.state == "passed" %}✓{% elif cell.state == "failed" %}✗{% endif %}</td>{% endfor %}""",  # noqa: E501
    "portability": """{% load board %}{% for c in picked_chips %}{% with s=row.per_chip|dictget:c.pk ar=row.accuracy_ratio|dictget:c.pk sr=row.speedup_ratio|dictget:c.pk p=row.ported|dictget:c.pk %}
      <td class="num">{% if s %}{{ s.accuracy_pct|num:0 }}%{% if ar is not None and c != reference %} <small>({{ ar|num:2 }}× of ref.)</small>{% endif %}
        <br>{% if s.speedup_geomean %}{{ s.speedup_geomean|num:2 }}×{% if sr is not None and c != reference %} <small>({{ sr|num:2 }}×)</small>{% endif %}{% else %}<small>speed unknown</small>{% endif %}{% else %}–{% endif %}
        {% if p %}<br><small class="ported" title="Kernels this method wrote for another chip, judged on {{ c.label }}">ported: {{ p.accuracy_pct|num:0 }}%</small>{% endif %}</td>
    {% endwith %}{% endfor %}""",  # noqa: E501
    "chips": """{% load board %}{% for c in picked_chips %}{% with s=row.per_chip|dictget:c.pk %}
        <td class="num">{% if s %}{{ s.accuracy_pct|num:1 }}<small> ({{ s.solved }}/{{ s.operators_total }})</small>{% else %}<span title="no kernels judged here">–</span>{% endif %}</td>
        <td class="num protocol">{% protocol_speedup_cell s %}</td>
        <td class="num">{% if s and s.speedup_geomean %}{{ s.speedup_geomean|num:2 }}×<small> ({{ s.speedup_covered }})</small>{% else %}–{% endif %}</td>
      {% endwith %}{% endfor %}""",  # noqa: E501
    "views": """{% load board %}{% for view in views %}{% with s=row.summaries|dictget:view %}
        <td class="num">{% if s %}{{ s.accuracy_pct|num:1 }}<small> ({{ s.solved }}/{{ s.operators_total }})</small>{% else %}–{% endif %}</td>
        <td class="num protocol">{% protocol_speedup_cell s %}</td>
        <td class="num">{% if s and s.speedup_geomean %}{{ s.speedup_geomean|num:2 }}×<small> ({{ s.speedup_covered }})</small>{% else %}<span title="unknown: no passed operator with a meaningful timing">–</span>{% endif %}</td>
      {% endwith %}{% endfor %}""",  # noqa: E501
}
TAGS = {
    "matrix": "{% load board %}{% matrix_cells line %}",
    "portability": "{% load board %}{% portability_cells row picked_chips reference %}",
    "chips": "{% load board %}{% chip_cells row picked_chips %}",
    "views": "{% load board %}{% view_cells row views %}",
}


def test_cell_tags_write_what_the_template_markup_wrote(db):
    from django.template import Context, Template

    from evaluation.models import Chip
    from leaderboard.metrics import OperatorOutcome, Summary
    from leaderboard.selectors import ChipRow, LeaderboardRow

    chips = [
        Chip(pk=1, slug="ref", display_name="Reference"),
        Chip(pk=2, slug="a", display_name="A", public_alias='Chip <"A"> & co'),
        Chip(pk=3, slug="b", display_name="B"),
    ]

    def summary(accuracy, speedup, covered=3, protocol=None, protocol_covered=0):
        return Summary(
            10,
            int(accuracy / 10),
            accuracy,
            speedup,
            covered,
            protocol_speedup_geomean=protocol,
            protocol_speedup_covered=protocol_covered,
        )

    chip_row = ChipRow(
        method=None,
        per_chip={
            1: summary(87.5, 1.23456, protocol=0.987, protocol_covered=2),
            2: summary(25.0, None, 0),
            3: summary(0.0, 0.5),
        },
        ported={2: summary(12.5, 0.8)},
        accuracy_ratio={1: 1.0, 2: 0.2857, 3: None},
        speedup_ratio={1: 1.0, 2: None, 3: 0.405},
    )
    sparse_row = ChipRow(method=None, per_chip={3: summary(50.0, 2.0)}, ported={1: summary(5.0, None)})
    outcome = OperatorOutcome("aten::add.Tensor", "aten", solved=True, speedup=1.5, stale=True)
    line = {
        "operator_id": "aten::add.Tensor",
        "cells": [
            {"chip": chips[0], "outcome": outcome, "state": "passed", "run_id": 7},
            {
                "chip": chips[1],
                "outcome": OperatorOutcome("x", "aten", speedup=None),
                "state": "failed",
                "run_id": None,
            },
            {"chip": chips[2], "outcome": None, "state": "none"},
            {"chip": chips[1], "outcome": outcome, "state": "passed"},
            {"chip": chips[2], "outcome": OperatorOutcome("x", "aten"), "state": "failed", "run_id": 12},
        ],
    }
    views_row = LeaderboardRow(
        method=None,
        summaries={"overall": summary(40.0, 1.1, protocol=1.3, protocol_covered=3), "aten": summary(10.0, None, 0)},
    )
    contexts = [
        {"line": line, "row": chip_row, "picked_chips": chips, "reference": chips[0]},
        {"line": line, "row": sparse_row, "picked_chips": chips[::-1], "reference": chips[1]},
        {"row": views_row, "views": ["overall", "aten", "vllm"], "picked_chips": chips, "reference": None},
    ]
    for context in contexts:
        for name in MARKUP:
            if name == "matrix" and "line" not in context or name == "views" and "views" not in context:
                continue
            if name in ("portability", "chips") and not isinstance(context["row"], ChipRow):
                continue
            expected = Template(MARKUP[name]).render(Context(context))
            assert Template(TAGS[name]).render(Context(context)) == expected, name


def test_api_leaderboard_writes_what_drf_and_verdict_outcome_would(world, client):
    """The API's JSON (orjson, outcomes built from the columns) is DRF's JSON of the same data, byte for
    byte, and each outcome is what ``verdict_outcome`` makes of its summary row."""
    grow_history(world, rounds=2)
    h200 = world.chips["nvidia-h200"]
    operators = selectors.set_operators(operator_set=world.sets["kgb-ms"])
    by_id = {op.operator_id: op for op in operators.values()}
    for url in (
        "/api/leaderboards/?chip=nvidia-h200&set=kgb-ms",
        "/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&operators=1",
    ):
        selectors.clear_board_memo()
        response = client.get(url)
        assert response.status_code == 200
        assert response.content == JSONRenderer().render(response.data)
    rows = response.data["rows"]
    assert sum(len(row["outcomes"]) for row in rows) >= 4
    for row in rows:
        verdicts = selectors.board_verdicts(
            operators=operators, chip_id=h200.pk, native=True, method_id=row["method"]["id"]
        )
        expected = sorted(
            (vars(selectors.verdict_outcome(verdict, operators[verdict.operator_pk])) for verdict in verdicts),
            key=lambda outcome: outcome["operator_id"],
        )
        assert row["outcomes"] == expected
        assert all(by_id[outcome["operator_id"]].source == outcome["source"] for outcome in row["outcomes"])


@pytest.mark.parametrize(
    "data",
    [
        {"small": 3e-05, "large": 1e22, "text": "é < \u2028 \u2029", "none": None, "nested": [[1, 2.5], (True,)]},
        {"when": datetime.datetime(2026, 12, 1, 16, 0, 0, 123456, tzinfo=datetime.UTC)},
        {"amount": decimal.Decimal("1.50"), "big": 2**70},
        [{"label": gettext_lazy("Overall")}],
    ],
)
def test_plain_json_renderer_gives_drf_values(data):
    """Plain data gets the same values as DRF's renderer (the line separators escaped as DRF does); what
    orjson would write differently (dates, decimals, huge integers, lazy strings) is DRF's own output."""
    fast, drf = exports.PlainJSONRenderer().render(data), JSONRenderer().render(data)
    assert json.loads(fast) == json.loads(drf)
    assert b"\xe2\x80\xa8" not in fast and b"\xe2\x80\xa9" not in fast
    if "small" not in str(data):
        assert fast == drf
    indented = exports.PlainJSONRenderer().render(data, "application/json; indent=4")
    assert indented == JSONRenderer().render(data, "application/json; indent=4")

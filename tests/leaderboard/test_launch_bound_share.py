"""The launch-bound share beside every protocol speedup shown: how much of the figure is the race between the
host's launch path and the L2 flush (evaluation.Run.protocol_launch_bound_share). Carried by the boards'
summary from the deciding run, averaged over operators (each weighs the same) on the boards, their downloads
and the API, per run and per operator on the method, operator and run pages; unknown is an em dash or null."""

from __future__ import annotations

import csv
import io
import re

import pytest

from evaluation.models import Run
from leaderboard import best_verdicts, selectors
from leaderboard.templatetags.board import LAUNCH_BOUND_CUBLAS, LAUNCH_BOUND_UNKNOWN
from tests.leaderboard.board_data import give_protocol, make_world

FAST = "Fast Agent + Opus-4.6"
SLOW = "Pass@1 + GLM-5.0"


@pytest.fixture(autouse=True)
def fresh_board_cache():
    selectors.clear_board_memo()


@pytest.fixture
def world(django_user_model):
    """board_data's world with protocol speedups and launch-bound shares: Fast Agent's cos (1.6, every case
    launch-bound) and add (0.4, half) on the H200; its cuBLAS saxpy has no protocol speedup (and a share a
    judge would never give without one: it must not count); its Platform A cos (1.1) was judged before the
    marks (no share); the private add (7.0, share 0) counts nowhere; Pass@1 has no protocol speedup."""
    world = make_world(
        owner=django_user_model.objects.create_user("alice", password=None),
        other=django_user_model.objects.create_user("bob", password=None),
    )
    give_protocol(world.runs["fast_cos"], 1.6, interval=(1.5, 1.7))
    give_protocol(world.runs["fast_add"], 0.4)
    give_protocol(world.runs["private_add"], 7.0)
    give_protocol(world.runs["fast_cos_ascend"], 1.1)
    for name, share in (("fast_cos", 1.0), ("fast_add", 0.5), ("private_add", 0.0), ("fast_saxpy", 0.9)):
        Run.objects.filter(pk=world.runs[name].pk).update(protocol_launch_bound_share=share)
    best_verdicts.runs_changed(run_ids=[run.pk for run in world.runs.values()])
    for run in world.runs.values():
        run.refresh_from_db()
    return world


def h200_rows(world) -> dict[str, selectors.LeaderboardRow]:
    rows = selectors.leaderboard_rows(chip=world.chips["nvidia-h200"], operator_set=world.sets["kgb-ms"])
    return {str(row.method): row for row in rows}


def test_the_summary_carries_the_deciding_runs_share_and_a_rebuild_agrees(world):
    verdict = selectors.BestVerdict.objects.get(
        method=world.methods["fast"], operator=world.operators["aten::add"], chip=world.chips["nvidia-h200"]
    )
    assert (verdict.protocol_speedup, verdict.protocol_launch_bound_share) == (0.4, 0.5)
    rows = h200_rows(world)
    overall = rows[FAST].summaries["overall"]
    # The mean over cos (1.0) and add (0.5); saxpy's 0.9 has no protocol speedup beside it and the private 0.0
    # is not counted.
    assert overall.protocol_launch_bound_share == pytest.approx(0.75) and overall.protocol_launch_bound_covered == 2
    assert rows[FAST].summaries["cublas"].protocol_launch_bound_share is None
    assert rows[SLOW].summaries["overall"].protocol_launch_bound_share is None
    totals = selectors.BoardTotal.objects.get(
        operator_set=world.sets["kgb-ms"],
        method=world.methods["fast"],
        chip=world.chips["nvidia-h200"],
        native=True,
        source="aten",
    )
    assert (totals.protocol_launch_bound_covered, totals.protocol_launch_bound_sum) == (2, pytest.approx(1.5))
    # Maintained as a rebuild from the runs would write it: rows and set totals.
    assert not best_verdicts.differences()
    best_verdicts.rebuild()
    assert not best_verdicts.differences()
    selectors.clear_board_memo()
    again = h200_rows(world)[FAST].summaries["overall"]
    assert again.protocol_launch_bound_share == pytest.approx(0.75)


def test_a_new_verdict_moves_the_share_with_the_kernel_that_decides(world):
    """A re-judgement of cos with another share: the summary follows, still equal to a rebuild."""
    cos = world.runs["fast_cos"]
    again = Run.objects.create(
        kernel=cos.kernel,
        chip=cos.chip,
        operator_version=1,
        status="passed",
        speedup=2.5,
        protocol_speedup=1.2,
        protocol_launch_bound_share=0.25,
    )
    best_verdicts.runs_changed(run_ids=[again.pk])
    selectors.clear_board_memo()
    assert h200_rows(world)[FAST].summaries["overall"].protocol_launch_bound_share == pytest.approx((0.25 + 0.5) / 2)
    assert not best_verdicts.differences()


def test_a_share_without_a_protocol_speedup_is_not_counted(world):
    """The summary's share is over the operators its protocol speedup covers: a stray share on a run without
    one (saxpy's) stays out, so the share and the figure it qualifies are over the same operators."""
    totals = selectors.BoardTotal.objects.get(
        operator_set=world.sets["kgb-ms"],
        method=world.methods["fast"],
        chip=world.chips["nvidia-h200"],
        native=True,
        source="cublas",
    )
    assert (totals.protocol_covered, totals.protocol_launch_bound_covered, totals.protocol_launch_bound_sum) == (
        0,
        0,
        0.0,
    )


def test_boards_show_the_share_beside_the_protocol_speedup_and_link_its_definition(world, client):
    html = client.get("/?chip=nvidia-h200&set=kgb-ms").content.decode()
    fast_row = html[html.index(f">{FAST}<") :].split("</tr>", 1)[0]
    assert "75% launch-bound" in fast_row and "mean over its 2 operators" in fast_row
    assert "/about/#launch-bound" in html
    # Pass@1 has no protocol speedup: no share either, only the speedup's em dash.
    slow_row = html[html.index(f">{SLOW}<") :].split("</tr>", 1)[0]
    assert "launch-bound</small>" not in slow_row
    multi = client.get("/boards/multi-chip/?set=kgb-ms").content.decode()
    fast_multi = multi[multi.index(f">{FAST}<") :].split("</tr>", 1)[0]
    assert "75% launch-bound" in fast_multi
    # Platform A's cos has a protocol speedup judged before the marks: its share is unknown, and says why.
    assert LAUNCH_BOUND_UNKNOWN.replace("'", "&#x27;") in fast_multi
    about = client.get("/about/").content.decode()
    assert 'id="launch-bound"' in about and "97.6%" in about and "h200-2026-12-03-evening-head" in about
    assert 'href="#launch-bound"' in about


def test_boards_sort_by_the_share_with_unknown_last(world, client):
    def order(sort: str) -> list[str]:
        html = client.get(f"/?chip=nvidia-h200&set=kgb-ms&sort={sort}").content.decode()
        return re.findall(r'<td class="method"><a href="/methods/\d+/">([^<]+)</a>', html)

    assert order("-overall.protocol_launch_bound_share") == [FAST, SLOW]
    assert order("overall.protocol_launch_bound_share") == [FAST, SLOW]
    html = client.get("/?chip=nvidia-h200&set=kgb-ms").content.decode()
    assert "sort=-overall.protocol_launch_bound_share" in html


def test_board_downloads_carry_the_share_next_to_the_protocol_columns(world, client):
    body = client.get("/?chip=nvidia-h200&set=kgb-ms&format=csv").content.decode()
    reader = csv.DictReader(io.StringIO(body))
    columns = reader.fieldnames
    assert columns.index("overall_protocol_launch_bound_share") == columns.index("overall_protocol_speedup") + 2
    rows = {row["method"]: row for row in reader}
    assert rows[FAST]["overall_protocol_launch_bound_share"] == "0.75"
    assert rows[FAST]["cublas_protocol_launch_bound_share"] == ""
    assert rows[SLOW]["overall_protocol_launch_bound_share"] == ""
    document = client.get("/?chip=nvidia-h200&set=kgb-ms&format=json").json()
    assert "one L2 flush" in document["view"]["speedup_columns"]["protocol_launch_bound_share"]
    by_method = {row["method"]: row for row in document["rows"]}
    assert by_method[FAST]["overall_protocol_launch_bound_share"] == 0.75
    assert by_method[SLOW]["overall_protocol_launch_bound_share"] is None
    multi = client.get("/boards/multi-chip/?set=kgb-ms&format=json").json()
    fast_multi = next(row for row in multi["rows"] if row["method"] == FAST)
    assert fast_multi["nvidia-h200_protocol_launch_bound_share"] == 0.75
    assert fast_multi["platform-a_protocol_launch_bound_share"] is None
    sorted_rows = client.get("/?chip=nvidia-h200&set=kgb-ms&sort=overall.protocol_launch_bound_share&format=json")
    assert [row["method"] for row in sorted_rows.json()["rows"]] == [FAST, SLOW]


def test_the_matched_protocol_board_shows_the_share_over_its_common_operators(world, client):
    """Pass@1's cos gets a protocol speedup from a judge before the marks (no share): the common set by the
    protocol figure is cos alone, where Fast Agent's share is 100 % (its own-set share, over cos and add, stays
    75 %) and Pass@1's is unknown, saying why; the download carries both shares, the device figure neither."""
    give_protocol(world.runs["slow_cos"], 1.2)
    best_verdicts.runs_changed(run_ids=[world.runs["slow_cos"].pk])
    selectors.clear_board_memo()
    response = client.get("/boards/matched/?chip=nvidia-h200&set=kgb-ms&figure=protocol")
    assert response.status_code == 200 and response.context["common"] == ["aten::cos"]
    shares = {str(row.method): (row.launch_bound_share, row.launch_bound_covered) for row in response.context["rows"]}
    assert shares == {FAST: (1.0, 1), SLOW: (None, 0)}
    html = response.content.decode()
    fast_row = html[html.index(f">{FAST}<") :].split("</tr>", 1)[0]
    matched_cell, _, own_cell = fast_row.split('<td class="num">')[1:4]
    assert "100% launch-bound" in matched_cell and "mean over its 1 operator:" in matched_cell
    assert "75% launch-bound" in own_cell and "mean over its 2 operators" in own_cell
    slow_row = html[html.index(f">{SLOW}<") :].split("</tr>", 1)[0]
    assert slow_row.count("— launch-bound</small>") == 2  # matched and own: judged before the marks
    document = client.get("/boards/matched/?chip=nvidia-h200&set=kgb-ms&figure=protocol&format=json").json()
    by_method = {row["method"]: row for row in document["rows"]}
    fast = by_method[FAST]
    assert (fast["matched_protocol_launch_bound_share"], fast["own_protocol_launch_bound_share"]) == (1.0, 0.75)
    assert by_method[SLOW]["matched_protocol_launch_bound_share"] is None
    device = client.get("/boards/matched/?chip=nvidia-h200&set=kgb-ms&format=csv").content.decode()
    assert "launch_bound" not in device.splitlines()[0]
    assert "launch-bound</small>" not in client.get("/boards/matched/?chip=nvidia-h200&set=kgb-ms").content.decode()


def test_the_protocol_plots_say_how_much_of_each_figure_is_the_launch_race(world, client):
    import json

    html = client.get("/plots/?chip=nvidia-h200&set=kgb-ms").content.decode()
    figures = json.loads(re.search(r'<script id="plots-data" type="application/json">(.*?)</script>', html, re.S)[1])
    (trace,) = figures["protocol-speedup-heatmap"]["data"]
    words = {
        (method, chip): text
        for method, line in zip(trace["y"], trace["customdata"], strict=True)
        for chip, text in zip(trace["x"], line, strict=True)
    }
    assert words[(FAST, "NVIDIA H200")] == "75% of its timed cases launch-bound"
    assert words[(FAST, "Platform A")] == "launch-bound share unknown"  # judged before the marks
    assert words[(SLOW, "NVIDIA H200")] == ""  # no protocol speedup, nothing to qualify
    assert trace["hovertemplate"].endswith("<br>%{customdata}<extra></extra>")
    assert "customdata" not in figures["speedup-heatmap"]["data"][0]
    # Each point of the protocol distribution says its own operator's share.
    (box,) = figures["protocol-speedup-distribution"]["data"]
    assert dict(zip(box["text"], box["customdata"], strict=True)) == {
        "aten::cos": "100% of its timed cases launch-bound",
        "aten::add": "50% of its timed cases launch-bound",
    }
    assert "customdata" not in figures["speedup-distribution"]["data"][0]


def test_the_api_carries_the_share_in_summaries_outcomes_runs_and_csv(world, client):
    board = client.get("/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&operators=1").json()
    fast = next(row for row in board["rows"] if row["method"]["label"] == FAST)
    assert fast["summaries"]["overall"]["protocol_launch_bound_share"] == pytest.approx(0.75)
    assert fast["summaries"]["cublas"]["protocol_launch_bound_share"] is None
    outcomes = {outcome["operator_id"]: outcome for outcome in fast["outcomes"]}
    assert outcomes["aten::add"]["protocol_launch_bound_share"] == 0.5
    flat = csv.DictReader(
        io.StringIO(client.get("/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&format=csv").content.decode())
    )
    fast_line = next(row for row in flat if row["method"] == FAST)
    assert float(fast_line["overall_protocol_launch_bound_share"]) == pytest.approx(0.75)
    assert client.get(f"/api/runs/{world.runs['fast_add'].pk}/").json()["protocol_launch_bound_share"] == 0.5
    listed = b"".join(client.get("/api/exports/runs/?format=csv").streaming_content).decode()
    runs = {row["id"]: row for row in csv.DictReader(io.StringIO(listed))}
    assert runs[str(world.runs["fast_cos"].pk)]["protocol_launch_bound_share"] == "1.0"
    assert runs[str(world.runs["slow_cos"].pk)]["protocol_launch_bound_share"] == ""
    schema = client.get("/api/schema/").content.decode()
    assert "protocol_launch_bound_share" in schema and "one L2 flush" in schema


def test_method_and_operator_pages_show_the_share_beside_the_protocol_speedup(world, client):
    method_html = client.get(f"/methods/{world.methods['fast'].pk}/?set=kgb-ms").content.decode()
    assert "75% launch-bound" in method_html
    ranking = client.get("/operators/aten::cos/?chip=nvidia-h200").content.decode()
    ranking = ranking[ranking.index('id="operator-ranking"') :]
    fast_row = ranking[ranking.index(FAST) :].split("</tr>", 1)[0]
    assert ">100%</span>" in fast_row
    slow_row = ranking[ranking.index(SLOW) :].split("</tr>", 1)[0]
    assert "no protocol speedup" in slow_row
    # A cuBLAS run with a protocol speedup has no share: its loop has no flush to race.
    Run.objects.filter(pk=world.runs["fast_saxpy"].pk).update(protocol_speedup=1.1, protocol_launch_bound_share=None)
    saxpy = client.get("/operators/cublas::cublasSaxpy_v2/?chip=nvidia-h200").content.decode()
    assert LAUNCH_BOUND_CUBLAS.replace("'", "&#x27;") in saxpy


@pytest.mark.parametrize(
    "query",
    [
        "sort=overall.protocol_launch_bound_share%00",
        "sort=-nvidia-h200.protocol_launch_bound_share<script>",
        "sort=..protocol_launch_bound_share",
    ],
)
def test_odd_sort_keys_never_fail(world, client, query):
    assert client.get(f"/?chip=nvidia-h200&set=kgb-ms&{query}").status_code in (200, 400)
    assert client.get(f"/boards/multi-chip/?set=kgb-ms&{query}").status_code in (200, 400)


def test_the_migrations_data_step_rebuilds_the_summary_with_the_shares(world):
    """Migration 0010's rebuild runs against the historical models of its state: on a history whose summary
    predates the shares (cleared here), it writes what the live code maintains."""
    from django.db import connection
    from django.db.migrations.loader import MigrationLoader

    selectors.BestVerdict.objects.update(protocol_launch_bound_share=None)
    selectors.BoardTotal.objects.update(protocol_launch_bound_covered=0, protocol_launch_bound_sum=0.0)
    assert best_verdicts.differences()
    state = MigrationLoader(connection).project_state(("leaderboard", "0010_protocol_launch_bound_share"))
    best_verdicts.rebuild(apps=state.apps)
    assert not best_verdicts.differences()
    selectors.clear_board_memo()
    assert h200_rows(world)[FAST].summaries["overall"].protocol_launch_bound_share == pytest.approx(0.75)

"""The protocol's speedup (PROTOCOL 6, the paper's headline) beside the device-time one, everywhere a speedup is
shown: stored from the judge's result, on the run page and its per-case download (under the run page's access
rules), in the boards' summary, on the boards (the matched board by either figure), their downloads, the API and
the plots, and never mixed with the other."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import pytest

from evaluation import services
from evaluation.judge.job import CaseResult, JudgeResult
from evaluation.models import Run, RunStatus
from kgbweb.cli.main import print_runs
from leaderboard import best_verdicts, selectors
from leaderboard.templatetags.board import PROTOCOL_UNKNOWN_NONE, PROTOCOL_UNKNOWN_OLD
from tests.leaderboard.board_data import give_protocol, make_world, protocol_timing

EM_DASH = "—"


@pytest.fixture(autouse=True)
def fresh_board_cache():
    selectors.clear_board_memo()


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("alice", password=None)


@pytest.fixture
def other_user(django_user_model):
    return django_user_model.objects.create_user("bob", password=None)


@pytest.fixture
def staff_user(django_user_model):
    return django_user_model.objects.create_user("carol", password=None, is_staff=True)


@pytest.fixture
def world(user, other_user):
    """board_data's world with protocol speedups on some runs: Fast Agent's cos (1.6) and add (0.4) on the
    H200; its cuBLAS saxpy (device-time 1.0) and Pass@1's cos were judged without the protocol stage (no
    protocol speedup); the private submission's add has one (7.0) that no board may count."""
    world = make_world(owner=user, other=other_user)
    give_protocol(world.runs["fast_cos"], 1.6, interval=(1.5, 1.7))
    give_protocol(world.runs["fast_add"], 0.4)
    give_protocol(world.runs["private_add"], 7.0)
    give_protocol(world.runs["fast_cos_ascend"], 1.1)
    best_verdicts.runs_changed(run_ids=[run.pk for run in world.runs.values()])
    for run in world.runs.values():
        run.refresh_from_db()
    return world


# Fast Agent's overall figures on the H200, by hand: device-time over cos, add and saxpy, protocol over cos and
# add (saxpy has none): geometric means over its passed operators only.
FAST_DEVICE = (2.0 * 0.5 * 1.0) ** (1 / 3)
FAST_PROTOCOL = math.sqrt(1.6 * 0.4)


# --- Stored from the judge's result --------------------------------------------------------------------


@pytest.fixture
def h200_run(queue_h200_cos):
    return queue_h200_cos()


def judged_result(**fields) -> JudgeResult:
    case = CaseResult(
        case_id="cos[0]",
        tier="public",
        params={"shape": [1024]},
        passed=True,
        timed=True,
        reference_ms=0.02,
        candidate_ms=0.01,
        speedup=2.0,
        protocol_timing=protocol_timing(0.03, 0.02),
    )
    defaults = dict(
        status="passed",
        reason="ok",
        cases_total=1,
        cases_passed=1,
        case_results=[case],
        speedup=2.0,
        speedup_ci95=(1.9, 2.1),
        protocol_speedup=1.5,
        protocol_speedup_ci95=(1.4, 1.6),
    )
    return JudgeResult(**{**defaults, **fields})


def test_a_recorded_verdict_stores_both_speedups_apart(h200_run):
    claimed, lease = services.run_claim(run_id=h200_run.pk, worker="w1")
    # Through JSON, as a worker's result or an offline bundle's arrives: the interval comes back a tuple.
    result = JudgeResult.from_json(json.loads(json.dumps(judged_result().to_json())))
    assert result.protocol_speedup_ci95 == (1.4, 1.6)
    assert services.run_record_result(run=claimed, lease=lease, result=result)
    run = Run.objects.get(pk=h200_run.pk)
    assert (run.protocol_speedup, run.protocol_speedup_ci_low, run.protocol_speedup_ci_high) == (1.5, 1.4, 1.6)
    assert (run.speedup, run.speedup_ci_low, run.speedup_ci_high) == (2.0, 1.9, 2.1)
    assert run.case_results[0]["protocol_timing"]["iterations"] == 400
    # The boards' summary carries the deciding run's protocol speedup beside its device-time one.
    row = selectors.BestVerdict.objects.get(standing_run_id=run.pk)
    assert (row.speedup, row.protocol_speedup, row.log_protocol_speedup) == (2.0, 1.5, math.log(1.5))


def test_a_verdict_without_a_protocol_timing_stores_it_as_unknown(h200_run):
    """A judge from before the protocol timing (or a bundle from one) gives none; a value that is not a finite
    positive number (a results bundle is JSON from another host) is unknown too, never stored as given."""
    claimed, lease = services.run_claim(run_id=h200_run.pk, worker="w1")
    services.run_record_result(
        run=claimed,
        lease=lease,
        result=judged_result(protocol_speedup=float("nan"), protocol_speedup_ci95=("low", 2.0)),
    )
    run = Run.objects.get(pk=h200_run.pk)
    assert (run.protocol_speedup, run.protocol_speedup_ci_low, run.protocol_speedup_ci_high) == (None, None, None)
    assert run.speedup == 2.0
    assert JudgeResult.from_json({"status": "passed", "reason": "old"}).protocol_speedup is None


def test_the_cpu_interpreter_stores_neither_speedup(upload, user):
    queued = Run.objects.get(pk=upload(user)[0])
    claimed, lease = services.run_claim(run_id=queued.pk, worker="w1")
    services.run_record_result(run=claimed, lease=lease, result=judged_result())
    run = Run.objects.get(pk=queued.pk)
    assert (run.speedup, run.protocol_speedup, run.protocol_speedup_ci_low) == (None, None, None)


# --- The run page and its per-case download ------------------------------------------------------------


def test_run_page_shows_both_speedups_labelled_and_per_case(world, client):
    run = world.runs["fast_cos"]
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert (
        "Protocol speedup <small>(the paper's: every timed case, call latency as the paper's harness times it)</small>"
        in html
    )
    assert "Device-time speedup <small>(large cases, launch cost hidden)</small>" in html
    assert '<dd id="protocol-speedup">1.600× (95% CI 1.500–1.700)</dd>' in html
    assert '<dd id="device-speedup">2.000× ' in html
    # The per-case table: protocol reference ms, candidate ms, speedup and iterations beside the device time.
    table = html[html.index('id="case-table"') :]
    assert ">Iterations</th>" in table
    assert '<td class="num protocol">3.2000</td><td class="num protocol">2.0000</td>' in table
    assert '<td class="num protocol">1.600</td>' in table
    assert 'title="stopped: rse_below_target">300</td>' in table
    assert '<td class="num">1.0000</td><td class="num">0.5000</td><td class="num">2.000</td>' in table
    assert f'href="/runs/{run.pk}/cases.csv"' in html and f'href="/runs/{run.pk}/cases.json"' in html


def test_a_run_judged_before_the_protocol_timing_says_so(world, client):
    html = client.get(f"/runs/{world.runs['slow_cos'].pk}/").content.decode()
    protocol = html[html.index('<dd id="protocol-speedup">') :].split("</dd>", 1)[0]
    assert EM_DASH in protocol and "its judge did not time every case the protocol's way" in protocol
    assert "0.000" not in protocol and "nan" not in protocol.lower()
    cells = html[html.index('id="case-table"') :]
    assert '<td class="num protocol">–</td>' in cells  # the case has no protocol timing


def test_case_download_has_every_case_with_both_timings(world, client):
    run = world.runs["fast_cos"]
    response = client.get(f"/runs/{run.pk}/cases.csv")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    assert f'filename="kgb-run-{run.pk}-cases.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == len(run.case_results) == 1
    row = rows[0]
    assert (row["case_id"], row["passed"]) == ("c0", "True")
    assert (row["protocol_reference_ms"], row["protocol_candidate_ms"], row["protocol_speedup"]) == (
        "3.2",
        "2.0",
        "1.6",
    )
    assert (row["protocol_iterations"], row["protocol_stop_reason"]) == ("300", "rse_below_target")
    assert (row["device_reference_ms"], row["device_candidate_ms"], row["device_speedup"]) == ("1.0", "0.5", "2.0")
    document = client.get(f"/runs/{run.pk}/cases.json").json()
    assert document["view"]["protocol_speedup"] == 1.6 and document["view"]["speedup"] == 2.0
    assert document["view"]["protocol_speedup_ci95"] == [1.5, 1.7]
    assert "as the paper's harness times each source" in document["view"]["columns"]["protocol_*"]
    assert document["rows"][0]["protocol_iterations"] == 300 and document["rows"][0]["device_speedup"] == 2.0


def test_case_download_of_a_run_without_protocol_timing_leaves_it_empty(world, client):
    row = next(csv.DictReader(io.StringIO(client.get(f"/runs/{world.runs['slow_cos'].pk}/cases.csv").content.decode())))
    assert (row["protocol_speedup"], row["protocol_iterations"], row["device_speedup"]) == ("", "", "2.0")
    rows = client.get(f"/runs/{world.runs['slow_cos'].pk}/cases.json").json()["rows"]
    assert rows[0]["protocol_speedup"] is None


@pytest.mark.parametrize("role,status", [("anonymous", 404), ("other", 404), ("owner", 200), ("staff", 200)])
def test_a_private_runs_download_is_refused_to_others_as_its_page_is(
    world, client, user, other_user, staff_user, role, status
):
    if role != "anonymous":
        client.force_login({"other": other_user, "owner": user, "staff": staff_user}[role])
    run = world.runs["private_add"]
    for path in (f"/runs/{run.pk}/", f"/runs/{run.pk}/cases.csv", f"/runs/{run.pk}/cases.json"):
        response = client.get(path)
        assert response.status_code == status, path
        if status == 404:
            # Nothing of the run: neither its figures (protocol 7.0, its cases' stop reason) nor its code.
            for told in (b"7.000", b"rse_below_target", b"SECRET_KERNEL_CODE", b"case_id"):
                assert told not in response.content, (path, told)
        elif path.endswith(".csv"):
            assert b"rse_below_target" in response.content  # the owner and staff get every case


@pytest.mark.parametrize(
    "path", ["/runs/0/cases.csv", "/runs/987654321/cases.json", "/runs/99999999999999999999/cases.csv"]
)
def test_case_download_of_an_unknown_run_is_404(world, client, path):
    assert client.get(path).status_code == 404


def test_case_download_of_a_queued_run_is_an_empty_table(world, client):
    run = world.runs["fast_cos"]
    queued = Run.objects.create(kernel=run.kernel, chip=run.chip, operator_version=1, status=RunStatus.QUEUED)
    body = client.get(f"/runs/{queued.pk}/cases.csv").content.decode()
    assert body.splitlines()[0].startswith("case_id,tier,passed,protocol_reference_ms")
    assert len(body.splitlines()) == 1


# --- The boards' summary, boards, downloads and the API -------------------------------------------------


def test_the_summary_carries_the_protocol_aggregate_and_a_rebuild_agrees(world):
    rows = selectors.leaderboard_rows(chip=world.chips["nvidia-h200"], operator_set=world.sets["kgb-ms"])
    fast = next(row for row in rows if row.method == world.methods["fast"])
    overall = fast.summaries["overall"]
    assert overall.speedup_geomean == pytest.approx(FAST_DEVICE) and overall.speedup_covered == 3
    assert overall.protocol_speedup_geomean == pytest.approx(FAST_PROTOCOL) and overall.protocol_speedup_covered == 2
    assert fast.summaries["cublas"].protocol_speedup_geomean is None  # its one pass has no protocol figure
    slow = next(row for row in rows if row.method == world.methods["slow"])
    assert slow.summaries["overall"].protocol_speedup_geomean is None
    assert slow.summaries["overall"].speedup_geomean == pytest.approx(1.5)
    # Maintained as a rebuild from the runs would write it (rows and set totals).
    assert not best_verdicts.differences()
    best_verdicts.rebuild()
    selectors.clear_board_memo()
    again = selectors.leaderboard_rows(chip=world.chips["nvidia-h200"], operator_set=world.sets["kgb-ms"])
    fast_again = next(row for row in again if row.method == world.methods["fast"])
    assert fast_again.summaries["overall"].protocol_speedup_geomean == pytest.approx(FAST_PROTOCOL)


def test_the_ranking_is_still_by_the_device_time_speedup(world):
    """Between a method's kernels the device-time speedup decides; the protocol figure shown is that kernel's."""
    cos = world.runs["fast_cos"]
    faster_by_protocol = Run.objects.create(
        kernel=cos.kernel, chip=cos.chip, operator_version=1, status=RunStatus.PASSED, speedup=1.2, protocol_speedup=5.0
    )
    best_verdicts.runs_changed(run_ids=[faster_by_protocol.pk])
    row = selectors.BestVerdict.objects.get(
        method=world.methods["fast"], operator=world.operators["aten::cos"], chip=cos.chip, native=True
    )
    # The kernel's latest run decides (a re-judgement supersedes): its two figures, together.
    assert (row.speedup, row.protocol_speedup) == (1.2, 5.0)


def test_multi_source_board_shows_both_speedups_labelled(world, client):
    html = client.get("/?chip=nvidia-h200&set=kgb-ms").content.decode()
    assert "Protocol speedup" in html and "Device-time speedup" in html
    assert "the paper&#x27;s: every timed case, call latency as the paper's harness times it" in html or (
        "the paper's: every timed case, call latency as the paper's harness times it" in html
    )
    assert f"{FAST_PROTOCOL:.2f}×<small> (2)</small>" in html
    assert f"{FAST_DEVICE:.2f}×<small> (3)</small>" in html
    # Pass@1's cos was judged without the protocol stage: an em dash saying why, never 0 or NaN.
    slow_row = html[html.index("Pass@1 + GLM-5.0") :].split("</tr>", 1)[0]
    assert EM_DASH in slow_row and PROTOCOL_UNKNOWN_OLD.replace("'", "&#x27;") in slow_row
    assert "0.00×" not in slow_row and "nan" not in slow_row.lower()
    # Fast Agent's vLLM view has no pass at all: unknown for that reason.
    assert PROTOCOL_UNKNOWN_NONE in html


def test_board_downloads_carry_the_protocol_aggregate(world, client):
    body = client.get("/?chip=nvidia-h200&set=kgb-ms&format=csv").content.decode()
    rows = {row["method"]: row for row in csv.DictReader(io.StringIO(body))}
    fast, slow = rows["Fast Agent + Opus-4.6"], rows["Pass@1 + GLM-5.0"]
    assert float(fast["overall_protocol_speedup"]) == pytest.approx(round(FAST_PROTOCOL, 2))
    assert (fast["overall_protocol_speedup_covered"], fast["overall_speedup_covered"]) == ("2", "3")
    assert float(fast["overall_speedup"]) == pytest.approx(round(FAST_DEVICE, 2))
    assert (slow["overall_protocol_speedup"], slow["overall_protocol_speedup_covered"]) == ("", "")
    document = client.get("/?chip=nvidia-h200&set=kgb-ms&format=json").json()
    assert "as the paper's harness times it" in document["view"]["speedup_columns"]["protocol_speedup"]
    by_method = {row["method"]: row for row in document["rows"]}
    assert by_method["Fast Agent + Opus-4.6"]["overall_protocol_speedup"] == round(FAST_PROTOCOL, 2)
    assert by_method["Pass@1 + GLM-5.0"]["overall_protocol_speedup"] is None
    multi = client.get("/boards/multi-chip/?set=kgb-ms&format=json").json()
    fast_multi = next(row for row in multi["rows"] if row["method"] == "Fast Agent + Opus-4.6")
    assert fast_multi["nvidia-h200_protocol_speedup"] == round(FAST_PROTOCOL, 2)


def test_the_api_leaderboard_carries_both_aggregates_and_per_operator_figures(world, client):
    board = client.get("/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&operators=1").json()
    fast = next(row for row in board["rows"] if row["method"]["label"] == "Fast Agent + Opus-4.6")
    overall = fast["summaries"]["overall"]
    assert overall["protocol_speedup_geomean"] == pytest.approx(FAST_PROTOCOL)
    assert (overall["protocol_speedup_covered"], overall["speedup_covered"]) == (2, 3)
    outcomes = {outcome["operator_id"]: outcome for outcome in fast["outcomes"]}
    assert (outcomes["aten::cos"]["protocol_speedup"], outcomes["aten::cos"]["speedup"]) == (1.6, 2.0)
    assert outcomes["cublas::cublasSaxpy_v2"]["protocol_speedup"] is None
    csv_rows = list(
        csv.DictReader(
            io.StringIO(client.get("/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&format=csv").content.decode())
        )
    )
    fast_csv = next(row for row in csv_rows if row["method"] == "Fast Agent + Opus-4.6")
    assert float(fast_csv["overall_protocol_speedup_geomean"]) == pytest.approx(FAST_PROTOCOL)
    run = client.get(f"/api/runs/{world.runs['fast_cos'].pk}/").json()
    assert (run["protocol_speedup"], run["protocol_speedup_ci_low"], run["speedup"]) == (1.6, 1.5, 2.0)


def test_method_multi_chip_and_operator_pages_show_both(world, client):
    method_html = client.get(f"/methods/{world.methods['fast'].pk}/?set=kgb-ms").content.decode()
    assert "Protocol speedup" in method_html and f"{FAST_PROTOCOL:.2f}×<small> (2)</small>" in method_html
    multi_html = client.get("/boards/multi-chip/?set=kgb-ms").content.decode()
    assert "Protocol speedup" in multi_html and f"{FAST_PROTOCOL:.2f}×<small> (2)</small>" in multi_html
    operator_html = client.get("/operators/aten::cos/?chip=nvidia-h200").content.decode()
    ranking = operator_html[operator_html.index('id="operator-ranking"') :]
    assert "Protocol speedup" in ranking and "1.60× <small>(1.50–1.70)</small>" in ranking
    slow_row = ranking[ranking.index("Pass@1 + GLM-5.0") :].split("</tr>", 1)[0]
    assert EM_DASH in slow_row and "its judge did not time every case" in slow_row


def test_the_cli_prints_both_speedups_labelled(capsys):
    print_runs(
        {
            "runs": [
                {
                    "operator_id": "aten::cos",
                    "chip": "nvidia-h200",
                    "status": "passed",
                    "cases_passed": 3,
                    "cases_total": 3,
                    "protocol_speedup": 1.25,
                    "speedup": 2.0,
                },
                # A server from before the protocol speedup sends no such key.
                {
                    "operator_id": "aten::add",
                    "chip": "nvidia-h200",
                    "status": "passed",
                    "cases_passed": 1,
                    "cases_total": 1,
                    "speedup": 1.5,
                },
            ],
            "passed": 2,
            "total": 2,
            "finished": 2,
        }
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("protocol 1.25x  device-time 2.00x")
    assert lines[1].endswith("protocol -  device-time 1.50x")


def test_boards_sort_by_the_protocol_speedup_with_unknown_last(world, client):
    def order(sort: str) -> list[str]:
        html = client.get(f"/?chip=nvidia-h200&set=kgb-ms&sort={sort}").content.decode()
        return re.findall(r'<td class="method"><a href="/methods/\d+/">([^<]+)</a>', html)

    # Pass@1 has no protocol figure: last either way, never ranked as a 0.
    assert order("-overall.protocol_speedup") == ["Fast Agent + Opus-4.6", "Pass@1 + GLM-5.0"]
    assert order("overall.protocol_speedup") == ["Fast Agent + Opus-4.6", "Pass@1 + GLM-5.0"]
    # The device-time order is another: Pass@1's 1.5 is above Fast Agent's 1.0.
    assert order("-overall.speedup") == ["Pass@1 + GLM-5.0", "Fast Agent + Opus-4.6"]


def test_launch_bound_cases_are_marked_on_the_run_page_and_in_its_download(world, client):
    """A case where a side ran faster than one L2 flush (timing_protocol.launch_bound): its protocol figure is
    the race between the host's launch path and the flush. The page counts and marks them, the download
    says which; a run whose judge made no such mark (older, or a loop without a flush) shows none."""
    run = world.runs["fast_cos"]
    cases = [
        {**case, "protocol_timing": {**case["protocol_timing"], "launch_bound": True}} for case in run.case_results
    ]
    Run.objects.filter(pk=run.pk).update(case_results=cases)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert "1 of its 1 timed case launch-bound" in html and "⚑" in html
    row = next(csv.DictReader(io.StringIO(client.get(f"/runs/{run.pk}/cases.csv").content.decode())))
    assert row["protocol_launch_bound"] == "True"
    document = client.get(f"/runs/{run.pk}/cases.json").json()
    assert document["rows"][0]["protocol_launch_bound"] is True
    assert "one L2 flush" in document["view"]["columns"]["protocol_launch_bound"]
    other = client.get(f"/runs/{world.runs['slow_cos'].pk}/").content.decode()
    assert 'id="launch-bound"' not in other and "⚑" not in other
    unmarked = client.get(f"/runs/{world.runs['slow_cos'].pk}/cases.json").json()["rows"][0]
    assert unmarked["protocol_launch_bound"] is None


def test_fast_p_by_the_protocol_speedup_sits_beside_the_device_time_one(world, client):
    """PROTOCOL 6's fast_p (passed operators above p over ALL operators of the set), by each speedup: Fast
    Agent's cos is 1.6 by the protocol and 2.0 by device time, its add 0.4 / 0.5, its saxpy has no protocol
    figure (1.0 by device time). Kept in the summary as a rebuild writes it, on boards, downloads and the API."""
    rows = selectors.leaderboard_rows(chip=world.chips["nvidia-h200"], operator_set=world.sets["kgb-ms"])
    fast = next(row for row in rows if row.method == world.methods["fast"]).summaries["overall"]
    total = fast.operators_total
    assert fast.fast_p == pytest.approx({"0.8": 2 / total, "1": 1 / total, "1.5": 1 / total})
    assert fast.protocol_fast_p == pytest.approx({"0.8": 1 / total, "1": 1 / total, "1.5": 1 / total})
    slow = next(row for row in rows if row.method == world.methods["slow"]).summaries["overall"]
    assert slow.protocol_fast_p == {"0.8": 0.0, "1": 0.0, "1.5": 0.0}
    assert not best_verdicts.differences()  # the summary's new counts are what a rebuild gives

    body = client.get("/?chip=nvidia-h200&set=kgb-ms&format=csv").content.decode()
    board = {row["method"]: row for row in csv.DictReader(io.StringIO(body))}
    assert board["Fast Agent + Opus-4.6"]["protocol_fast_1"] == str(round(100 / total))
    assert board["Fast Agent + Opus-4.6"]["fast_0.8"] == str(round(200 / total))
    assert board["Pass@1 + GLM-5.0"]["protocol_fast_1"] == ""  # nothing timed the protocol's way: unknown
    api = client.get("/api/leaderboards/?chip=nvidia-h200&set=kgb-ms").json()
    overall = next(row for row in api["rows"] if row["method"]["label"] == "Fast Agent + Opus-4.6")["summaries"]
    assert overall["overall"]["protocol_fast_p"] == pytest.approx({"0.8": 1 / total, "1": 1 / total, "1.5": 1 / total})
    flat = list(
        csv.DictReader(
            io.StringIO(client.get("/api/leaderboards/?chip=nvidia-h200&set=kgb-ms&format=csv").content.decode())
        )
    )
    fast_line = next(row for row in flat if row["method"] == "Fast Agent + Opus-4.6")
    assert float(fast_line["overall_protocol_fast_1.5"]) == pytest.approx(1 / total)
    ordered = client.get("/?chip=nvidia-h200&set=kgb-ms&sort=-overall.protocol_fast_1&format=json").json()["rows"]
    assert ordered[0]["method"] == "Fast Agent + Opus-4.6"


# --- The matched board and the plots, by either speedup -------------------------------------------------


def test_clean_speedups_read_either_figure_memoised_apart(world):
    """Each figure's clean passes with a known one, read in either order from one memo (distinct keys)."""
    chip, operator_set = world.chips["nvidia-h200"], world.sets["kgb-ms"]
    methods = [world.methods["fast"].pk, world.methods["slow"].pk]
    device = {
        world.methods["fast"].pk: {"aten::cos": 2.0, "aten::add": 0.5, "cublas::cublasSaxpy_v2": 1.0},
        world.methods["slow"].pk: {"aten::cos": 1.5},
    }
    protocol = {world.methods["fast"].pk: {"aten::cos": 1.6, "aten::add": 0.4}}
    for order in (("device", "protocol"), ("protocol", "device")):
        selectors.clear_board_memo()
        for _ in range(2):  # the second time from the memo
            for figure in order:
                read = selectors.clean_speedups(chip=chip, operator_set=operator_set, method_ids=methods, figure=figure)
                assert read == {"device": device, "protocol": protocol}[figure], (order, figure)
    assert selectors.clean_speedups_by_figure(
        chip=chip, operator_set=operator_set, method_ids=methods, figures=("protocol", "device")
    ) == {"protocol": protocol, "device": device}


def matched_page(client, query: str):
    """The matched board's response for ``query`` (fresh: nothing memoised), after checking it rendered."""
    selectors.clear_board_memo()
    response = client.get(f"/boards/matched/?chip=nvidia-h200&set=kgb-ms{query}")
    assert response.status_code == 200, query
    return response


def matched_figures(response) -> dict[str, tuple[float | None, int, float | None, int]]:
    """Per method shown: its matched geomean and count, and its own-set geomean and count."""
    return {
        str(row.method): (row.figure.speedup_geomean, row.figure.covered, row.own_speedup, row.own_covered)
        for row in response.context["rows"]
    }


@pytest.fixture
def slow_passes_add_without_protocol(world):
    """Pass@1's add passes too (device-time 3.0), judged without the protocol stage; its cos has a protocol
    speedup (1.2). Both methods now have device-time figures on cos and add, protocol ones on cos only."""
    give_protocol(world.runs["slow_cos"], 1.2)
    add = world.runs["slow_add"]
    passed = Run.objects.create(
        kernel=add.kernel, chip=add.chip, operator_version=1, status=RunStatus.PASSED, speedup=3.0
    )
    best_verdicts.runs_changed(run_ids=[world.runs["slow_cos"].pk, passed.pk])
    return world


def test_the_matched_board_by_the_protocol_speedup_has_its_own_common_set(slow_passes_add_without_protocol, client):
    """Like with like, by each figure: Pass@1's add has no protocol speedup, so add leaves the common set under
    ?figure=protocol only; each method's figure is the geomean of its own figures over that set."""
    device = matched_page(client, "")
    assert device.context["common"] == ["aten::add", "aten::cos"]
    assert matched_figures(device) == {
        "Pass@1 + GLM-5.0": (pytest.approx(math.sqrt(3.0 * 1.5)), 2, pytest.approx(math.sqrt(3.0 * 1.5)), 2),
        "Fast Agent + Opus-4.6": (pytest.approx(math.sqrt(0.5 * 2.0)), 2, pytest.approx(FAST_DEVICE), 3),
    }
    protocol = matched_page(client, "&figure=protocol")
    assert protocol.context["common"] == ["aten::cos"]
    assert matched_figures(protocol) == {
        "Fast Agent + Opus-4.6": (pytest.approx(1.6), 1, pytest.approx(FAST_PROTOCOL), 2),
        "Pass@1 + GLM-5.0": (pytest.approx(1.2), 1, pytest.approx(1.2), 1),
    }
    html = protocol.content.decode()
    assert '<strong id="figure-shown">protocol speedup (PROTOCOL 6)</strong>' in html
    assert 'href="/about/#protocol-speedup">Matched protocol speedup</a>' in html
    assert 'href="/about/#protocol-speedup">Own-set protocol speedup</a>' in html
    assert "Matched device-time speedup" not in html
    assert f"{FAST_PROTOCOL:.2f}×<small> (2)</small>" in html and "1.60×<small> (1)</small>" in html
    device_html = device.content.decode()
    assert '<strong id="figure-shown">device-time speedup</strong>' in device_html
    assert 'href="/about/#device-time-speedup">Matched device-time speedup</a>' in device_html
    assert "Matched protocol speedup" not in device_html


def test_a_method_without_any_protocol_speedup_is_left_out_of_that_figure_only(world, client):
    """Pass@1 has no protocol speedup at all: it would empty the common set, so the protocol figure compares
    Fast Agent's two operators alone (its saxpy, passed without one, is not among them), with the same
    bootstrap interval as the device-time figure's: ``bootstrap_geomean_ci`` of the common operators' figures."""
    from leaderboard.metrics import bootstrap_geomean_ci

    device = matched_page(client, "")
    assert [str(row.method) for row in device.context["rows"]] == ["Fast Agent + Opus-4.6", "Pass@1 + GLM-5.0"]
    assert device.context["common"] == ["aten::cos"]
    protocol = matched_page(client, "&figure=protocol")
    assert [str(row.method) for row in protocol.context["rows"]] == ["Fast Agent + Opus-4.6"]
    assert protocol.context["common"] == ["aten::add", "aten::cos"]
    (fast,) = protocol.context["rows"]
    assert fast.figure.speedup_geomean == pytest.approx(FAST_PROTOCOL)
    low, high = bootstrap_geomean_ci([0.4, 1.6])  # add, cos: the common operators in order
    assert fast.figure.ci95 == (low, high) and low < FAST_PROTOCOL < high
    assert f"{low:.2f}–{high:.2f}×" in protocol.content.decode()
    # Fast Agent alone by device time: its three passes, another set and another interval.
    alone = matched_page(client, "&kind=agent")
    assert alone.context["common"] == ["aten::add", "aten::cos", "cublas::cublasSaxpy_v2"]
    assert alone.context["rows"][0].figure.ci95 == bootstrap_geomean_ci([0.5, 2.0, 1.0])


def test_the_figure_switch_and_the_filters_keep_the_view(world, client):
    html = matched_page(client, "&kind=agent&model=Opus").content.decode()
    switch = html[html.index('id="figure-switch"') :].split("</p>", 1)[0]
    assert 'href="?chip=nvidia-h200&amp;set=kgb-ms&amp;kind=agent&amp;model=Opus&amp;figure=protocol"' in switch
    assert 'name="figure"' not in html  # the default figure needs no parameter
    assert 'href="?chip=nvidia-h200&amp;set=kgb-ms&amp;kind=agent&amp;model=Opus&amp;format=csv"' in html
    protocol = matched_page(client, "&kind=agent&model=Opus&figure=protocol").content.decode()
    switch = protocol[protocol.index('id="figure-switch"') :].split("</p>", 1)[0]
    assert 'id="figure-other">device-time speedup</a>' in switch
    assert 'href="?chip=nvidia-h200&amp;set=kgb-ms&amp;kind=agent&amp;model=Opus"' in switch
    filters = protocol[protocol.index('id="filters"') :].split("</form>", 1)[0]
    assert '<input type="hidden" name="figure" value="protocol">' in filters
    for download in ("permalink", "download-csv", "download-json"):
        link = re.search(rf'href="([^"]*)" id="{download}"', protocol)[1]
        assert "figure=protocol" in link and "kind=agent" in link and "chip=nvidia-h200" in link, download
    # The other boards show both speedups side by side: the tabs do not carry the figure to them.
    tabs = protocol[protocol.index('class="tabs"') :].split("</nav>", 1)[0]
    assert "figure=" not in tabs


@pytest.mark.parametrize(
    "figure",
    ["", "PROTOCOL", "device", "speedup", "protocol_speedup", "%00", "x" * 5000, "protocol%20", "<script>"],
)
def test_an_unknown_figure_is_the_device_time_one(world, client, figure):
    for download in ("", "&format=csv", "&format=json"):
        response = matched_page(client, f"&figure={figure}{download}")
        if download:
            assert "kgb-matched-device-time-kgb-ms-nvidia-h200" in response["Content-Disposition"]
        else:
            assert response.context["speedup_figure"] == "device"
            assert response.context["common"] == ["aten::cos"]
            assert "<script>" not in response.content.decode().split('id="figure-switch"', 1)[1]
    # Given twice, the last one counts (as Django reads a query string), still never an error.
    assert matched_page(client, "&figure=nope&figure=protocol").context["speedup_figure"] == "protocol"


def test_matched_downloads_name_the_figure(slow_passes_add_without_protocol, client):
    response = matched_page(client, "&figure=protocol&format=csv")
    assert 'filename="kgb-matched-protocol-kgb-ms-nvidia-h200.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert list(rows[0]) == [
        "method_id",
        "method",
        "kind",
        "matched_protocol_speedup",
        "covered",
        "matched_protocol_launch_bound_share",
        "ci95_low",
        "ci95_high",
        "own_protocol_speedup",
        "own_covered",
        "own_protocol_launch_bound_share",
        "accuracy_pct",
    ]
    by_method = {row["method"]: row for row in rows}
    assert (
        by_method["Fast Agent + Opus-4.6"]["matched_protocol_speedup"],
        by_method["Fast Agent + Opus-4.6"]["covered"],
    ) == ("1.6", "1")
    assert float(by_method["Fast Agent + Opus-4.6"]["own_protocol_speedup"]) == round(FAST_PROTOCOL, 2)
    assert by_method["Pass@1 + GLM-5.0"]["matched_protocol_speedup"] == "1.2"

    document = matched_page(client, "&figure=protocol&format=json").json()
    assert document["view"]["figure"] == "protocol"
    assert "PROTOCOL 6" in document["view"]["figure_meaning"]
    assert document["view"]["common_operators"] == ["aten::cos"]
    assert "protocol_speedup" in document["view"]["speedup_columns"]
    assert {row["method"]: row["matched_protocol_speedup"] for row in document["rows"]} == {
        "Fast Agent + Opus-4.6": 1.6,
        "Pass@1 + GLM-5.0": 1.2,
    }

    device = matched_page(client, "&format=json")
    assert 'filename="kgb-matched-device-time-kgb-ms-nvidia-h200.json"' in device["Content-Disposition"]
    document = device.json()
    assert document["view"]["figure"] == "device" and "device-time" in document["view"]["figure_meaning"]
    assert document["view"]["common_operators"] == ["aten::add", "aten::cos"]
    assert "matched_speedup" in document["columns"] and "matched_protocol_speedup" not in document["columns"]
    assert {row["method"]: row["matched_speedup"] for row in document["rows"]} == {
        "Pass@1 + GLM-5.0": round(math.sqrt(4.5), 2),
        "Fast Agent + Opus-4.6": 1.0,
    }


def plot_figures(client, query: str = "") -> dict:
    selectors.clear_board_memo()
    response = client.get(f"/plots/?chip=nvidia-h200&set=kgb-ms{query}")
    assert response.status_code == 200
    html = response.content.decode()
    return json.loads(re.search(r'<script id="plots-data" type="application/json">(.*?)</script>', html, re.S)[1])


def test_the_plots_draw_the_protocol_speedup_beside_the_device_time_one(world, client):
    figures = plot_figures(client)
    device, protocol = figures["speedup-heatmap"], figures["protocol-speedup-heatmap"]
    assert device["layout"]["title"]["text"].startswith("Device-time speedup per method and chip")
    assert protocol["layout"]["title"]["text"].startswith("Protocol speedup (PROTOCOL 6) per method and chip")
    assert "protocol speedup (PROTOCOL 6)" in protocol["data"][0]["hovertemplate"]
    assert "device-time speedup" in device["data"][0]["hovertemplate"]
    (trace,) = protocol["data"]
    cells = {
        (method, chip): value
        for method, line in zip(trace["y"], trace["z"], strict=True)
        for chip, value in zip(trace["x"], line, strict=True)
    }
    # Fast Agent: cos and add on the H200 (saxpy has none), its Ascend cos on Platform A. Pass@1 has none:
    # its cells are empty, never 0.
    assert cells[("Fast Agent + Opus-4.6", "NVIDIA H200")] == round(FAST_PROTOCOL, 3)
    assert cells[("Fast Agent + Opus-4.6", "Platform A")] == 1.1
    assert cells[("Pass@1 + GLM-5.0", "NVIDIA H200")] is None and cells[("Pass@1 + GLM-5.0", "Platform A")] is None
    assert device["data"][0]["z"][trace["y"].index("Pass@1 + GLM-5.0")][trace["x"].index("NVIDIA H200")] == 1.5

    boxes = figures["protocol-speedup-distribution"]
    assert (
        boxes["layout"]["title"]["text"]
        == "Per-operator protocol speedup (PROTOCOL 6) of passed operators on NVIDIA H200"
    )
    # A box for Fast Agent's two protocol figures only: no box for Pass@1, no point for the saxpy without one.
    assert {box["name"]: sorted(zip(box["text"], box["y"], strict=True)) for box in boxes["data"]} == {
        "Fast Agent + Opus-4.6": [("aten::add", 0.4), ("aten::cos", 1.6)]
    }
    assert "protocol speedup (PROTOCOL 6)" in boxes["data"][0]["hovertemplate"]
    assert boxes["layout"]["yaxis"]["title"]["text"] == "Protocol speedup (x, log scale)"
    device_boxes = figures["speedup-distribution"]
    assert (
        device_boxes["layout"]["title"]["text"] == "Per-operator device-time speedup of passed operators on NVIDIA H200"
    )
    assert {box["name"]: sorted(zip(box["text"], box["y"], strict=True)) for box in device_boxes["data"]} == {
        "Fast Agent + Opus-4.6": [("aten::add", 0.5), ("aten::cos", 2.0), ("cublas::cublasSaxpy_v2", 1.0)],
        "Pass@1 + GLM-5.0": [("aten::cos", 1.5)],
    }
    # The roofline plot stays a device-time figure.
    assert figures["speedup-vs-roofline"]["layout"]["title"]["text"].startswith("Device-time speedup")


def test_with_no_protocol_speedup_anywhere_the_plots_say_so(world, client):
    Run.objects.update(protocol_speedup=None)
    best_verdicts.runs_changed(run_ids=list(Run.objects.values_list("pk", flat=True)))
    figures = plot_figures(client)
    assert figures["protocol-speedup-heatmap"]["data"] == []  # "no data yet", not a grid of zeros
    assert figures["protocol-speedup-distribution"]["data"] == []
    assert figures["speedup-heatmap"]["data"] and figures["speedup-distribution"]["data"]
    multi = client.get("/boards/multi-chip/?set=kgb-ms").content.decode()
    assert 'id="protocol-speedup-heatmap"' in multi


def test_method_names_stay_escaped_on_the_protocol_figures(world, client):
    """A method's name is its owner's text: escaped in the matched board's cells and in the plots' data."""
    hostile = "</script><script>alert(1)</script>&"
    Method = type(world.methods["fast"])
    Method.objects.filter(pk=world.methods["fast"].pk).update(scaffold=hostile)
    html = matched_page(client, "&figure=protocol").content.decode()
    assert (
        "<script>alert(1)" not in html
        and "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp; + Opus-4.6" in html
    )
    selectors.clear_board_memo()
    plots_html = client.get("/plots/?chip=nvidia-h200&set=kgb-ms").content.decode()
    assert "<script>alert(1)" not in plots_html and hostile not in plots_html
    figures = plot_figures(client)
    assert f"{hostile} + Opus-4.6" in figures["protocol-speedup-heatmap"]["data"][0]["y"]
    assert figures["protocol-speedup-distribution"]["data"][0]["name"] == f"{hostile} + Opus-4.6"

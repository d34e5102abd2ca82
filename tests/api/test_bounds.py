"""Numbers out of range are a 400 that says so, never a 500: id filters, token counts, progress.json. CSV
cells that a spreadsheet would run as formulas are written as text. Each refusal saves nothing."""

from __future__ import annotations

import csv
import io
import json

import pytest

from leaderboard.api.exports import rows_to_csv
from leaderboard.bounded_json import JSONRejected, loads_bounded
from leaderboard.importers import read_run_files
from leaderboard.models import Method
from leaderboard.uploads import parse_usage
from tests.api.conftest import COS_CODE
from tests.api.test_imports_and_exports import zip_of
from tests.api.test_permissions import SUBMISSION, counts

HUGE = str(2**63)  # one past the database's BIGINT


@pytest.mark.parametrize(
    "value, message",
    [
        (HUGE, "Ensure this value is less than or equal to 9223372036854775807."),
        ("99999999999999999999999999", "Ensure this value is less than or equal to 9223372036854775807."),
        ("1e400", "Enter a whole number."),
        ("-1", "Ensure this value is greater than or equal to 1."),
        ("0", "Ensure this value is greater than or equal to 1."),
        ("1.5", "Enter a whole number."),
        ("NaN", "Enter a whole number."),
    ],
)
@pytest.mark.parametrize(
    "path, name",
    [
        ("/api/runs/", "kernel"),
        ("/api/runs/", "submission"),
        ("/api/runs/", "method"),
        ("/api/kernels/", "submission"),
        ("/api/kernels/", "method"),
        ("/api/submissions/", "method"),
        ("/api/exports/runs/", "kernel"),
    ],
)
def test_id_filters_out_of_range_are_a_400_with_the_reason(clients, world, path, name, value, message):
    response = clients["anonymous"].get(path, {name: value})
    assert (response.status_code, response.json()) == (400, {name: [message]})


def test_id_filters_in_range_still_filter(clients, world):
    kernel = world["kernels"]["public_cos"]
    response = clients["anonymous"].get("/api/runs/", {"kernel": kernel.pk})
    assert [run["id"] for run in response.json()["results"]] == [world["runs"]["public_cos"].pk]
    assert clients["anonymous"].get("/api/runs/", {"kernel": str(2**63 - 1)}).json()["results"] == []


@pytest.mark.parametrize("path", ["/api/runs/{}/", "/api/kernels/{}/", "/api/submissions/{}/", "/api/methods/{}/"])
@pytest.mark.parametrize("value", [HUGE, "1" * 30, "-5"])
def test_object_ids_out_of_range_are_a_404(clients, world, path, value):
    assert clients["owner"].get(path.format(value)).status_code == 404


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("total_tokens", 2**63, "Ensure this value is less than or equal to 1000000000000000."),
        ("input_tokens", 10**16, "Ensure this value is less than or equal to 1000000000000000."),
        ("output_tokens", -1, "Ensure this value is greater than or equal to 0."),
        ("cache_read_tokens", 1.5, "A valid integer is required."),
        ("solve_seconds", 1e300, "Ensure this value is less than or equal to 1000000000."),
    ],
)
def test_token_fields_out_of_range_are_refused_and_save_nothing(clients, world, field, value, message):
    before = counts()
    kernel = dict(SUBMISSION["kernels"][0], **{field: value})
    response = clients["owner"].post("/api/submissions/", dict(SUBMISSION, kernels=[kernel]), format="json")
    assert (response.status_code, response.json()) == (400, {"kernels": {"0": {field: [message]}}})
    assert counts() == before


def test_a_method_id_beyond_64_bits_is_refused(clients, world):
    before = counts()
    response = clients["owner"].post("/api/submissions/", dict(SUBMISSION, method_id=2**63), format="json")
    assert (response.status_code, response.json()) == (
        400,
        {"method_id": ["Ensure this value is less than or equal to 9223372036854775807."]},
    )
    assert counts() == before


# --- progress.json ---------------------------------------------------------------------------------------


def run_with_progress(progress: bytes) -> dict[str, bytes]:
    return {"run/kernels/aten__cos.py": COS_CODE.encode(), "run/progress.json": progress}


@pytest.mark.parametrize(
    "progress, problem",
    [
        (b'{"aten::cos": {"token_usage": {"total": 1e400}}}', "progress.json: the number 1e400 is out of range"),
        (b'{"aten::cos": {"token_usage": {"total": -1e400}}}', "progress.json: the number -1e400 is out of range"),
        (b'{"aten::cos": {"token_usage": {"total": NaN}}}', "progress.json: NaN is not a number JSON allows"),
        (b'{"aten::cos": {"token_usage": {"total": Infinity}}}', "progress.json: Infinity is not a number JSON allows"),
        (
            b'{"aten::cos": {"token_usage": {"total": 9223372036854775808}}}',
            "progress.json: the number 9223372036854775808 is too large (at most 9223372036854775807)",
        ),
        (
            b'{"aten::cos": {"token_usage": {"total": ' + b"9" * 5000 + b"}}}",
            "progress.json: the number 99999999999999999999... (5000 digits) is too large "
            "(at most 9223372036854775807)",
        ),
        (b"[" * 100_000 + b"]" * 100_000, "progress.json: nested 100000 levels deep; at most 32 are accepted"),
        (b'{"a": ' * 33 + b"1" + b"}" * 33, "progress.json: nested 33 levels deep; at most 32 are accepted"),
    ],
)
def test_progress_json_out_of_bounds_is_a_clear_problem(progress, problem):
    run = read_run_files(run_with_progress(progress))
    assert run.problems == [problem]


@pytest.mark.parametrize(
    "total, problem",
    [
        (
            10**15 + 1,
            "kernels/aten__cos.py: progress.json has a bad total_tokens (1000000000000001; expected a count "
            "from 0 to 1000000000000000)",
        ),
        (
            1e300,
            "kernels/aten__cos.py: progress.json has a bad total_tokens (1e+300; expected a count from 0 to "
            "1000000000000000)",
        ),
    ],
)
def test_progress_json_token_counts_beyond_any_run_are_refused(total, problem):
    run = read_run_files(run_with_progress(json.dumps({"aten::cos": {"token_usage": {"total": total}}}).encode()))
    assert run.problems == [problem]
    assert run.uploads[0].total_tokens is None


@pytest.mark.parametrize(
    "progress",
    [
        b'{"aten::cos": {"token_usage": {"total": 1e400}}}',
        b"[" * 50_000 + b"]" * 50_000,
        b'{"aten::cos": {"token_usage": {"total": 99999999999999999999999}}}',
    ],
)
def test_an_import_with_a_hostile_progress_json_is_a_400_and_saves_nothing(clients, world, progress):
    before = counts()
    response = clients["owner"].post(
        "/api/submissions/import/",
        {"archive": zip_of(run_with_progress(progress)), "scaffold": "Hostile", "chips": "cpu-interpreter"},
        format="multipart",
    )
    assert response.status_code == 400
    assert response.json()["problems"][0].startswith("progress.json: ")
    assert counts() == before
    assert not Method.objects.filter(scaffold="Hostile").exists()


def test_the_batch_uploads_usage_reader_is_bounded_too():
    with pytest.raises(JSONRejected, match="nested 40 levels deep"):
        parse_usage(data=b"[" * 40 + b"]" * 40, filename="progress.json")
    assert parse_usage(data=b'{"aten::cos": {"total_tokens": 1e300}}', filename="usage.json") == {
        "aten::cos": {"total_tokens": int(1e300)}  # read as is: submission_create refuses it by name
    }


def test_the_bounded_reader_accepts_ordinary_documents():
    assert loads_bounded(b'{"a": [1, 2.5, -3, "x\\"[[[["], "b": {"c": null}}') == {
        "a": [1, 2.5, -3, 'x"[[[['],
        "b": {"c": None},
    }
    assert loads_bounded("[" * 32 + "]" * 32) is not None


# --- CSV -------------------------------------------------------------------------------------------------


def test_csv_cells_that_start_a_formula_are_written_as_text():
    rows = [
        {
            "method": '=HYPERLINK("http://evil.example","x")',
            "a": "+1",
            "b": "-2+3",
            "c": "@SUM(A1)",
            "d": "\tx",
            "e": "\rx",
            "f": "plain",
            "g": -1.5,
            "h": 0,
            "i": None,
        }
    ]
    parsed = list(csv.DictReader(io.StringIO(rows_to_csv(rows, rows[0].keys()))))
    assert parsed == [
        {
            "method": '\'=HYPERLINK("http://evil.example","x")',
            "a": "'+1",
            "b": "'-2+3",
            "c": "'@SUM(A1)",
            "d": "'\tx",
            "e": "'\rx",
            "f": "plain",
            "g": "-1.5",
            "h": "0",
            "i": "",
        }
    ]


def test_a_method_named_like_a_formula_is_text_in_the_leaderboard_csv(clients, world):
    Method.objects.filter(pk=world["method"].pk).update(scaffold='=HYPERLINK("http://evil.example","click")')
    response = clients["anonymous"].get("/api/leaderboards/?chip=cpu-interpreter&set=kgb-ms&format=csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [row["scaffold"] for row in rows] == ['\'=HYPERLINK("http://evil.example","click")']
    assert all(not value.startswith(("=", "+", "@")) for row in rows for value in row.values())
    runs = clients["owner"].get("/api/exports/runs/?format=csv")
    exported = list(csv.DictReader(io.StringIO(b"".join(runs.streaming_content).decode())))
    assert exported and all(
        not value.startswith(("=", "+", "@", "-"))
        for row in exported
        for value in row.values()
        if value and not _is_number(value)
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False

"""Run-directory imports (directory, zip, tar.gz, through the API) and the CSV / JSON / JSONL exports."""

from __future__ import annotations

import csv
import io
import json
import tarfile
import zipfile

import pytest

from evaluation.models import Run
from leaderboard.importers import operator_id_from_filename, read_run_archive, read_run_directory, read_run_files
from leaderboard.models import Kernel, Method, Submission
from tests.api.conftest import COS_CODE, SIN_CODE

PROGRESS = {
    "operators": {
        "aten::cos": {
            "status": "completed",
            "duration_seconds": 120.5,
            "token_usage": {
                "input_tokens": 100,
                "output_tokens": 50,
                "cache_creation": 7,
                "cache_read": 3,
                "total": 160,
            },
        },
        "aten__sin": {
            "status": "failed",
            "duration_seconds": 30,
            "token_usage": {"input_tokens": 10, "output_tokens": 5, "total": 15},
        },
        "aten::tan": {"status": "failed", "token_usage": {"total": 999}},
    },
    "token_usage": {"total": 1174},
}
RESULTS = {"aten::cos": {"status": "passed", "passed": 18, "total": 18}, "aten::sin": {"status": "hacked"}}


def run_files(prefix: str = "run-2026/") -> dict[str, bytes]:
    return {
        f"{prefix}kernels/aten__cos.py": COS_CODE.encode(),
        f"{prefix}kernels/aten__sin.py": SIN_CODE.encode(),
        f"{prefix}progress.json": json.dumps(PROGRESS).encode(),
        f"{prefix}results.json": json.dumps(RESULTS).encode(),
        f"{prefix}verification/log_1/test_report_cos.json": b"[]",
        "__MACOSX/._aten__cos.py": b"\0\1",
    }


def test_operator_ids_from_file_names():
    assert operator_id_from_filename("aten__cos.py") == "aten::cos"
    assert operator_id_from_filename("aten___log_softmax.py") == "aten::_log_softmax"
    assert operator_id_from_filename("vllm13__rms_norm.py") == "vllm13::rms_norm"
    assert operator_id_from_filename("cublas__cublasSaxpy_v2.py") == "cublas::cublasSaxpy_v2"
    assert operator_id_from_filename("cos.py") is None


def test_a_run_directory_becomes_uploads_with_tokens_and_time():
    run = read_run_files(run_files())
    assert run.problems == []
    assert [
        (
            u.operator_id,
            u.filename,
            u.input_tokens,
            u.output_tokens,
            u.cache_creation_tokens,
            u.cache_read_tokens,
            u.total_tokens,
            u.solve_seconds,
        )
        for u in run.uploads
    ] == [
        ("aten::cos", "kernels/aten__cos.py", 100, 50, 7, 3, 160, 120.5),
        ("aten::sin", "kernels/aten__sin.py", 10, 5, None, None, 15, 30.0),
    ]
    assert [u.extra for u in run.uploads] == [
        {"progress_status": "completed", "original_status": "passed"},
        {"progress_status": "failed", "original_status": "hacked"},
    ]
    assert run.operators_without_file == ["aten::tan"]
    assert run.summary_note() == (
        "imported from a KernelGenBench run directory (2 kernel files); 1 operators in "
        "progress.json had no kernel file; run-level tokens: 1174"
    )


def test_directory_zip_and_tar_read_the_same(tmp_path):
    for name, data in run_files(prefix="").items():
        path = tmp_path / "run" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    zipped, tarred = io.BytesIO(), io.BytesIO()
    with zipfile.ZipFile(zipped, "w") as archive:
        for name, data in run_files().items():
            archive.writestr(name, data)
    with tarfile.open(fileobj=tarred, mode="w:gz") as archive:
        for name, data in run_files().items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    results = [
        read_run_directory(tmp_path / "run"),
        read_run_archive(data=zipped.getvalue(), filename="r.zip"),
        read_run_archive(data=tarred.getvalue(), filename="r.tgz"),
    ]
    for result in results:
        assert result.problems == []
        assert [(u.operator_id, u.source_code, u.total_tokens) for u in result.uploads] == [
            ("aten::cos", COS_CODE, 160),
            ("aten::sin", SIN_CODE, 15),
        ]


def test_bad_files_are_named():
    files = {
        "kernels/cos.py": b"x",
        "kernels/aten__tan.py": b"\xff\xfe",
        "kernels/aten__cos.py": COS_CODE.encode(),
        "progress.json": b"{not json",
        "../../etc/aten__sin.py": b"def sin(): pass",
    }
    run = read_run_files(files)
    assert run.problems == [
        "progress.json: not valid JSON (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))",
        "kernels/aten__tan.py: not UTF-8 text (invalid start byte at byte 0)",
        "kernels/cos.py: not a kernel file name (expected <namespace>__<operator>.py, e.g. aten__cos.py)",
    ]
    assert [u.operator_id for u in run.uploads] == ["aten::cos"]  # the path climbing out was never read
    assert read_run_archive(data=b"not an archive", filename="x.zip").problems == [
        "x.zip: broken zip archive (File is not a zip file)"
    ]
    assert read_run_archive(data=b"plain text", filename="notes.txt").problems == [
        "notes.txt: not a zip or tar archive, nor a .py file"
    ]
    assert read_run_files({"README.md": b"hi"}).problems == [
        "no kernel files found (expected kernels/<namespace>__<operator>.py)"
    ]


def zip_of(files: dict[str, bytes]) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    buffer.seek(0)
    buffer.name = "run.zip"
    return buffer


def test_import_a_run_directory_archive_through_the_api(clients, world):
    files = {name: data for name, data in run_files().items() if "tan" not in name}
    response = clients["owner"].post(
        "/api/submissions/import/",
        {
            "archive": zip_of(files),
            "scaffold": "Imported Agent",
            "model": "M9",
            "chips": "cpu-interpreter",
            "visibility": "private",
            "notes": "batch 7",
        },
        format="multipart",
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["method"]["label"], body["visibility"], body["kernel_count"]) == ("Imported Agent + M9", "private", 2)
    assert body["notes"].startswith("batch 7\nimported from a KernelGenBench run directory (2 kernel files)")
    kernels = Kernel.objects.filter(submission_id=body["id"]).order_by("operator__operator_id")
    assert [(k.operator.operator_id, k.total_tokens, k.solve_seconds) for k in kernels] == [
        ("aten::cos", 160, 120.5),
        ("aten::sin", 15, 30.0),
    ]
    assert Run.objects.filter(kernel__submission_id=body["id"]).count() == 2


def test_a_bad_archive_is_refused_whole(clients, world):
    before = (Method.objects.count(), Submission.objects.count(), Kernel.objects.count())
    files = dict(run_files(), **{"run-2026/kernels/aten__cos.py": b"def cos(self):\n    return self\n"})
    response = clients["owner"].post(
        "/api/submissions/import/",
        {"archive": zip_of(files), "scaffold": "Never Saved", "chips": ["cpu-interpreter"]},
        format="multipart",
    )
    assert (response.status_code, response.json()) == (
        400,
        {"problems": ["kernels/aten__cos.py: missing entry point(s) cos_out required by aten::cos"]},
    )
    assert (Method.objects.count(), Submission.objects.count(), Kernel.objects.count()) == before
    anonymous = clients["anonymous"].post(
        "/api/submissions/import/", {"archive": zip_of(run_files())}, format="multipart"
    )
    assert anonymous.status_code == 401


def test_leaderboard_csv_has_the_same_numbers_as_json(clients, world):
    board = clients["anonymous"].get("/api/leaderboards/?chip=cpu-interpreter&set=kgb-ms").json()
    response = clients["anonymous"].get("/api/leaderboards/?chip=cpu-interpreter&set=kgb-ms&format=csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [
        (
            row["rank"],
            row["method"],
            row["overall_solved"],
            row["overall_operators_total"],
            row["overall_accuracy_pct"],
            row["aten_accuracy_pct"],
            row["vllm_accuracy_pct"],
        )
        for row in rows
    ] == [("1", "Agent + M1", "1", "3", str(board["rows"][0]["summaries"]["overall"]["accuracy_pct"]), "50.0", "0.0")]
    assert board["views"] == ["overall", "aten", "vllm"]
    with_ops = clients["anonymous"].get("/api/leaderboards/?chip=cpu-interpreter&set=kgb-ms&operators=1").json()
    assert [(o["operator_id"], o["solved"], o["tokens"]) for o in with_ops["rows"][0]["outcomes"]] == [
        ("aten::cos", True, 1000),
        ("aten::sin", False, 500),
    ]
    assert clients["anonymous"].get("/api/leaderboards/?chip=nope").status_code == 404


def test_runs_csv_export(clients, world):
    response = clients["owner"].get("/api/exports/runs/?format=csv&status=passed")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert sorted((int(row["id"]), row["operator_id"], row["status"]) for row in rows) == [
        (world["runs"]["public_cos"].pk, "aten::cos", "passed"),
        (world["runs"]["private_cos"].pk, "aten::cos", "passed"),
    ]
    page = clients["anonymous"].get("/api/runs/?format=json&operator=aten::sin").json()
    assert [run["status"] for run in page["results"]] == ["failed_correctness"]
    # The streamed export and the paged API give a run the same row (same columns, same values).
    exported = next(row for row in rows if int(row["id"]) == world["runs"]["public_cos"].pk)
    api = clients["owner"].get(f"/api/runs/{world['runs']['public_cos'].pk}/?format=json").json()
    assert list(exported) == [column for column in api if column in exported]
    assert set(exported) <= set(api)
    for column in (
        "id",
        "kernel",
        "submission",
        "method",
        "operator_id",
        "chip",
        "status",
        "cases_total",
        "operator_version",
    ):
        assert exported[column] == str(api[column]), column


def test_prompts_come_from_the_catalogs_prompt_module(clients, world, monkeypatch):
    from leaderboard.api import views

    monkeypatch.setattr(views, "operator_prompt_text", lambda operator_id, chip: f"write {operator_id} for {chip}")
    one = clients["anonymous"].get("/api/operators/aten::cos/prompt/?chip=cpu-interpreter").json()
    assert one == {
        "operator_id": "aten::cos",
        "chip": "cpu-interpreter",
        "file_name": "aten__cos.py",
        "prompt": "write aten::cos for cpu-interpreter",
    }
    pack = clients["anonymous"].get("/api/operator-sets/kgb-mc/prompts/?chip=cpu-interpreter").json()
    assert [(item["operator_id"], item["prompt"]) for item in pack] == [
        ("aten::cos", "write aten::cos for cpu-interpreter"),
        ("aten::sin", "write aten::sin for cpu-interpreter"),
    ]
    assert clients["anonymous"].get("/api/operator-sets/kgb-mc/prompts/").status_code == 400
    assert clients["anonymous"].get("/api/operator-sets/kgb-mc/prompts/?chip=tpu").status_code == 404


def test_the_real_prompt_module_is_used_when_the_catalog_loads():
    try:
        from evaluation.catalog.registry import all_operators

        all_operators()
    except Exception as exc:  # the catalog is being written concurrently
        pytest.skip(f"catalog registry does not load here: {exc}")
    from leaderboard.api.views import operator_prompt_text

    text = operator_prompt_text("aten::cos", "nvidia-h200")
    assert text is not None and "aten::cos" in text and "nvidia-h200" in text
    assert operator_prompt_text("aten::no_such_op", "nvidia-h200") is None

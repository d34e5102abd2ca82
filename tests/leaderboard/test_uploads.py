"""Batch uploads: archives parsed in memory, every problem named by file, nothing saved unless all is well."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile

import pytest

from evaluation.models import Run
from leaderboard.models import Kernel, Method, Submission
from leaderboard.uploads import UploadProblems, operator_id_from_filename, parse_upload, parse_usage
from tests.leaderboard.board_data import make_world

COS = "def cos(self):\n    return self\n\ndef cos_out(self, *, out):\n    return out\n"
ADD = "def add_Tensor(self, other, *, alpha=1):\n    return self\n"
PROGRESS = {
    "token_usage": {"input_tokens": 99, "output_tokens": 1, "cache_creation": 0, "cache_read": 0, "total": 100},
    "operators": {
        "aten::cos": {
            "status": "passed",
            "duration_seconds": 120.5,
            "token_usage": {
                "input_tokens": 1000,
                "output_tokens": 200,
                "cache_creation": 30,
                "cache_read": 4000,
                "total": 5230,
            },
        },
        "aten__add": {
            "status": "failed",
            "duration_seconds": 60,
            "token_usage": {"input_tokens": 10, "output_tokens": 2, "cache_creation": 0, "cache_read": 0},
        },
    },
}


def zip_bytes(files: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def tar_bytes(files: dict[str, bytes | str], mode: str = "w:gz", links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return buffer.getvalue()


@pytest.fixture
def world(django_user_model):
    owner = django_user_model.objects.create_user("alice", password=None)
    other = django_user_model.objects.create_user("bob", password=None)
    return make_world(owner=owner, other=other)


def test_file_names_map_to_operator_ids():
    assert operator_id_from_filename("run/kernels/aten__cos.py") == "aten::cos"
    assert operator_id_from_filename("vllm13__rms_norm.py") == "vllm13::rms_norm"
    assert operator_id_from_filename("cublas__cublasSaxpy_v2.py") == "cublas::cublasSaxpy_v2"
    assert operator_id_from_filename("helpers.py") is None
    assert operator_id_from_filename("torch__cos.py") is None


def test_a_kernelgenbench_run_directory_is_understood_as_is(world):
    data = zip_bytes(
        {
            "run/kernels/aten__cos.py": COS,
            "run/kernels/aten__add.py": ADD,
            "run/progress.json": json.dumps(PROGRESS),
            "run/results.json": "{}",
            "run/verification/log_0/test_report_cos.json": "[]",
        }
    )
    uploads = parse_upload(data=data, filename="run.zip")
    by_id = {upload.operator_id: upload for upload in uploads}
    assert sorted(by_id) == ["aten::add", "aten::cos"]
    cos = by_id["aten::cos"]
    assert (
        cos.input_tokens,
        cos.output_tokens,
        cos.cache_creation_tokens,
        cos.cache_read_tokens,
        cos.total_tokens,
        cos.solve_seconds,
    ) == (1000, 200, 30, 4000, 5230, 120.5)
    assert (cos.filename, cos.source_code, cos.extra) == (
        "run/kernels/aten__cos.py",
        COS,
        {"reported_status": "passed"},
    )
    add = by_id["aten::add"]
    assert (add.input_tokens, add.output_tokens, add.total_tokens, add.solve_seconds) == (10, 2, None, 60.0)


def test_tar_gz_with_a_separate_usage_csv(world):
    data = tar_bytes({"aten__cos.py": COS})
    csv_text = b"operator,input_tokens,output_tokens,total,duration_seconds\naten__cos.py,5,6,11,7.5\n"
    [upload] = parse_upload(data=data, filename="kernels.tar.gz", usage_data=csv_text, usage_filename="usage.csv")
    assert (
        upload.operator_id,
        upload.input_tokens,
        upload.output_tokens,
        upload.total_tokens,
        upload.solve_seconds,
    ) == ("aten::cos", 5, 6, 11, 7.5)


def test_simple_json_usage_list():
    usage = parse_usage(
        data=json.dumps([{"operator_id": "aten::cos", "total_tokens": 42}]).encode(), filename="usage.json"
    )
    assert usage == {"aten::cos": {"total_tokens": 42}}


def test_every_problem_names_its_file(world, settings):
    settings.KGB_MAX_KERNEL_BYTES = 1000
    data = zip_bytes(
        {
            "k/aten__cos.py": COS,
            "other/aten__cos.py": COS,
            "k/aten__nope.py": "def nope():\n    pass\n",
            "k/aten__add.py": "def add(self):\n    return self\n",
            "k/cublas__cublasSaxpy_v2.py": b"\xff\xfe not utf-8",
            "k/vllm13__rms_norm.py": "x = 1\n" * 400,
            "k/helper.py": "pass\n",
            "../evil/aten__cos.py": COS,
            "/abs/aten__cos.py": COS,
        }
    )
    with pytest.raises(UploadProblems) as error:
        parse_upload(data=data, filename="batch.zip")
    assert error.value.problems == [
        "../evil/aten__cos.py: refused, path traversal (..)",
        "/abs/aten__cos.py: refused, absolute path",
        "k/cublas__cublasSaxpy_v2.py: not UTF-8 text (invalid start byte at byte 0)",
        "k/vllm13__rms_norm.py: too large (2400 bytes; the limit is 1000)",
        "k/helper.py: not named <namespace>__<op>.py (e.g. aten__cos.py, vllm13__rms_norm.py)",
        "other/aten__cos.py: duplicate operator aten::cos (also in k/aten__cos.py)",
        "k/aten__nope.py: unknown operator 'aten::nope'",
        "k/aten__add.py: missing entry point(s) add_Tensor required by aten::add",
    ]


def test_broken_archives_and_links_are_refused(world):
    with pytest.raises(UploadProblems) as error:
        parse_upload(data=b"PK\x03\x04 truncated", filename="broken.zip")
    assert error.value.problems[0].startswith("broken.zip: broken zip archive (")
    with pytest.raises(UploadProblems) as error:
        parse_upload(data=b"\x1f\x8b not really gzip", filename="broken.tar.gz")
    assert error.value.problems[0].startswith("broken.tar.gz: broken tar archive (")
    with pytest.raises(UploadProblems) as error:
        parse_upload(data=b"hello", filename="notes.txt")
    assert error.value.problems == ["notes.txt: not a zip or tar archive, nor a .py file"]
    with pytest.raises(UploadProblems) as error:
        parse_upload(
            data=tar_bytes({"aten__cos.py": COS}, links={"aten__add.py": "/etc/passwd"}), filename="links.tar.gz"
        )
    assert error.value.problems == ["aten__add.py: refused, not a regular file (link or device)"]
    with pytest.raises(UploadProblems) as error:
        parse_upload(data=zip_bytes({"README.md": "hi"}), filename="empty.zip")
    assert error.value.problems == ["empty.zip: no kernel files (<namespace>__<op>.py) found"]


def test_zip_bombs_stop_at_the_caps(world, settings):
    settings.KGB_MAX_ARCHIVE_BYTES = 100_000
    bomb = zip_bytes({"aten__cos.py": b"#" * 5_000_000})  # 5 MB of one byte compresses to a few KB
    assert len(bomb) < 20_000
    with pytest.raises(UploadProblems) as error:
        parse_upload(data=bomb, filename="bomb.zip")
    assert error.value.problems == ["bomb.zip: uncompressed contents exceed 100000 bytes (at aten__cos.py)"]
    settings.KGB_MAX_ARCHIVE_FILES = 3
    with pytest.raises(UploadProblems) as error:
        parse_upload(data=zip_bytes({f"f{i}.txt": "x" for i in range(4)}), filename="many.zip")
    assert error.value.problems == ["many.zip: too many files (4; the limit is 3)"]
    with pytest.raises(UploadProblems) as error:
        parse_upload(data=tar_bytes({f"f{i}.txt": "x" for i in range(4)}), filename="many.tar.gz")
    assert error.value.problems == ["many.tar.gz: too many files (more than 3)"]


# --- Through the form -------------------------------------------------------------------------------------


def post_batch(client, world, archive: bytes, name: str = "run.zip", **fields):
    data = {
        "scaffold": "Batch Agent",
        "model": "M1",
        "kind": "agent",
        "chips": ["cpu-interpreter"],
        "visibility": "public",
        "notes": "",
        **fields,
    }
    data["archive"] = io.BytesIO(archive)
    data["archive"].name = name
    return client.post("/submit/batch/", data)


def test_batch_form_saves_everything_and_queues_runs(world, client, django_capture_on_commit_callbacks, monkeypatch):
    from evaluation import tasks

    sent = []
    monkeypatch.setattr(
        tasks.judge_run, "apply_async", lambda args, kwargs=None, **options: sent.append(options["queue"])
    )
    client.force_login(world.submissions["fast"].owner)
    archive = zip_bytes(
        {"run/kernels/aten__cos.py": COS, "run/kernels/aten__add.py": ADD, "run/progress.json": json.dumps(PROGRESS)}
    )
    with django_capture_on_commit_callbacks(execute=True):
        response = post_batch(client, world, archive, chips=["cpu-interpreter", "nvidia-h200"])
    submission = Submission.objects.get(method__scaffold="Batch Agent")
    assert response.status_code == 302 and response["Location"] == f"/submissions/{submission.pk}/"
    kernels = Kernel.objects.filter(submission=submission).order_by("operator__operator_id")
    assert [(k.operator.operator_id, k.total_tokens) for k in kernels] == [("aten::add", 12), ("aten::cos", 5230)]
    assert Run.objects.filter(kernel__submission=submission).count() == 4
    assert sorted(sent) == ["chip.cpu-interpreter", "chip.cpu-interpreter", "chip.nvidia-h200", "chip.nvidia-h200"]


def test_batch_form_shows_every_problem_and_saves_nothing(world, client, django_capture_on_commit_callbacks):
    client.force_login(world.submissions["fast"].owner)
    before = (Submission.objects.count(), Kernel.objects.count(), Run.objects.count(), Method.objects.count())
    archive = zip_bytes({"aten__cos.py": COS, "aten__nope.py": "x = 1\n", "../aten__add.py": ADD})
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = post_batch(client, world, archive)
    assert response.status_code == 200
    assert response.context["form"].non_field_errors() == [
        "../aten__add.py: refused, path traversal (..)",
        "aten__nope.py: unknown operator 'aten::nope'",
    ]
    html = response.content.decode()
    assert "aten__nope.py: unknown operator &#x27;aten::nope&#x27;" in html
    after = (Submission.objects.count(), Kernel.objects.count(), Run.objects.count(), Method.objects.count())
    assert (after, len(callbacks)) == (before, 0)


def test_batch_form_needs_a_method(world, client):
    client.force_login(world.submissions["fast"].owner)
    response = post_batch(client, world, zip_bytes({"aten__cos.py": COS}), scaffold="")
    assert response.status_code == 200
    assert response.context["form"].errors["scaffold"] == [
        "Choose one of your methods or name a new one (scaffold at least)."
    ]


def test_batch_form_refuses_another_users_method(world, client):
    client.force_login(world.submissions["fast"].owner)
    response = post_batch(client, world, zip_bytes({"aten__cos.py": COS}), method=str(world.methods["slow"].pk))
    assert response.status_code == 200
    assert "method" in response.context["form"].errors
    assert Submission.objects.filter(method=world.methods["slow"]).count() == 1

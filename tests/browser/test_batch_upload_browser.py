"""A batch upload in a real browser against a real site and worker, through to the leaderboard."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest

from tests.browser.conftest import shot
from tests.e2e.stack import Stack

KERNELS = Path(__file__).resolve().parents[1] / "fixtures" / "kernels"
pytestmark = [pytest.mark.browser, pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture
def stack(tmp_path):
    instance = Stack(data_dir=tmp_path, database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}", broker_url="filesystem://")
    instance.prepare()
    try:
        yield instance
    finally:
        instance.stop()


def run_directory_zip(path: Path) -> Path:
    buffer = io.BytesIO()
    progress = {
        "operators": {
            "aten::cos": {
                "status": "passed",
                "duration_seconds": 90,
                "token_usage": {
                    "input_tokens": 7000,
                    "output_tokens": 500,
                    "cache_creation": 0,
                    "cache_read": 0,
                    "total": 7500,
                },
            }
        }
    }
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("run/kernels/aten__cos.py", (KERNELS / "aten__cos_correct.py").read_text())
        archive.writestr("run/progress.json", json.dumps(progress))
    path.write_bytes(buffer.getvalue())
    return path


def test_batch_upload_goes_through_to_the_leaderboard(stack, page, tmp_path, browser):
    stack.start_site()
    stack.start_worker()
    page.goto(stack.base_url + "/accounts/login/")
    page.fill("input[name=username]", "uploader")
    page.fill("input[name=password]", "uploader-pass-1")
    page.click("form.stacked button[type=submit]")
    page.wait_for_selector("#whoami")

    page.goto(stack.base_url + "/submit/batch/")
    page.set_input_files("input[name=archive]", str(run_directory_zip(tmp_path / "run.zip")))
    page.fill("input[name=scaffold]", "Browser Agent")
    page.fill("input[name=model]", "model-b")
    page.check("input[name=chips][value=cpu-interpreter]")
    shot(page, "batch-upload-form")
    page.click("#batch-form button[type=submit]")
    page.wait_for_url(re.compile(r"/submissions/\d+/$"))

    # The page updates itself as the run finishes: no reload.
    # (A text locator, not wait_for_function: its string predicate is an eval the page's CSP refuses.)
    page.locator("#progress-text", has_text="1 of 1").wait_for(timeout=240_000)
    assert page.locator("#progress-text").inner_text() == "1 of 1 runs finished, 1 passed"
    assert page.locator("#runs .status").inner_text() == "Passed"
    shot(page, "submission-finished")

    page.goto(stack.base_url + "/?chip=cpu-interpreter&set=kgb-ms")
    row = page.locator("#leaderboard tbody tr").first
    assert row.locator("td.method").inner_text() == "Browser Agent + model-b"
    assert "(1/210)" in row.inner_text() or "(1/" in row.inner_text()
    page.goto(stack.base_url + "/boards/cost/?chip=cpu-interpreter&set=kgb-ms")
    assert "7500" in page.locator("#leaderboard tbody tr").first.inner_text()
    shot(page, "board-after-batch-upload")

    # A broken archive comes back on the form, naming the file, and saves nothing.
    page.goto(stack.base_url + "/submit/batch/")
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"PK\x03\x04 not a zip")
    page.set_input_files("input[name=archive]", str(bad))
    page.fill("input[name=scaffold]", "Browser Agent")
    page.check("input[name=chips][value=cpu-interpreter]")
    page.click("#batch-form button[type=submit]")
    assert page.locator("#form-errors li").first.inner_text().startswith("bad.zip: broken zip archive")
    shot(page, "batch-upload-problems")

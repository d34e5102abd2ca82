"""The site as a fresh clone serves it with no settings at all (DEBUG off), through gunicorn with two worker
processes: throttles count across both, static files are hashed, compressed and cached for years, the
favicon and the error pages are there, every page carries the Content-Security-Policy, the API docs load
nothing from other hosts, and what the site wrote in its data dir is closed to other users."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests

from tests.e2e.stack import free_port
from tests.kgbweb.test_data_dir import assert_closed

ROOT = Path(__file__).resolve().parents[2]
ANON_LIMIT = 20
TEN_YEARS = "max-age=315360000, public, immutable"

SIN_CODE = "def sin(self):\n    return self\n\n\ndef sin_out(self, *, out):\n    return out\n"
pytestmark = [pytest.mark.slow, pytest.mark.e2e]


@dataclass
class Server:
    url: str
    data_dir: Path
    static_root: Path
    access_log: Path
    env: dict[str, str]
    master_pid: int

    def get(self, path: str, **kwargs) -> requests.Response:
        # A new connection each time (no keep-alive): the kernel hands each to either gunicorn worker.
        return requests.get(
            self.url + path, headers={"Connection": "close", **kwargs.pop("headers", {})}, timeout=60, **kwargs
        )


def manage(env: dict[str, str], *args: str) -> str:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=True
    ).stdout


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("production")
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(
            ("DJANGO_", "KGB_", "DATABASE_URL", "CELERY_", "SECRET_KEY", "DEBUG", "PYTEST", "REDIS_CACHE_URL", "EMAIL_")
        )
    }
    env.update(
        {
            "KGB_DATA_DIR": str(base / "var"),
            "KGB_STATIC_ROOT": str(base / "static"),
            "KGB_API_ANON_RATE": f"{ANON_LIMIT}/min",
            "DJANGO_SETTINGS_MODULE": "kgbweb.settings",
        }
    )
    manage(env, "migrate", "--noinput")
    manage(env, "collectstatic", "--noinput", "-v0")
    port = free_port()
    access_log = base / "access.log"
    process = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "kgbweb.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--threads",
            "1",
            "--access-logfile",
            str(access_log),
            "--access-logformat",
            "%(p)s %(s)s %(U)s",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(base / "error.log", "wb"),  # noqa: SIM115
        start_new_session=True,
    )
    server = Server(f"http://127.0.0.1:{port}", base / "var", base / "static", access_log, env, process.pid)
    deadline = time.monotonic() + 120
    while True:
        try:
            server.get("/favicon.ico")
            break
        except requests.ConnectionError:
            assert process.poll() is None and time.monotonic() < deadline, (base / "error.log").read_text()
            time.sleep(0.3)
    yield server
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=60)


def worker_pids(master_pid: int) -> list[int]:
    deadline = time.monotonic() + 60
    while True:
        children = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == master_pid:
                children.append(int(stat.parent.name))
        if len(children) == 2 or time.monotonic() > deadline:
            return sorted(children)
        time.sleep(0.2)


@contextmanager
def only_answering(pid: int, workers: list[int]) -> Iterator[None]:
    """Stop every other gunicorn worker, so the kernel can hand new connections to `pid` alone: which worker
    answers is otherwise the kernel's choice, and it often picks the same one for every request."""
    others = [other for other in workers if other != pid]
    for other in others:
        os.kill(other, signal.SIGSTOP)
    try:
        yield
    finally:
        for other in others:
            os.kill(other, signal.SIGCONT)


def answered_by(server: Server) -> list[tuple[str, str]]:
    lines = server.access_log.read_text().splitlines()
    return [(pid.strip("<>"), status) for pid, status, path in map(str.split, lines) if path == "/api/chips/"]


def test_anonymous_throttle_counts_across_both_worker_processes(server):
    first, second = workers = worker_pids(server.master_pid)
    half = ANON_LIMIT // 2
    with only_answering(first, workers):
        assert [server.get("/api/chips/").status_code for _ in range(half)] == [200] * half
    with only_answering(second, workers):
        # A throttle counted per process would let the second worker pass ANON_LIMIT more of its own.
        statuses = [server.get("/api/chips/").status_code for _ in range(ANON_LIMIT - half + 3)]
        assert statuses == [200] * (ANON_LIMIT - half) + [429] * 3
    with only_answering(first, workers):
        assert server.get("/api/chips/").status_code == 429
    time.sleep(0.5)  # gunicorn writes its access log after the response
    served = answered_by(server)
    assert Counter(served) == {
        (str(first), "200"): half,
        (str(second), "200"): ANON_LIMIT - half,
        (str(second), "429"): 3,
        (str(first), "429"): 1,
    }


def test_static_files_are_hashed_compressed_and_cached_for_years(server):
    manifest = json.loads((server.static_root / "staticfiles.json").read_text())["paths"]
    page = server.get("/").text
    css = re.search(r'href="(/static/css/site\.[0-9a-f]{12}\.css)"', page)[1]
    assert css == "/static/" + manifest["css/site.css"]
    plotly = "/static/" + manifest["vendor/plotly.min.js"]
    sizes = {}
    for encoding in ("br", "gzip", "identity"):
        response = server.get(plotly, headers={"Accept-Encoding": encoding})
        assert response.status_code == 200
        assert response.headers["Cache-Control"] == TEN_YEARS
        assert response.headers.get("Content-Encoding", "identity") == encoding
        sizes[encoding] = int(response.headers["Content-Length"])
    raw = (ROOT / "static" / "vendor" / "plotly.min.js").stat().st_size
    assert sizes["identity"] == raw and sizes["br"] < sizes["gzip"] < raw / 2
    print(f"plotly.min.js over the wire: {sizes}")  # noqa: T201 - the figure the README quotes
    # Only hashed names are kept: a page can never pair a new name with an old file from a cache.
    assert server.get("/static/vendor/plotly.min.js").status_code == 404


def test_the_favicon_and_the_error_pages(server):
    icon = server.get("/favicon.ico")
    assert (icon.status_code, icon.content) == (200, (ROOT / "static" / "root" / "favicon.ico").read_bytes())
    missing = server.get("/no/such/page/")
    assert missing.status_code == 404
    assert 'id="not-found"' in missing.text and "Traceback" not in missing.text and "DEBUG" not in missing.text
    run = server.get("/runs/999999999/")
    assert (run.status_code, 'id="not-found"' in run.text) == (404, True)


def test_every_page_carries_the_content_security_policy(server):
    for path in ("/", "/accounts/login/", "/api/docs/", "/api/redoc/", "/no/such/page/"):
        policy = server.get(path).headers["Content-Security-Policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
        assert (directives["default-src"], directives["script-src"], directives["object-src"]) == (
            "'self'",
            "'self'",
            "'none'",
        ), path


def test_the_api_docs_load_nothing_from_another_host(server):
    for path in ("/api/docs/", "/api/redoc/"):
        page = server.get(path).text
        assert re.findall(r'(?:src|href)="(https?://[^"]+)"', page) == [], path
        assert "<style" not in page and not re.search(r"<script>(?!</script>)", page), path
        for asset in re.findall(r'(?:src|href)="(/[^"]+)"', page):
            assert server.get(asset.replace("&amp;", "&")).status_code == 200, asset


def test_what_the_site_wrote_is_closed_to_other_users(server):
    env = server.env
    manage(env, "load_catalog")
    key = (
        manage(
            env,
            "shell",
            "-c",
            (
                "from django.contrib.auth.models import User; from knox.models import AuthToken; "
                "print(AuthToken.objects.create("
                "user=User.objects.create_user('uploader', password='x-9-long-pass'))[1])"
            ),
        )
        .strip()
        .splitlines()[-1]
    )
    response = requests.post(
        server.url + "/api/submissions/",
        timeout=60,
        headers={"Authorization": f"Token {key}"},
        json={
            "scaffold": "Modes",
            "chips": ["cpu-interpreter"],
            "kernels": [{"operator_id": "aten::sin", "code": SIN_CODE}],
        },
    )
    assert response.status_code == 201, response.text
    assert len(list((server.data_dir / "broker" / "queue").iterdir())) == 1  # the run's message, from gunicorn
    assert_closed(server.data_dir)

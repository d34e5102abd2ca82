"""A real deployment in subprocesses for end-to-end tests: database, broker, Celery worker, gunicorn.

Each ``Stack`` gets its own data folder and database (a fresh SQLite file, or a fresh PostgreSQL database
that is dropped afterwards) and its own broker namespace, runs the real ``manage.py`` commands, and talks to
the site over HTTP like a browser would.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class Stack:
    data_dir: Path
    database_url: str
    broker_url: str
    extra_env: dict[str, str] = field(default_factory=dict)
    port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if not key.startswith(("PYTEST", "DJANGO_"))}
        env.update(
            {
                "KGB_DATA_DIR": str(self.data_dir),
                "DATABASE_URL": self.database_url,
                "CELERY_BROKER_URL": self.broker_url,
                "DJANGO_SETTINGS_MODULE": "kgbweb.settings",
                "PYTHONUNBUFFERED": "1",
                "KGB_HEARTBEAT_INTERVAL_S": "1",
                "KGB_WORKER_STALE_AFTER_S": "6",
                "SECRET_KEY": "e2e-secret-" + secrets.token_hex(8),  # the sandbox must never see it
                # Static files from the source folders: no collectstatic per stack (tests/kgbweb covers the
                # hashed, compressed files of production).
                "KGB_STATIC_MANIFEST": "0",
            }
        )
        env.pop("CELERY_TASK_ALWAYS_EAGER", None)
        env.update(self.extra_env)
        return env

    def manage(self, *args: str, check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [PY, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if check and result.returncode != 0:
            raise AssertionError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
        return result

    def prepare(self) -> None:
        self.manage("migrate", "--noinput")
        self.manage("load_catalog")
        self.manage(
            "shell",
            "-c",
            (
                "from django.contrib.auth.models import User;"
                "User.objects.create_user('uploader', password='uploader-pass-1')"
            ),
        )

    def start_worker(self, name: str = "worker") -> subprocess.Popen:
        return self.start_worker_with(name)

    def start_worker_with(
        self, name: str = "worker", *, concurrency: int = 1, env: dict[str, str] | None = None
    ) -> subprocess.Popen:
        """``env`` adds to this worker's environment only (scripts/soak.py skews one worker's clock so)."""
        log = open(self.data_dir / f"{name}.log", "ab")  # noqa: SIM115 - the child process keeps it
        process = subprocess.Popen(
            [
                PY,
                "manage.py",
                "worker",
                "--name",
                f"{name}@e2e-{secrets.token_hex(3)}",
                "--loglevel",
                "INFO",
                "--concurrency",
                str(concurrency),
            ],
            cwd=ROOT,
            env={**self.env, **(env or {})},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes[name] = process
        return process

    def start_site(self) -> None:
        log = open(self.data_dir / "site.log", "ab")  # noqa: SIM115 - the child process keeps it
        gunicorn = str(Path(PY).parent / "gunicorn")
        self.processes["site"] = subprocess.Popen(
            [gunicorn, "kgbweb.wsgi", "--bind", f"127.0.0.1:{self.port}", "--workers", "2", "--timeout", "120"],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                if requests.get(self.base_url + "/", timeout=60).status_code == 200:
                    return
            except requests.RequestException:
                time.sleep(0.3)
        raise AssertionError("the site did not come up:\n" + self.log("site"))

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        process = self.processes.pop(name)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # a graceful stop that hangs (gunicorn mid-request) is forced
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=30)

    def stop(self) -> None:
        for name in list(self.processes):
            self.kill(name, signal.SIGTERM if name == "site" else signal.SIGKILL)

    def log(self, name: str) -> str:
        path = self.data_dir / f"{name}.log"
        return path.read_text(errors="replace")[-6000:] if path.exists() else ""

    # --- Acting as a user -----------------------------------------------------------------------

    def login(self, username: str = "uploader", password: str = "uploader-pass-1") -> requests.Session:
        session = requests.Session()
        page = session.get(self.base_url + "/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        response = session.post(
            self.base_url + "/accounts/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token},
            headers={"Referer": self.base_url + "/accounts/login/"},
        )
        assert response.status_code == 200 and "Log out" in response.text, "login failed"
        return session

    def upload(
        self,
        session: requests.Session,
        path: Path,
        *,
        operator_id: str = "aten::cos",
        scaffold: str = "E2E Agent",
        model: str = "test-model",
        chips: tuple[str, ...] = ("cpu-interpreter",),
        total_tokens: int = 1000,
        visibility: str = "public",
    ) -> tuple[int, requests.Response]:
        """Upload through the web form; returns (submission id or 0, the final response)."""
        page = session.get(self.base_url + "/submit/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        data = {
            "operator": operator_id,
            "scaffold": scaffold,
            "model": model,
            "kind": "agent",
            "chips": list(chips),
            "visibility": visibility,
            "total_tokens": str(total_tokens),
            "csrfmiddlewaretoken": token,
        }
        with open(path, "rb") as handle:
            response = session.post(
                self.base_url + "/submit/",
                data=data,
                files={"kernel_file": (path.name, handle, "text/x-python")},
                headers={"Referer": self.base_url + "/submit/"},
            )
        match = re.search(r"/submissions/(\d+)/", response.url)
        return (int(match.group(1)) if match else 0), response

    def wait_for_runs(self, session: requests.Session, submission_id: int, timeout: float = 240) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            status = session.get(f"{self.base_url}/submissions/{submission_id}/status.json").json()
            if status["total"] and status["finished"] == status["total"]:
                return status
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"runs not finished after {timeout} s: {status}\nworker log:\n{self.log('worker')}"
                )
            time.sleep(0.5)

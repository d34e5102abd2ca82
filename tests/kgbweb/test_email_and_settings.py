"""Password reset really sends (Django's locmem outbox, and the console backend `make run` uses), and the
settings a fresh clone gets: DEBUG off, a generated SECRET_KEY, email from the environment."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from django.core import mail

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def alice(user):
    user.email = "alice@example.org"
    user.save()
    return user


def reset_link(body: str) -> str:
    return re.search(r"http://testserver(/accounts/reset/\S+/)", body)[1]


def test_password_reset_sends_a_link_that_sets_a_new_password(client, alice, mailoutbox):
    response = client.post("/accounts/password_reset/", {"email": "alice@example.org"})
    assert (response.status_code, response["Location"]) == (302, "/accounts/password_reset/done/")
    assert [(message.to, message.subject) for message in mailoutbox] == [
        (["alice@example.org"], "Password reset on testserver")
    ]
    link = reset_link(mailoutbox[0].body)
    form_url = client.get(link)["Location"]  # Django swaps the token for a session-held one
    weak = client.post(form_url, {"new_password1": "12345678", "new_password2": "12345678"})
    assert "This password is entirely numeric." in weak.content.decode()
    alice.refresh_from_db()
    assert alice.check_password("alice-pass-123")
    done = client.post(form_url, {"new_password1": "reset-and-better-7", "new_password2": "reset-and-better-7"})
    assert (done.status_code, done["Location"]) == (302, "/accounts/reset/done/")
    alice.refresh_from_db()
    assert alice.check_password("reset-and-better-7")
    again = client.get(link)  # the link is spent once the password changed
    assert b'id="reset-link-invalid"' in again.content


def test_password_reset_for_an_unknown_address_sends_nothing_and_says_the_same(client, alice, mailoutbox):
    response = client.post("/accounts/password_reset/", {"email": "nobody@example.org"})
    assert (response.status_code, response["Location"]) == (302, "/accounts/password_reset/done/")
    assert mailoutbox == []
    assert b'id="reset-sent"' in client.get(response["Location"]).content


def test_the_console_backend_prints_the_reset_mail(client, alice, settings, capsys):
    settings.EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
    client.post("/accounts/password_reset/", {"email": "alice@example.org"})
    printed = capsys.readouterr().out
    assert "To: alice@example.org" in printed
    assert reset_link(printed).startswith("/accounts/reset/")
    assert mail.outbox == []  # it went to the console, not to Django's test outbox


def settings_in_a_fresh_process(tmp_path: Path, **env: str) -> dict:
    """What kgbweb.settings says in a new interpreter with only ``env`` set (and a data dir of its own)."""
    environment = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DEBUG", "SECRET_KEY", "EMAIL_", "DJANGO_", "KGB_", "REDIS_CACHE"))
    }
    environment.update({"KGB_DATA_DIR": str(tmp_path / "var"), "DJANGO_SETTINGS_MODULE": "kgbweb.settings", **env})
    script = (
        "import json; from django.conf import settings as s; print(json.dumps({name: str(getattr(s, name, ''))"
        " for name in ('DEBUG', 'SECRET_KEY', 'EMAIL_BACKEND', 'EMAIL_HOST', 'EMAIL_PORT', 'EMAIL_USE_TLS',"
        " 'SESSION_COOKIE_SECURE', 'CACHES', 'ALLOWED_HOSTS')}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_a_fresh_clone_runs_without_debug_on_a_key_of_its_own(tmp_path):
    first = settings_in_a_fresh_process(tmp_path)
    key_file = tmp_path / "var" / "secret_key"
    assert (first["DEBUG"], first["EMAIL_BACKEND"]) == ("False", "django.core.mail.backends.console.EmailBackend")
    assert first["SECRET_KEY"] == key_file.read_text().strip() and len(first["SECRET_KEY"]) == 50
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "var").stat().st_mode) == 0o700
    assert settings_in_a_fresh_process(tmp_path)["SECRET_KEY"] == first["SECRET_KEY"]  # kept, not regenerated
    assert first["SESSION_COOKIE_SECURE"] == "False"  # served on localhost only: plain http works
    assert "DatabaseCache" in first["CACHES"]
    assert settings_in_a_fresh_process(tmp_path, DEBUG="1")["DEBUG"] == "True"


def test_production_settings_come_from_the_environment(tmp_path):
    chosen = settings_in_a_fresh_process(
        tmp_path,
        SECRET_KEY="k" * 50,
        EMAIL_HOST="smtp.example.org",
        ALLOWED_HOSTS="kgb.example.org",
        REDIS_CACHE_URL="redis://127.0.0.1:6379/3",
    )
    assert chosen["SECRET_KEY"] == "k" * 50
    assert not (tmp_path / "var" / "secret_key").exists()
    assert (chosen["EMAIL_BACKEND"], chosen["EMAIL_HOST"], chosen["EMAIL_PORT"], chosen["EMAIL_USE_TLS"]) == (
        "django.core.mail.backends.smtp.EmailBackend",
        "smtp.example.org",
        "587",
        "True",
    )
    assert chosen["SESSION_COOKIE_SECURE"] == "True"  # served beyond this machine: https cookies
    assert "RedisCache" in chosen["CACHES"] and "redis://127.0.0.1:6379/3" in chosen["CACHES"]

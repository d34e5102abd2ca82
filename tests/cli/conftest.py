"""The client against a live test server (pytest-django's live_server): real HTTP, the test database."""

from __future__ import annotations

import pytest

from tests.api.conftest import fast_passwords, fresh_throttles, operators  # noqa: F401  (shared fixtures)


@pytest.fixture
def kgb_env(live_server, user, monkeypatch, tmp_path):
    """KGB_URL / KGB_TOKEN for alice, and a private config folder."""
    from knox.models import AuthToken

    _, token = AuthToken.objects.create(user=user)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("KGB_URL", live_server.url)
    monkeypatch.setenv("KGB_TOKEN", token)
    return {"url": live_server.url, "token": token}

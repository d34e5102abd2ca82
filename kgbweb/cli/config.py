"""Where ``kgb`` finds the server and the token: flags, then KGB_URL / KGB_TOKEN, then the config file
(``$XDG_CONFIG_HOME/kgb/config.json``, by default ``~/.config/kgb/config.json``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8000"


@dataclass
class Config:
    url: str = DEFAULT_URL
    token: str = ""


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "kgb" / "config.json"


def load_config(*, url: str | None = None, token: str | None = None) -> Config:
    stored: dict = {}
    path = config_path()
    if path.exists():
        try:
            stored = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            stored = {}
    return Config(
        url=(url or os.environ.get("KGB_URL") or stored.get("url") or DEFAULT_URL).rstrip("/"),
        token=token or os.environ.get("KGB_TOKEN") or stored.get("token") or "",
    )


def save_config(config: Config) -> Path:
    """Write the config readable by its owner only: the token acts as the user."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump({"url": config.url, "token": config.token}, handle, indent=2)
    return path

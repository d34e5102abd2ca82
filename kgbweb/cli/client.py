"""A thin HTTP client of the /api/ endpoints; errors become ``KgbError`` with the server's own words."""

from __future__ import annotations

import time
from typing import Any

import requests

from kgbweb.cli.config import Config


class KgbError(Exception):
    """Something the user should read: the server's problems list, a refusal, or an unreachable server."""


class KgbClient:
    def __init__(self, config: Config, *, timeout: float = 120.0) -> None:
        self.base = config.url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers["User-Agent"] = "kgb-client/1"
        if config.token:
            self.session.headers["Authorization"] = f"Token {config.token}"

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        url = self.base + path
        try:
            response = self.session.request(method, url, timeout=self.timeout, **kwargs)
        except requests.ConnectionError as exc:
            raise KgbError(
                f"cannot reach {self.base} ({exc.__class__.__name__}); check the URL (kgb login --url)"
            ) from None
        except requests.RequestException as exc:  # a malformed URL or token, a timeout: say so, no traceback
            raise KgbError(f"request to {url} failed: {exc}") from None
        if response.status_code >= 400:
            raise KgbError(describe_error(response))
        return response

    def get_json(self, path: str, *, retries: int = 0, **params: Any) -> Any:
        """GET and decode; ``retries`` more attempts on a server error or lost connection (reads only)."""
        params = {key: value for key, value in params.items() if value is not None}
        for attempt in range(retries + 1):
            try:
                return self.request("GET", path, params=params).json()
            except KgbError as error:
                transient = str(error).startswith(("HTTP 5", "cannot reach"))
                if not transient or attempt == retries:
                    raise
                time.sleep(min(30.0, 0.5 * 2**attempt))
        raise AssertionError("unreachable")

    def post_json(self, path: str, body: Any, **params: Any) -> Any:
        return self.request("POST", path, json=body, params=params or None).json()


def describe_error(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return f"HTTP {response.status_code}: {response.text[:500]}"
    if isinstance(body, dict) and isinstance(body.get("problems"), list):
        return "refused:\n" + "\n".join(f"  - {problem}" for problem in body["problems"])
    if isinstance(body, dict) and "detail" in body:
        hint = " (run `kgb login`)" if response.status_code in (401, 403) else ""
        return f"HTTP {response.status_code}: {body['detail']}{hint}"
    return f"HTTP {response.status_code}: {body}"

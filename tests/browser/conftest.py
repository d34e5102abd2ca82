"""Playwright driving Debian's Chromium (never a downloaded browser). Skipped with a reason where it is absent,
except under KGB_REQUIRE_SERVICES=1 (CI), where a missing browser is a failure."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("KGB_CHROMIUM", "/usr/bin/chromium"))
REQUIRE_SERVICES = os.environ.get("KGB_REQUIRE_SERVICES") == "1"
SHOTS = Path(os.environ.get("KGB_SHOTS_DIR", "/tmp/kgb-shots"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still synchronous.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def _unavailable(reason: str) -> None:
    if REQUIRE_SERVICES:
        pytest.fail(f"browser tests are required here (KGB_REQUIRE_SERVICES=1) but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator:
    if not CHROMIUM.exists():
        _unavailable(f"{CHROMIUM} is absent (apt-get install -y chromium, or `make browser`)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("the playwright package is not installed (pip install playwright)")
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield instance
        instance.close()


@pytest.fixture
def page(browser) -> Iterator:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.js_errors = errors
    yield page
    context.close()


def shot(page, name: str) -> Path:
    """A full-page screenshot under /tmp/kgb-shots, for people to look at."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path

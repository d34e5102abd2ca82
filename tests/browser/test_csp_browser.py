"""Under the Content-Security-Policy, in Chromium: every page draws (plots, API docs, forms) with nothing
refused by the policy and nothing fetched from another host."""

from __future__ import annotations

import pytest

from tests.browser.conftest import shot
from tests.browser.test_leaderboard_browser import log_in, world  # noqa: F401  (the boards' data)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


# ReDoc's sidebar always shows Redocly's logo from their CDN; the policy refuses it before any request leaves
# (the one place the policy has to refuse something: no option of ReDoc's turns the logo off).
REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def watch(page, base_url: str) -> tuple[list[str], list[str]]:
    """Requests to other hosts that were not refused by the policy, and the console's policy refusals."""
    foreign: list[str] = []
    refused: list[str] = []

    def failed(request) -> None:
        if request.url == REDOC_LOGO and request.failure in ("csp", "net::ERR_BLOCKED_BY_CSP"):
            return
        foreign.append(f"{request.url} ({request.failure})")

    page.on(
        "requestfinished",
        lambda request: None if request.url.startswith((base_url, "data:", "blob:")) else foreign.append(request.url),
    )
    page.on(
        "requestfailed",
        lambda request: None if request.url.startswith((base_url, "data:", "blob:")) else failed(request),
    )
    page.on(
        "console",
        lambda message: (
            refused.append(message.text)
            if ("Content Security Policy" in message.text or "Refused to" in message.text)
            and REDOC_LOGO not in message.text
            else None
        ),
    )
    return foreign, refused


def test_pages_draw_under_the_policy_with_nothing_from_other_hosts(world, live_server, page):  # noqa: F811
    foreign, refused = watch(page, live_server.url)
    for name, path, selector in [
        ("csp-board", "/?chip=nvidia-h200&set=kgb-ms", "#accuracy-by-source[data-plotted='1'] .gtitle"),
        ("csp-plots", "/plots/?chip=nvidia-h200", "#speedup-distribution[data-plotted='1'] .gtitle"),
        ("csp-multi-chip", "/boards/multi-chip/?set=kgb-mc", "#accuracy-heatmap[data-plotted='1'] .gtitle"),
        ("csp-redoc", "/api/redoc/", "redoc .api-content h1"),
        ("csp-swagger", "/api/docs/", ".swagger-ui .information-container"),
        ("csp-login", "/accounts/login/", "input[name=username]"),
        ("csp-not-found", "/no/such/page/", "#not-found"),
    ]:
        page.goto(live_server.url + path)
        page.wait_for_selector(selector, timeout=60_000)
        shot(page, name)
    # Script-driven parts still work: the chip picker of an operator page submits itself.
    page.goto(live_server.url + "/operators/aten::cos/?chip=nvidia-h200")
    with page.expect_navigation():
        page.select_option("select.autosubmit", index=0)
    assert (foreign, refused, page.js_errors) == ([], [], [])


def test_the_submission_page_fills_its_progress_bar_without_inline_style(world, live_server, page):  # noqa: F811
    foreign, refused = watch(page, live_server.url)
    log_in(page, live_server.url, "alice", "alice-pass-123")
    submission = world.runs["fast_saxpy"].kernel.submission
    page.goto(f"{live_server.url}/submissions/{submission.pk}/")
    # A <progress> element: its value is an attribute, no style="..." for the CSP to refuse (docs/csp.md).
    value, maximum, style = page.eval_on_selector("#progress-bar", "e => [e.value, e.max, e.getAttribute('style')]")
    assert (value > 0, maximum >= value, style) == (True, True, None)
    assert (foreign, refused, page.js_errors) == ([], [], [])

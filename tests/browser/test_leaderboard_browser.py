"""The pages in a real browser: plots drawn from our own static files, sorting and filters, private code."""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import shot
from tests.leaderboard.board_data import make_world

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def world(transactional_db, django_user_model):
    from leaderboard import selectors

    selectors.clear_board_memo()
    owner = django_user_model.objects.create_user("alice", password="alice-pass-123")
    other = django_user_model.objects.create_user("bob", password="bob-pass-123")
    return make_world(owner=owner, other=other)


def method_names(page) -> list[str]:
    return [cell.strip() for cell in page.locator("#leaderboard tbody tr td.method").all_inner_texts()]


def log_in(page, base_url: str, username: str, password: str) -> None:
    page.goto(base_url + "/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("form.stacked button[type=submit]")
    page.wait_for_selector("#whoami")


def test_leaderboard_renders_with_plots_sorting_and_filters(world, live_server, page):
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto(live_server.url + "/?chip=nvidia-h200&set=kgb-ms")
    assert method_names(page) == ["Fast Agent + Opus-4.6", "Pass@1 + GLM-5.0"]
    page.wait_for_selector("#accuracy-by-source[data-plotted='1'] .main-svg")
    assert page.locator("#accuracy-by-source .legendtext").all_text_contents() == ["Overall", "ATen", "vLLM", "cuBLAS"]
    assert all(url.startswith(live_server.url) for url in requested), "everything is served by us: no CDN"
    header = page.locator("th[title^='Device-time speedup (large cases, launch cost hidden)']").first
    assert "PASSED operators only" in header.get_attribute("title")
    shot(page, "board-multi-source")

    # Sorting: click the overall speedup column twice (descending, then ascending).
    page.click("#leaderboard thead a[href*='overall.speedup']")
    page.wait_for_url(re.compile(r"sort=-overall.speedup"))
    assert method_names(page) == ["Pass@1 + GLM-5.0", "Fast Agent + Opus-4.6"]
    page.click("#leaderboard thead a[href*='overall.speedup']")
    page.wait_for_url(re.compile(r"sort=overall.speedup"))
    assert method_names(page) == ["Fast Agent + Opus-4.6", "Pass@1 + GLM-5.0"]

    # Filters: a method kind checkbox applies on change; the model box with the Apply button.
    page.check("input[name=kind][value=pass_at_k]")
    page.wait_for_url(re.compile(r"kind=pass_at_k"))
    assert method_names(page) == ["Pass@1 + GLM-5.0"]
    page.uncheck("input[name=kind][value=pass_at_k]")
    page.wait_for_load_state()
    page.fill("input[name=model]", "opus")
    page.click("#filters button[type=submit]")
    page.wait_for_url(re.compile(r"model=opus"))
    assert method_names(page) == ["Fast Agent + Opus-4.6"]

    # Another chip through the picker.
    page.goto(live_server.url + "/")
    page.select_option("select[name=chip]", "platform-a")
    page.wait_for_url(re.compile(r"chip=platform-a"))
    # Both solved one operator with kernels written for Platform A; Fast Agent's is faster (1.2x against 0.8x).
    assert method_names(page) == ["Fast Agent + Opus-4.6", "Pass@1 + GLM-5.0"]
    assert page.locator("#leaderboard tbody tr").first.locator("td").nth(3).inner_text() == "25.0 (1/4)"
    assert page.js_errors == []


def test_every_board_and_plot_page_draws(world, live_server, page):
    fast = world.methods["fast"].pk
    for name, path, selector in [
        ("board-multi-chip", "/boards/multi-chip/?set=kgb-mc", "#accuracy-heatmap[data-plotted='1']"),
        ("board-cost", "/boards/cost/?chip=nvidia-h200", "#accuracy-vs-tokens[data-plotted='1']"),
        ("board-matched", "/boards/matched/?chip=nvidia-h200", "#leaderboard"),
        ("board-portability", f"/boards/portability/?set=kgb-mc&method={fast}", "#pass-matrix"),
        ("board-curated-set", "/sets/pointwise/?chip=nvidia-h200", "#accuracy-by-source[data-plotted='1']"),
        ("plots", "/plots/?chip=nvidia-h200", "#speedup-vs-roofline[data-plotted='1']"),
        ("operator-page", "/operators/aten::cos/?chip=nvidia-h200", "#entry-points"),
        ("method-page", f"/methods/{fast}/", "#method-chips"),
        ("run-page", f"/runs/{world.runs['fast_saxpy'].pk}/", "#kernel-code .highlight"),
    ]:
        page.goto(live_server.url + path)
        page.wait_for_selector(selector)
        shot(page, name)
    page.goto(live_server.url + "/plots/?chip=nvidia-h200")
    for plot in (
        "accuracy-by-source",
        "accuracy-vs-tokens",
        "accuracy-heatmap",
        "speedup-heatmap",
        "speedup-distribution",
        "speedup-vs-roofline",
    ):
        page.wait_for_selector(f"#{plot}[data-plotted='1'] .gtitle")
    titles = page.locator(".gtitle").all_text_contents()
    assert titles[0] == "Accuracy by operator source on NVIDIA H200"
    # This world's runs were judged without the protocol stage: its figures say so, drawn as nothing.
    for plot in ("protocol-speedup-heatmap", "protocol-speedup-distribution"):
        assert page.locator(f"#{plot}.plot-empty").inner_text().endswith(": no data yet."), plot
    assert page.locator("#protocol-speedup-heatmap").inner_text().startswith("Protocol speedup (PROTOCOL 6) per method")
    from leaderboard.catalog_loader import paper_results_load

    assert paper_results_load() > 0
    page.goto(live_server.url + "/?chip=nvidia-h200&paper=1")
    assert page.locator("#paper-layer tr.paper").count() > 5
    shot(page, "board-with-paper-layer")
    page.goto(live_server.url + "/boards/multi-chip/?set=kgb-mc&paper=1")
    assert "AutoKernel" in page.locator("#paper-layer").inner_text()
    shot(page, "board-multi-chip-with-paper-layer")
    assert page.js_errors == []


def test_another_user_cannot_see_private_code(world, live_server, page):
    run = world.runs["private_add"]
    log_in(page, live_server.url, "bob", "bob-pass-123")
    response = page.goto(f"{live_server.url}/runs/{run.pk}/")
    assert response.status == 404
    assert "SECRET_KERNEL_CODE" not in page.content()
    page.goto(live_server.url + "/")
    page.click("#user-menu summary")
    page.click("text=Log out")
    page.wait_for_selector("text=Log in")
    log_in(page, live_server.url, "alice", "alice-pass-123")
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    code = page.locator("#kernel-code").inner_text()
    assert "SECRET_KERNEL_CODE = '<script>alert(1)</script>'" in code  # shown as text, never run
    assert page.js_errors == []
    shot(page, "run-page-private-owner")

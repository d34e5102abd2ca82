"""Bytes a browser transfers for a page and everything it loads, measured with Debian's Chromium.

Usage: python scripts/page_weight.py http://127.0.0.1:8731/ http://127.0.0.1:8731/boards/multi-chip/ ...
Prints, per page: requests, bytes on the wire (headers + bodies as transferred, compressed where the server
compressed), decoded body bytes, and the document's width at 1400 px and 390 px (scrollWidth vs clientWidth).
Optional: --shots DIR saves full-page screenshots at both widths.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def measure(browser, url: str, width: int, shots: Path | None) -> dict:
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    client = context.new_cdp_session(page)
    client.send("Network.enable")
    wire: dict[str, int] = {}
    client.on(
        "Network.loadingFinished", lambda event: wire.__setitem__(event["requestId"], int(event["encodedDataLength"]))
    )
    decoded = 0
    responses = []
    page.on("response", lambda response: responses.append(response))
    page.goto(url, wait_until="networkidle")
    for response in responses:
        with contextlib.suppress(Exception):  # redirects have no body
            decoded += len(response.body())
    widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        name = url.split("//", 1)[1].split("/", 1)[1].strip("/").replace("/", "_").replace("?", "_") or "home"
        page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
    context.close()
    return {"requests": len(responses), "wire": sum(wire.values()), "decoded": decoded, "widths": widths}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("urls", nargs="+")
    parser.add_argument("--shots", type=Path)
    args = parser.parse_args()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
        for url in args.urls:
            wide = measure(browser, url, 1400, args.shots)
            narrow = measure(browser, url, 390, args.shots)
            print(
                f"{url}\n  requests {wide['requests']}, on the wire {wide['wire']:,} B,"
                f" decoded {wide['decoded']:,} B;"
                f" scrollWidth/clientWidth at 1400 px {wide['widths'][0]}/{wide['widths'][1]},"
                f" at 390 px {narrow['widths'][0]}/{narrow['widths'][1]}"
            )
        browser.close()


if __name__ == "__main__":
    main()

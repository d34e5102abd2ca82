"""Our templates keep to the Content-Security-Policy's rules (docs/csp.md): no inline script, no event-handler
attribute, no style attribute or element. JSON data blocks (json_script) are not scripts and are allowed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/(?:ld\+)?json\")[^>]*>", re.I)
HANDLER = re.compile(r"\son[a-z]+\s*=", re.I)
STYLE = re.compile(r"<style\b|\sstyle\s*=", re.I)


@pytest.mark.parametrize("path", sorted(TEMPLATES.rglob("*.html")), ids=lambda path: str(path.relative_to(TEMPLATES)))
def test_no_template_needs_what_the_policy_refuses(path):
    text = path.read_text()
    assert (INLINE_SCRIPT.findall(text), HANDLER.findall(text), STYLE.findall(text)) == ([], [], [])


def test_the_checks_catch_what_they_are_for():
    assert INLINE_SCRIPT.findall('<script>alert(1)</script><script src="/a.js"></script>') == ["<script>"]
    assert INLINE_SCRIPT.findall('<script type="application/json" id="x">{}</script>') == []
    assert HANDLER.findall('<select name="chip" onchange="this.form.submit()">') == [" onchange="]
    assert STYLE.findall('<div style="width: 5%"></div><style>p{}</style>') == [" style=", "<style"]

"""Small template helpers for the leaderboard pages."""

from typing import Any

from django import template
from django.utils.safestring import SafeString, mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

register = template.Library()


@register.filter
def dictget(mapping: dict, key: Any) -> Any:
    """``{{ row.summaries|dictget:view }}``: a dict lookup with a variable key."""
    return mapping.get(key) if mapping else None


@register.filter
def fastp(summary: Any, threshold: str) -> Any:
    """``{{ s|fastp:"1.5" }}``: a summary's fast_p share at a threshold."""
    return summary.fast_p.get(threshold) if summary else None


@register.filter
def percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


@register.simple_tag(takes_context=True)
def sort_url(context: dict, key: str) -> str:
    """The current page's query string with ``sort`` set to ``key`` (toggling direction when already sorted)."""
    request = context["request"]
    params = request.GET.copy()
    current = params.get("sort", "")
    params["sort"] = key if current == "-" + key else "-" + key
    if key in ("method", "kind") and current != key:
        params["sort"] = key
    return "?" + params.urlencode()


@register.simple_tag(takes_context=True)
def sort_mark(context: dict, key: str) -> str:
    current = context["request"].GET.get("sort", "")
    return "▼" if current == "-" + key else ("▲" if current == key else "")


def highlight_python(source_code: str) -> SafeString:
    """Pygments escapes every character of the source: a kernel's text can never become markup."""
    # One anchor per line (id "L-<n>"), so a compile error's line on the run page links into the code.
    formatter = HtmlFormatter(cssclass="highlight", linenos="table", lineanchors="L", anchorlinenos=True)
    return mark_safe(highlight(source_code, PythonLexer(), formatter))


@register.filter
def num(value: float | int | None, digits: int | str = 2) -> str:
    """A fixed-point number, like ``floatformat`` but without Decimal and locale work (boards have thousands)."""
    if value is None or value == "":
        return ""
    try:
        return f"{float(value):.{int(digits)}f}"
    except (TypeError, ValueError):
        return ""

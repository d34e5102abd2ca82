"""Small template helpers for the leaderboard pages."""

import json
from html import escape as html_escape  # what django.utils.html.escape does, without its lazy-string wrapper
from typing import Any
from urllib.parse import quote

import orjson
from django import template
from django.core.serializers.json import DjangoJSONEncoder
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import RFC3986_SUBDELIMS
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


@register.filter
def figure_script(value: Any, element_id: str) -> SafeString:
    """Django's ``json_script``, value for value: the same element and escapes, the JSON written by orjson
    (compact, UTF-8 as is), which on a plots page's half megabyte of figures takes a tenth of the standard
    library's time. What orjson does not write as ``DjangoJSONEncoder`` would (dates, decimals, lazy strings,
    keys that are not strings) is written by it, as ``json_script`` does."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS).decode()
    except orjson.JSONEncodeError:
        text = json.dumps(value, cls=DjangoJSONEncoder)
    # json_script's three escapes, with str.replace (a tenth of the time of its str.translate on megabytes).
    text = text.replace("&", "\\u0026").replace("<", "\\u003C").replace(">", "\\u003E")
    return format_html('<script id="{}" type="application/json">{}</script>', element_id, mark_safe(text))


# --- Board cells -----------------------------------------------------------------------------------------
# The boards' inner loops (a cell per chip, view or operator: hundreds per page) are written here rather than
# in the template language, which spent longer on them than the whole page's reads. Each writes, character
# for character, what the template markup it replaced wrote (tests/leaderboard/test_board_queries.py keeps
# that markup and compares): keep them in step with the templates around them.


def _url_around(context: Any, name: str) -> tuple[str, str]:
    """A one-argument route's URL before and after its argument, reversed once per rendering."""
    cached = context.render_context.setdefault("kgb_urls", {})
    parts = cached.get(name)
    if parts is None:
        sentinel = "987654321"
        parts = cached[name] = tuple(reverse(name, args=[sentinel]).split(sentinel))
    return parts


def _run_url(context: Any) -> tuple[str, str]:
    """The run page's URL around its id, reversed once per rendering."""
    return _url_around(context, "leaderboard:run")


@register.simple_tag(takes_context=True)
def row_url(context: Any, name: str, value: Any) -> str:
    """``{% url name value %}`` for a route of one argument (a method's pk, an operator id), as ``reverse``
    writes it, but reversed once per rendering: boards link every row, and a reverse costs as much as a row."""
    text = str(value)
    if not text or "/" in text:  # no route takes these: let reverse say so, as the url tag would
        return reverse(name, args=[value])
    before, after = _url_around(context, name)
    return before + quote(text, safe=RFC3986_SUBDELIMS + "/~:@") + after


@register.simple_tag(takes_context=True)
def matrix_cells(context: Any, line: dict) -> SafeString:
    """A pass-matrix line's cells: each chip's verdict, linked to the run it stands for."""
    before, after = _run_url(context)
    operator_id = html_escape(line["operator_id"])
    parts = []
    for cell in line["cells"]:
        outcome, state = cell["outcome"], html_escape(cell["state"])
        title = f"{operator_id} on {html_escape(cell['chip'].label)}: {state}"
        if outcome is not None and outcome.speedup:
            title += f", {num(outcome.speedup, 2)}×"
        if outcome is not None and outcome.stale:
            title += " (stale)"
        mark = "✓" if cell["state"] == "passed" else "✗"
        if cell.get("run_id"):
            body = f'<a href="{html_escape(before + str(cell["run_id"]) + after)}">{mark}</a>'
        else:
            body = mark if cell["state"] in ("passed", "failed") else ""
        parts.append(f'<td class="cell {state}" title="{title}">{body}</td>')
    return mark_safe("".join(parts))


@register.simple_tag
def portability_cells(row: Any, chips: list, reference: Any) -> SafeString:
    """A portability row's cells: per chip, accuracy and speedup with their ratios to the reference chip, and
    the ported kernels' accuracy."""
    parts = []
    for chip in chips:
        summary, ported = row.per_chip.get(chip.pk), row.ported.get(chip.pk)
        accuracy_ratio, speedup_ratio = row.accuracy_ratio.get(chip.pk), row.speedup_ratio.get(chip.pk)
        if summary is not None:
            cell = f"{num(summary.accuracy_pct, 0)}%"
            if accuracy_ratio is not None and chip != reference:
                cell += f" <small>({num(accuracy_ratio, 2)}× of ref.)</small>"
            cell += "\n        <br>"
            if summary.speedup_geomean:
                cell += f"{num(summary.speedup_geomean, 2)}×"
                if speedup_ratio is not None and chip != reference:
                    cell += f" <small>({num(speedup_ratio, 2)}×)</small>"
            else:
                cell += "<small>speed unknown</small>"
        else:
            cell = "–"
        cell += "\n        "
        if ported is not None:
            cell += (
                f'<br><small class="ported" title="Kernels this method wrote for another chip, judged on '
                f'{html_escape(chip.label)}">ported: {num(ported.accuracy_pct, 0)}%</small>'
            )
        parts.append(f'\n      <td class="num">{cell}</td>\n    ')
    return mark_safe("".join(parts))


# Why a protocol speedup is unknown, as an em dash's title: never 0 or NaN (PROTOCOL 6).
PROTOCOL_UNKNOWN_OLD = (
    "no protocol speedup: these passes' judge did not time every case the protocol's way "
    "(call latency as the paper's harness times it): the stage is off unless a worker sets KGB_PROTOCOL_TIMING=on"
)
PROTOCOL_UNKNOWN_NONE = "unknown: no passed operator with a meaningful timing"
PROTOCOL_UNKNOWN_JUDGED = "no protocol speedup: its judge did not time every case the protocol's way"


def protocol_unknown_title(summary: Any) -> str:
    """Why ``summary`` (a board Summary, or None) has no protocol speedup."""
    if summary is not None and summary.speedup_covered:
        return PROTOCOL_UNKNOWN_OLD
    return PROTOCOL_UNKNOWN_NONE


# What a launch-bound share means, and why one is unknown (the about page's #launch-bound says more).
LAUNCH_BOUND_MEANING = (
    "share of the protocol-timed cases with a side under one L2 flush: their figure is the race between the "
    "host's launch path and the flush, which moves between machines"
)
LAUNCH_BOUND_UNKNOWN = (
    "launch-bound share unknown: no L2 flush to race (cuBLAS's back-to-back loop), or its judge did not mark "
    "launch-bound cases"
)
LAUNCH_BOUND_UNMARKED_RUN = "launch-bound share unknown: its judge did not mark launch-bound cases"
LAUNCH_BOUND_CUBLAS = "no launch-bound share: cuBLAS's loop calls back to back with no L2 flush to race"


def launch_bound_share_note(summary: Any) -> str:
    """The small line under a summary's protocol speedup: the mean launch-bound share over its operators that
    have one (each operator weighs the same, as in the geomean), or "— launch-bound" saying why it is unknown."""
    return launch_bound_line(
        summary.protocol_launch_bound_share, summary.protocol_launch_bound_covered, summary.protocol_speedup_covered
    )


def launch_bound_line(share: float | None, covered: int, of: int) -> str:
    """``share``: the mean over ``covered`` of the ``of`` operators a protocol figure averages over."""
    if share is None:
        return f'<small class="launch-bound unknown" title="{html_escape(LAUNCH_BOUND_UNKNOWN)}">— launch-bound</small>'
    its = f"its {covered} operator" + ("s" if covered != 1 else "")
    over = f"mean over {covered} of the {of} operators" if covered < of else f"mean over {its}"
    return f'<small class="launch-bound" title="{over}: {LAUNCH_BOUND_MEANING}">{percent(share)} launch-bound</small>'


@register.simple_tag
def matched_launch_bound_note(row: Any) -> SafeString:
    """Under a matched protocol figure (selectors.MatchedRow): how much of it is the launch race, over the
    common operators it averages."""
    if row.figure.speedup_geomean is None:
        return mark_safe("")
    return mark_safe("<br>" + launch_bound_line(row.launch_bound_share, row.launch_bound_covered, row.figure.covered))


@register.simple_tag
def protocol_speedup_cell(summary: Any) -> SafeString:
    """A summary's protocol speedup (the paper's) with the passed operators it covers and, below it, how much of
    it is the launch race; or an em dash saying why there is none."""
    if summary is not None and summary.protocol_speedup_geomean:
        covered = summary.protocol_speedup_covered
        note = ""
        if covered < summary.speedup_covered:
            note = (
                f' title="over {covered} of the {summary.speedup_covered} passed operators with a device-time '
                "speedup: the others' judge did not time every case the protocol's way\""
            )
        figure = f"<span{note}>{num(summary.protocol_speedup_geomean, 2)}×<small> ({covered})</small></span>"
        return mark_safe(f"{figure}<br>{launch_bound_share_note(summary)}")
    return mark_safe(f'<span class="unknown" title="{html_escape(protocol_unknown_title(summary))}">—</span>')


@register.simple_tag
def run_launch_bound_share(run: Any, source: str = "") -> SafeString:
    """A run's launch-bound share, the cell beside its protocol speedup, or an em dash saying why it is unknown
    (``source``: its operator's; cuBLAS's loop has no flush to race)."""
    if run.protocol_speedup and run.protocol_launch_bound_share is not None:
        return mark_safe(
            f'<span title="{html_escape(LAUNCH_BOUND_MEANING)}">{percent(run.protocol_launch_bound_share)}</span>'
        )
    if not run.protocol_speedup:
        why = "unknown: no protocol speedup"
    else:
        why = LAUNCH_BOUND_CUBLAS if source == "cublas" else LAUNCH_BOUND_UNMARKED_RUN
    return mark_safe(f'<span class="unknown" title="{html_escape(why)}">—</span>')


@register.simple_tag
def outcome_protocol_speedup(outcome: Any) -> SafeString:
    """One operator outcome's protocol speedup, or an em dash saying why there is none."""
    if outcome is not None and outcome.protocol_speedup:
        return mark_safe(f"{num(outcome.protocol_speedup, 2)}×")
    if outcome is not None and outcome.solved and outcome.speedup:
        why = PROTOCOL_UNKNOWN_JUDGED
    else:
        why = "unknown: not passed, or no meaningful timing"
    return mark_safe(f'<span class="unknown" title="{html_escape(why)}">—</span>')


@register.simple_tag
def run_protocol_speedup(run: Any) -> SafeString:
    """A run's protocol speedup with its 95% interval, or an em dash saying why there is none."""
    if run.protocol_speedup:
        text = f"{num(run.protocol_speedup, 2)}×"
        if run.protocol_speedup_ci_low is not None and run.protocol_speedup_ci_high is not None:
            text += f" <small>({num(run.protocol_speedup_ci_low, 2)}–{num(run.protocol_speedup_ci_high, 2)})</small>"
        return mark_safe(text)
    why = PROTOCOL_UNKNOWN_JUDGED if run.speedup else "unknown: no meaningful timing"
    return mark_safe(f'<span class="unknown" title="{html_escape(why)}">—</span>')


@register.simple_tag
def chip_cells(row: Any, chips: list) -> SafeString:
    """A multi-chip row's cells: per chip, accuracy (solved of total), the protocol speedup and the device-time
    speedup (each with the operators it covers)."""
    parts = []
    for chip in chips:
        summary = row.per_chip.get(chip.pk)
        if summary is not None:
            accuracy = f"{num(summary.accuracy_pct, 1)}<small> ({summary.solved}/{summary.operators_total})</small>"
        else:
            accuracy = '<span title="no kernels judged here">–</span>'
        if summary is not None and summary.speedup_geomean:
            speedup = f"{num(summary.speedup_geomean, 2)}×<small> ({summary.speedup_covered})</small>"
        else:
            speedup = "–"
        protocol = protocol_speedup_cell(summary)
        parts.append(
            f'\n        <td class="num">{accuracy}</td>\n        <td class="num protocol">{protocol}</td>'
            f'\n        <td class="num">{speedup}</td>\n      '
        )
    return mark_safe("".join(parts))


@register.simple_tag
def view_cells(row: Any, views: list[str]) -> SafeString:
    """A multi-source row's cells: per view (overall, a source), accuracy (solved of total), the protocol speedup
    and the device-time speedup."""
    parts = []
    for view in views:
        summary = row.summaries.get(view)
        if summary is not None:
            accuracy = f"{num(summary.accuracy_pct, 1)}<small> ({summary.solved}/{summary.operators_total})</small>"
        else:
            accuracy = "–"
        if summary is not None and summary.speedup_geomean:
            speedup = f"{num(summary.speedup_geomean, 2)}×<small> ({summary.speedup_covered})</small>"
        else:
            speedup = '<span title="unknown: no passed operator with a meaningful timing">–</span>'
        protocol = protocol_speedup_cell(summary)
        parts.append(
            f'\n        <td class="num">{accuracy}</td>\n        <td class="num protocol">{protocol}</td>'
            f'\n        <td class="num">{speedup}</td>\n      '
        )
    return mark_safe("".join(parts))

"""Downloads: leaderboards and runs as CSV or JSON, and every public kernel with its runs as one JSONL dataset.

Why JSONL and not Parquet: the dataset is a few thousand kernels of source text with small nested run
records; JSONL streams row by row from the database without holding it in memory, gzips to about the same
size as Parquet for text-heavy rows, is read directly by pandas, DuckDB and Hugging Face ``datasets``, and
needs no pyarrow (~100 MB) on the server. Parquet would pay off only for wide numeric tables, which the
CSV exports already cover.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from typing import Any

import orjson
from django.db.models import Prefetch, QuerySet
from rest_framework.renderers import BaseRenderer, JSONRenderer

from evaluation.models import Run, run_is_stale
from leaderboard.metrics import FAST_P_THRESHOLDS
from leaderboard.models import Kernel, Visibility
from leaderboard.selectors import LeaderboardRow

SUMMARY_COLUMNS: tuple[str, ...] = (
    "operators_total",
    "solved",
    "accuracy_pct",
    # the paper's (PROTOCOL 6): every timed case, call latency as the paper's harness times it
    "protocol_speedup_geomean",
    "protocol_speedup_covered",
    # how much of it is the launch race: mean share (0-1) of launch-bound cases over its operators with one
    "protocol_launch_bound_share",
    "speedup_geomean",  # device-time: large cases, launch cost hidden
    "speedup_covered",
    "tokens_total",
    "tokens_per_success",
    "solve_hours",
    "stale",
)
RUN_COLUMNS: tuple[str, ...] = (
    "id",
    "kernel",
    "submission",
    "method",
    "operator_id",
    "chip",
    "status",
    "cases_total",
    "cases_passed",
    "protocol_speedup",  # the paper's (PROTOCOL 6); null where its judge did not time that way
    "protocol_speedup_ci_low",
    "protocol_speedup_ci_high",
    "protocol_launch_bound_share",  # share (0-1) of its protocol-timed cases that are launch-bound; null unknown
    "speedup",  # device-time
    "speedup_ci_low",
    "speedup_ci_high",
    "flagged",
    "operator_version",
    "judge_version",
    "stale",
    "created_at",
    "started_at",
    "finished_at",
)


class PlainJSONRenderer(JSONRenderer):
    """DRF's compact JSON, written by orjson for plain data (dicts, lists, strings, numbers, booleans, None).

    The leaderboard's ``?operators=1`` is two megabytes of numbers, and the standard library's encoder spends
    most of its time formatting floats. orjson writes the same values (a float below 1e-4 as ``0.00003``,
    not ``3e-05``). What it would write differently goes to DRF's renderer: indented output, and any type
    other than those (dates, dataclasses, lazy strings, decimals). A NaN, which DRF refuses (an error),
    orjson writes as null.
    """

    PASSTHROUGH = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: dict | None = None):
        plain = data is not None and self.compact and not self.ensure_ascii
        if not plain or self.get_indent(accepted_media_type, renderer_context or {}) is not None:
            return super().render(data, accepted_media_type, renderer_context)
        try:
            encoded = orjson.dumps(data, option=self.PASSTHROUGH)
        except orjson.JSONEncodeError:
            return super().render(data, accepted_media_type, renderer_context)
        if b"\xe2\x80" not in encoded:  # no U+2028 / U+2029 (or any U+20xx) to escape
            return encoded
        # As DRF: the line separators escaped, so the JSON is a strict JavaScript subset.
        return encoded.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")


class CSVRenderer(BaseRenderer):
    """Renders a list of flat dicts (or a page's ``results``) as CSV; anything else as a one-column table."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context: dict | None = None):
        if isinstance(data, str):  # already CSV (the leaderboard builds its own columns)
            return data
        if isinstance(data, dict) and isinstance(data.get("results"), list):
            data = data["results"]
        if isinstance(data, dict):  # an error body, e.g. {"detail": "..."}
            data = [
                {"field": key, "message": json.dumps(value) if not isinstance(value, str) else value}
                for key, value in data.items()
            ]
        rows = list(data or [])
        columns: list[str] = []
        for row in rows:
            columns.extend(key for key in row if key not in columns)
        return rows_to_csv(rows, columns)


def rows_to_csv(rows: Iterable[dict[str, Any]], columns: Iterable[str]) -> str:
    buffer = io.StringIO()
    # RFC 4180 line ends: a cell holding a lone CR is then quoted too (with "\n" alone it would not be).
    writer = csv.DictWriter(buffer, fieldnames=list(columns), extrasaction="ignore", lineterminator="\r\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: _cell(value) for key, value in row.items()})
    return buffer.getvalue()


# A spreadsheet runs a cell that starts with one of these as a formula (=HYPERLINK(...) in a method's name).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        value = json.dumps(value, sort_keys=True)
    if value is None:
        return ""
    return neutralise_formula(value) if isinstance(value, str) else value


def neutralise_formula(text: str) -> str:
    """Text a spreadsheet shows as text: a leading apostrophe before a formula's first character (OWASP's
    advice for CSV injection). Numbers are written as numbers, so "-1.5" from a float is untouched."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


# --- Leaderboards ---------------------------------------------------------------------------------------


def leaderboard_json(rows: list[LeaderboardRow], *, with_outcomes: bool) -> list[dict[str, Any]]:
    """The leaderboard rows as the API returns them, in the page's order."""
    result = []
    for rank, row in enumerate(rows, start=1):
        item = {
            "rank": rank,
            "method": {
                "id": row.method.pk,
                "label": str(row.method),
                "scaffold": row.method.scaffold,
                "model": row.method.model,
                "kind": row.method.kind,
            },
            "summaries": {view: _summary_dict(summary) for view, summary in row.summaries.items()},
        }
        if with_outcomes:
            # The outcomes' own attribute dicts, not copies: the renderer only reads them (ten thousand rows).
            item["outcomes"] = [vars(outcome) for _, outcome in sorted(row.outcomes.items())]
        result.append(item)
    return result


def _summary_dict(summary: Any) -> dict[str, Any]:
    data = {name: getattr(summary, name) for name in SUMMARY_COLUMNS}
    data["fast_p"] = dict(summary.fast_p)
    data["protocol_fast_p"] = dict(summary.protocol_fast_p)
    return data


def leaderboard_csv_rows(rows: list[dict[str, Any]], views: list[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """One CSV line per method: method columns, then ``<view>_<figure>`` for every view."""
    columns = ["rank", "method_id", "method", "scaffold", "model", "kind"]
    for view in views:
        columns += [f"{view}_{name}" for name in SUMMARY_COLUMNS]
        columns += [f"{view}_fast_{threshold:g}" for threshold in FAST_P_THRESHOLDS]
        columns += [f"{view}_protocol_fast_{threshold:g}" for threshold in FAST_P_THRESHOLDS]
    flat = []
    for row in rows:
        line = {
            "rank": row["rank"],
            "method_id": row["method"]["id"],
            "method": row["method"]["label"],
            "scaffold": row["method"]["scaffold"],
            "model": row["method"]["model"],
            "kind": row["method"]["kind"],
        }
        for view, summary in row["summaries"].items():
            for name in SUMMARY_COLUMNS:
                line[f"{view}_{name}"] = summary[name]
            for threshold, share in summary["fast_p"].items():
                line[f"{view}_fast_{threshold}"] = share
            for threshold, share in summary.get("protocol_fast_p", {}).items():
                line[f"{view}_protocol_fast_{threshold}"] = share
        flat.append(line)
    return flat, columns


# --- Runs -----------------------------------------------------------------------------------------------


def run_rows(runs: QuerySet[Run]) -> Iterator[dict[str, Any]]:
    """Flat run records (no per-case results), streamed from the database."""
    values = runs.select_related(None).values_list(
        "id",
        "kernel_id",
        "kernel__submission_id",
        "kernel__submission__method_id",
        "kernel__operator__operator_id",
        "chip__slug",
        "status",
        "cases_total",
        "cases_passed",
        "protocol_speedup",
        "protocol_speedup_ci_low",
        "protocol_speedup_ci_high",
        "protocol_launch_bound_share",
        "speedup",
        "speedup_ci_low",
        "speedup_ci_high",
        "flagged",
        "operator_version",
        "judge_version",
        "kernel__operator__version",
        "created_at",
        "started_at",
        "finished_at",
    )
    for (
        run_id,
        kernel_id,
        submission_id,
        method_id,
        operator_id,
        chip,
        status,
        cases_total,
        cases_passed,
        protocol_speedup,
        protocol_ci_low,
        protocol_ci_high,
        launch_bound_share,
        speedup,
        ci_low,
        ci_high,
        flagged,
        run_version,
        judge_version,
        current_version,
        created,
        started,
        finished,
    ) in values.iterator(chunk_size=2000):
        yield {
            "id": run_id,
            "kernel": kernel_id,
            "submission": submission_id,
            "method": method_id,
            "operator_id": operator_id,
            "chip": chip,
            "status": status,
            "cases_total": cases_total,
            "cases_passed": cases_passed,
            "protocol_speedup": protocol_speedup,
            "protocol_speedup_ci_low": protocol_ci_low,
            "protocol_speedup_ci_high": protocol_ci_high,
            "protocol_launch_bound_share": launch_bound_share,
            "speedup": speedup,
            "speedup_ci_low": ci_low,
            "speedup_ci_high": ci_high,
            "flagged": flagged,
            "operator_version": run_version,
            "judge_version": judge_version,
            "stale": run_is_stale(
                operator_version=run_version, current_operator_version=current_version, judge_version=judge_version
            ),
            "created_at": _iso(created),
            "started_at": _iso(started),
            "finished_at": _iso(finished),
        }


def csv_lines(rows: Iterable[dict[str, Any]], columns: tuple[str, ...]) -> Iterator[str]:
    """CSV text in pieces, for a streaming response."""
    yield rows_to_csv([], columns)
    for row in rows:
        yield rows_to_csv([row], columns).split("\r\n", 1)[1]


def json_array_lines(rows: Iterable[dict[str, Any]]) -> Iterator[str]:
    """A JSON array in pieces, for a streaming response."""
    yield "["
    for index, row in enumerate(rows):
        yield ("," if index else "") + "\n" + json.dumps(row)
    yield "\n]\n"


# --- The public dataset ----------------------------------------------------------------------------------


def public_kernels() -> QuerySet[Kernel]:
    """Kernels anyone may download: public submissions of public methods."""
    return Kernel.objects.filter(submission__visibility=Visibility.PUBLIC, submission__method__public=True)


def dataset_lines() -> Iterator[str]:
    """One JSON object per public kernel: operator, method, code, cost, and every run's verdict."""
    runs = Prefetch("runs", queryset=Run.objects.select_related("chip").order_by("pk"))
    kernels = (
        public_kernels()
        .select_related("operator", "submission__method", "submission__target_chip")
        .prefetch_related(runs)
        .order_by("pk")
    )
    for kernel in kernels.iterator(chunk_size=200):  # prefetches per chunk: a few queries per 200 kernels
        runs_data = [
            {
                "id": run.pk,
                "chip": run.chip.slug,
                "status": run.status,
                "reason": run.reason[:2000],
                "cases_total": run.cases_total,
                "cases_passed": run.cases_passed,
                "protocol_speedup": run.protocol_speedup,
                "protocol_launch_bound_share": run.protocol_launch_bound_share,
                "speedup": run.speedup,
                "flagged": run.flagged,
                "operator_version": run.operator_version,
                "finished_at": _iso(run.finished_at),
            }
            for run in kernel.runs.all()
        ]
        method = kernel.submission.method
        target = kernel.submission.target_chip
        yield (
            json.dumps(
                {
                    "kernel_id": kernel.pk,
                    "submission_id": kernel.submission_id,
                    "operator_id": kernel.operator.operator_id,
                    "source": kernel.operator.source,
                    "method": {
                        "id": method.pk,
                        "scaffold": method.scaffold,
                        "model": method.model,
                        "kind": method.kind,
                    },
                    "target_chip": target.slug if target else None,
                    "round": kernel.round,
                    "filename": kernel.filename,
                    "sha256": kernel.sha256,
                    "source_code": kernel.source_code,
                    "total_tokens": kernel.total_tokens,
                    "solve_seconds": kernel.solve_seconds,
                    "created_at": _iso(kernel.created_at),
                    "runs": runs_data,
                }
            )
            + "\n"
        )


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None

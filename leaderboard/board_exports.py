"""CSV and JSON of exactly the board on screen: the same rows, order, ranks and rounding as the page.

Each builder returns (columns, rows of plain values). Unknown figures are None: an empty CSV cell and a
JSON null, never 0. CSV goes through the API's writer, so both downloads share its cell rules.

Two speedups, never mixed (PROTOCOL 6): ``*_protocol_speedup`` is the protocol's (the paper's: every timed
case, call latency as the paper's harness times it), ``*_speedup`` the device-time one (large cases, launch
cost hidden); each with the count of passed operators it averages over. Beside the protocol's,
``*_protocol_launch_bound_share``: how much of it is the launch race (0-1, rounded as the page's percent).
``SPEEDUP_COLUMNS`` says so in every JSON download.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpResponse

from leaderboard.api.exports import rows_to_csv
from leaderboard.selectors import DEVICE_FIGURE, PROTOCOL_FIGURE, SPEEDUP_FIGURES

SPEEDUP_COLUMNS = {
    "protocol_speedup": "the protocol's (the paper's) speedup: every timed case, call latency as the paper's "
    "harness times it; geometric mean over passed operators with one",
    "protocol_launch_bound_share": "the share (0-1) of protocol-timed cases that are launch-bound (a side under "
    "one L2 flush: the figure is the race between the host's launch path and the flush), mean over the operators "
    "of the protocol speedup that have one; null where none has (cuBLAS's loop has no flush; older judges no marks)",
    "speedup": "the device-time speedup: large cases, launch cost hidden; geometric mean over passed operators",
}


def _launch_bound_share(summary: Any) -> float | None:
    """A summary's launch-bound share as the page shows it (a whole percent), None where unknown or where the
    protocol speedup itself is."""
    if summary is None or summary.protocol_speedup_geomean is None:
        return None
    return _round(summary.protocol_launch_bound_share, 2)


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _method_columns(row: Any, rank: Any) -> dict[str, Any]:
    method = row.method
    # The rank and whether it is shared, apart: "=1" would read as a formula in a spreadsheet.
    return {
        "rank": rank.position if rank else None,
        "rank_tied": rank.tied if rank else None,
        "method_id": method.pk,
        "method": str(method),
        "kind": method.get_kind_display(),
    }


def multi_source_table(rows: list, views: list[str]) -> tuple[list[str], list[dict]]:
    columns = ["rank", "rank_tied", "method_id", "method", "kind"]
    for view in views:
        columns += [
            f"{view}_accuracy_pct",
            f"{view}_solved",
            f"{view}_total",
            f"{view}_protocol_speedup",
            f"{view}_protocol_speedup_covered",
            f"{view}_protocol_launch_bound_share",
            f"{view}_speedup",
            f"{view}_speedup_covered",
        ]
    columns += ["fast_0.8", "fast_1", "fast_1.5", "protocol_fast_0.8", "protocol_fast_1", "protocol_fast_1.5"]
    columns += ["tokens_per_pass", "stale"]
    table = []
    for row in rows:
        line = _method_columns(row, row.rank)
        for view in views:
            summary = row.summaries.get(view)
            line[f"{view}_accuracy_pct"] = _round(summary.accuracy_pct, 1) if summary else None
            line[f"{view}_solved"] = summary.solved if summary else None
            line[f"{view}_total"] = summary.operators_total if summary else None
            protocol_known = summary is not None and summary.protocol_speedup_geomean is not None
            line[f"{view}_protocol_speedup"] = _round(summary.protocol_speedup_geomean, 2) if protocol_known else None
            line[f"{view}_protocol_speedup_covered"] = summary.protocol_speedup_covered if protocol_known else None
            line[f"{view}_protocol_launch_bound_share"] = _launch_bound_share(summary)
            known = summary is not None and summary.speedup_geomean is not None
            line[f"{view}_speedup"] = _round(summary.speedup_geomean, 2) if known else None
            line[f"{view}_speedup_covered"] = summary.speedup_covered if known else None
        overall = row.summaries["overall"]
        for threshold in ("0.8", "1", "1.5"):
            share = overall.fast_p.get(threshold) if row.speed_known else None
            line[f"fast_{threshold}"] = None if share is None else round(100 * share)
            # By the protocol's speedup: unknown where no operator of the row was timed the protocol's way.
            protocol_share = overall.protocol_fast_p.get(threshold) if overall.protocol_speedup_covered else None
            line[f"protocol_fast_{threshold}"] = None if protocol_share is None else round(100 * protocol_share)
        line["tokens_per_pass"] = _round(overall.tokens_per_success, 0)
        line["stale"] = overall.stale
        table.append(line)
    return columns, table


def multi_chip_table(rows: list, chips: list) -> tuple[list[str], list[dict]]:
    columns = ["rank", "rank_tied", "method_id", "method", "kind", "score_accuracy_pct"]
    for chip in chips:
        columns += [
            f"{chip.slug}_accuracy_pct",
            f"{chip.slug}_solved",
            f"{chip.slug}_total",
            f"{chip.slug}_protocol_speedup",
            f"{chip.slug}_protocol_launch_bound_share",
            f"{chip.slug}_speedup",
        ]
    table = []
    for row in rows:
        line = _method_columns(row, row.rank)
        line["score_accuracy_pct"] = _round(row.score, 1)
        for chip in chips:
            summary = row.per_chip.get(chip.pk)
            line[f"{chip.slug}_accuracy_pct"] = _round(summary.accuracy_pct, 1) if summary else None
            line[f"{chip.slug}_solved"] = summary.solved if summary else None
            line[f"{chip.slug}_total"] = summary.operators_total if summary else None
            line[f"{chip.slug}_protocol_speedup"] = _round(summary.protocol_speedup_geomean, 2) if summary else None
            line[f"{chip.slug}_protocol_launch_bound_share"] = _launch_bound_share(summary)
            line[f"{chip.slug}_speedup"] = _round(summary.speedup_geomean, 2) if summary else None
        table.append(line)
    return columns, table


def cost_table(rows: list) -> tuple[list[str], list[dict]]:
    columns = [
        "rank",
        "rank_tied",
        "method_id",
        "method",
        "kind",
        "accuracy_pct",
        "solved",
        "total",
        "tokens_total",
        "tokens_per_pass",
        "solve_hours",
    ]
    table = []
    for row in rows:
        summary = row.summaries["overall"]
        table.append(
            {
                **_method_columns(row, row.rank),
                "accuracy_pct": _round(summary.accuracy_pct, 1),
                "solved": summary.solved,
                "total": summary.operators_total,
                "tokens_total": summary.tokens_total or None,
                "tokens_per_pass": _round(summary.tokens_per_success, 0),
                "solve_hours": _round(summary.solve_hours, 2) if summary.solve_hours else None,
            }
        )
    return columns, table


# What the matched board's ``?figure=`` reads, as its downloads say it (meta ``figure`` and ``figure_meaning``).
MATCHED_FIGURES = {
    DEVICE_FIGURE: "the device-time speedup (large cases, launch cost hidden), over the operators every method shown "
    "passed cleanly with a known one",
    PROTOCOL_FIGURE: "the protocol's (the paper's) speedup (PROTOCOL 6: every timed case, call latency as the paper's "
    "harness times it), over the operators every method shown passed cleanly with a known one",
}


def matched_table(rows: list, figure: str) -> tuple[list[str], list[dict]]:
    """The matched board by the ``figure`` speedup ("device" or "protocol"): its speedup columns are named as
    every download names them (``*_protocol_speedup`` the protocol's, ``*_speedup`` the device-time one)."""
    speedup = SPEEDUP_FIGURES[figure]  # the figure's column name, as every download names it
    shares = figure == PROTOCOL_FIGURE  # beside the protocol's figures, how much of each is the launch race
    columns = [
        "method_id",
        "method",
        "kind",
        f"matched_{speedup}",
        "covered",
        *(["matched_protocol_launch_bound_share"] if shares else []),
        "ci95_low",
        "ci95_high",
        f"own_{speedup}",
        "own_covered",
        *(["own_protocol_launch_bound_share"] if shares else []),
        "accuracy_pct",
    ]
    table = []
    for row in rows:
        interval = row.figure.ci95
        table.append(
            {
                "matched_protocol_launch_bound_share": (
                    _round(row.launch_bound_share, 2) if row.figure.speedup_geomean is not None else None
                ),
                "own_protocol_launch_bound_share": _launch_bound_share(row.summary),
                "method_id": row.method.pk,
                "method": str(row.method),
                "kind": row.method.get_kind_display(),
                f"matched_{speedup}": _round(row.figure.speedup_geomean, 2),
                "covered": row.figure.covered,
                "ci95_low": _round(interval[0], 2) if interval else None,
                "ci95_high": _round(interval[1], 2) if interval else None,
                f"own_{speedup}": _round(row.own_speedup, 2),
                "own_covered": row.own_covered if row.own_speedup is not None else None,
                "accuracy_pct": _round(row.summary.accuracy_pct, 1),
            }
        )
    return columns, table


def download(
    request_format: str, *, name: str, columns: list[str], rows: list[dict], meta: dict[str, Any]
) -> HttpResponse:
    """The table as an attachment: CSV (one header line) or JSON ({"view": meta, "columns", "rows"})."""
    if request_format == "csv":
        response = HttpResponse(rows_to_csv(rows, columns), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
        return response
    if any(column.endswith("_protocol_speedup") for column in columns):
        meta = {**meta, "speedup_columns": SPEEDUP_COLUMNS}
    body = json.dumps(
        {"view": meta, "columns": columns, "rows": [{c: row.get(c) for c in columns} for row in rows]}, indent=1
    )
    response = HttpResponse(body, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{name}.json"'
    return response

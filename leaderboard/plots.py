"""Plotly figure specs (plain dicts) built from the boards' rows; pages draw them with the vendored plotly.js.

Figures are data, not HTML: templates embed them with ``json_script`` (escaped), so a method name a user
chose can never become markup.
"""

from __future__ import annotations

from typing import Any

from evaluation.models import Chip
from leaderboard.metrics import pareto_front
from leaderboard.models import Method, OperatorSet, RooflinePoint
from leaderboard.selectors import DEVICE_FIGURE, PROTOCOL_FIGURE, ChipRow, LeaderboardRow

SOURCE_LABELS = {"overall": "Overall", "aten": "ATen", "vllm": "vLLM", "cublas": "cuBLAS"}
# An explicit height: a responsive plot in a container without one collapsed to a sliver (seen in screenshots).
LAYOUT_BASE: dict[str, Any] = {
    "margin": {"l": 70, "r": 30, "t": 60, "b": 120},
    "hovermode": "closest",
    "font": {"size": 13},
    "height": 460,
}


def _layout(title: str, **extra: Any) -> dict[str, Any]:
    return {**LAYOUT_BASE, "title": {"text": title}, **extra}


def accuracy_by_source(rows: list[LeaderboardRow], chip: Chip) -> dict[str, Any]:
    names = [str(row.method) for row in rows]
    traces = []
    for view, label in SOURCE_LABELS.items():
        summaries = [row.summaries.get(view) for row in rows]
        if not any(summaries):
            continue
        traces.append(
            {
                "type": "bar",
                "name": label,
                "x": names,
                "y": [round(s.accuracy_pct, 2) if s else None for s in summaries],
                "customdata": [[s.solved, s.operators_total] if s else [0, 0] for s in summaries],
                "hovertemplate": f"%{{x}}<br>{label}: %{{y:.1f}}% (%{{customdata[0]}} of %{{customdata[1]}} "
                "operators)<extra></extra>",
            }
        )
    return {
        "data": traces,
        "layout": _layout(
            f"Accuracy by operator source on {chip.label}",
            barmode="group",
            yaxis={"title": {"text": "Accuracy (% of operators, clean pass)"}, "range": [0, 100]},
            xaxis={"title": {"text": "Method"}},
        ),
    }


def accuracy_vs_tokens(rows: list[LeaderboardRow], chip: Chip) -> dict[str, Any]:
    points = [(row, row.summaries["overall"]) for row in rows if row.summaries["overall"].tokens_per_success]
    xy = [(summary.tokens_per_success / 1e6, summary.accuracy_pct) for _, summary in points]
    front = pareto_front(xy)
    data: list[dict[str, Any]] = [
        {
            "type": "scatter",
            "mode": "markers",
            "name": "Methods",
            "x": [x for x, _ in xy],
            "y": [y for _, y in xy],
            "text": [str(row.method) for row, _ in points],
            "marker": {"size": 10},
            "hovertemplate": "%{text}<br>%{x:.3f} M tokens per passed operator<br>accuracy %{y:.1f}%<extra></extra>",
        }
    ]
    if front:
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "name": "Pareto front",
                "x": [xy[i][0] for i in front],
                "y": [xy[i][1] for i in front],
                "line": {"dash": "dot"},
                "hoverinfo": "skip",
            }
        )
    return {
        "data": data,
        "layout": _layout(
            f"Accuracy against tokens per success on {chip.label}",
            xaxis={"title": {"text": "Tokens per passed operator (millions, failed attempts included)"}, "type": "log"},
            yaxis={"title": {"text": "Accuracy (% of operators)"}, "range": [0, 100]},
        ),
    }


# Each speedup figure's name in titles and hover text (PROTOCOL 6: two speedups, never mixed).
SPEEDUP_LABELS = {
    DEVICE_FIGURE: "device-time speedup",
    PROTOCOL_FIGURE: "protocol speedup (PROTOCOL 6)",
}

SPEEDUP_AXIS_TITLES = {DEVICE_FIGURE: "Device-time speedup", PROTOCOL_FIGURE: "Protocol speedup"}


def _capitalised(label: str) -> str:
    return label[:1].upper() + label[1:]


def chip_heatmaps(rows: list[ChipRow], chips: list[Chip]) -> dict[str, dict[str, Any]]:
    """By element id: accuracy per method and chip, then each speedup's geomean over passed operators, the
    device-time one and the protocol's (a cell without that figure is left empty, never drawn as a number)."""
    names = [str(row.method) for row in rows]
    labels = [chip.label for chip in chips]

    def grid(pick) -> list[list[float | None]]:
        return [[pick(row.per_chip.get(chip.pk)) for chip in chips] for row in rows]

    accuracy = grid(lambda s: round(s.accuracy_pct, 1) if s else None)
    height = max(320, 60 + 28 * len(rows))
    figures = {
        "accuracy-heatmap": {
            "data": [
                {
                    "type": "heatmap",
                    "z": accuracy,
                    "x": labels,
                    "y": names,
                    "colorscale": "Viridis",
                    "zmin": 0,
                    "zmax": 100,
                    "colorbar": {"title": {"text": "%"}},
                    "hovertemplate": "%{y} on %{x}<br>accuracy %{z:.1f}%<extra></extra>",
                }
            ],
            "layout": _layout(
                "Accuracy per method and chip (kernels written for that chip)",
                height=height,
                xaxis={"title": {"text": "Chip"}},
                yaxis={"title": {"text": "Method"}, "automargin": True},
            ),
        }
    }
    for element_id, figure, geomean_of in (
        ("speedup-heatmap", DEVICE_FIGURE, lambda s: s.speedup_geomean),
        ("protocol-speedup-heatmap", PROTOCOL_FIGURE, lambda s: s.protocol_speedup_geomean),
    ):
        speedup = grid(lambda s, geomean_of=geomean_of: round(geomean_of(s), 3) if s and geomean_of(s) else None)
        label = SPEEDUP_LABELS[figure]
        known = any(value is not None for line in speedup for value in line)
        hover = f"%{{y}} on %{{x}}<br>{label} %{{z:.2f}}x (passed geomean)"
        extra: dict[str, Any] = {}
        if figure == PROTOCOL_FIGURE:
            # How much of each cell is the launch race, as the boards say it under the figure.
            extra["customdata"] = grid(_launch_bound_words)
            hover += "<br>%{customdata}"
        figures[element_id] = {
            # With no cell known (the protocol stage is off by default) the page says "no data yet", not an
            # empty frame.
            "data": [
                {
                    "type": "heatmap",
                    "z": speedup,
                    "x": labels,
                    "y": names,
                    "colorscale": "RdBu",
                    "zmid": 1.0,
                    "hoverongaps": False,
                    "colorbar": {"title": {"text": "x"}},
                    "hovertemplate": hover + "<extra></extra>",
                    **extra,
                }
            ]
            if known
            else [],
            "layout": _layout(
                f"{_capitalised(label)} per method and chip (geometric mean over passed operators)",
                height=height,
                xaxis={"title": {"text": "Chip"}},
                yaxis={"title": {"text": "Method"}, "automargin": True},
            ),
        }
    return figures


def _launch_bound_words(summary: Any) -> str:
    """A summary's launch-bound share in the hover's words ("" where there is no protocol speedup)."""
    if summary is None or not summary.protocol_speedup_geomean:
        return ""
    return _share_words(summary.protocol_launch_bound_share)


def _share_words(share: float | None) -> str:
    if share is None:
        return "launch-bound share unknown"
    return f"{100 * share:.0f}% of its timed cases launch-bound"


def speedup_distribution(
    rows: list[LeaderboardRow],
    speedups: dict[int, dict[str, float]],
    chip: Chip,
    figure: str = DEVICE_FIGURE,
    launch_bound_shares: dict[int, dict[str, float]] | None = None,
) -> dict[str, Any]:
    """A box per method of its clean passes' ``figure`` speedups (``selectors.clean_speedups`` of that figure),
    in the rows' order; a method with none has no box. ``launch_bound_shares``
    (``selectors.clean_launch_bound_shares``, for the protocol figure): each point's hover says how much of
    it is the launch race."""
    label = SPEEDUP_LABELS[figure]
    traces = []
    for row in rows:
        passed = [(operator_id, speedup) for operator_id, speedup in speedups.get(row.method.pk, {}).items() if speedup]
        if passed:
            hover = f"%{{text}}: {label} %{{y:.2f}}x"
            extra: dict[str, Any] = {}
            if launch_bound_shares is not None:
                shares = launch_bound_shares.get(row.method.pk, {})
                extra["customdata"] = [_share_words(shares.get(operator_id)) for operator_id, _ in passed]
                hover += "<br>%{customdata}"
            traces.append(
                {
                    "type": "box",
                    "name": str(row.method),
                    "y": [speedup for _, speedup in passed],
                    "boxpoints": "outliers",
                    "text": [operator_id for operator_id, _ in passed],
                    "hovertemplate": hover + "<extra>%{fullData.name}</extra>",
                    **extra,
                }
            )
    return {
        "data": traces,
        "layout": _layout(
            f"Per-operator {label} of passed operators on {chip.label}",
            showlegend=False,
            # The title names the figure in full; a longer axis title is cut off at the figure's height.
            yaxis={"title": {"text": f"{SPEEDUP_AXIS_TITLES[figure]} (x, log scale)"}, "type": "log"},
            xaxis={"title": {"text": "Method"}},
        ),
    }


def roofline_fraction(*, chip: Chip, operator_set: OperatorSet, limit: int = 1500) -> dict[str, Any]:
    """The latest ``limit`` passed public runs' speedups against the share of the roofline each reached (floor /
    measured time), of kernels written for the chip or for none; their fractions kept as ``RooflinePoint``."""
    points = list(
        RooflinePoint.objects.filter(chip=chip, operator__in=operator_set.operators.all())
        .order_by("-run_id")
        .values_list("speedup", "fraction", "operator_id", "method_id")[:limit]
    )
    operators = dict(operator_set.operators.values_list("pk", "operator_id"))
    methods = Method.objects.in_bulk({method_id for _, _, _, method_id in points})
    by_method: dict[str, tuple[list, list, list]] = {}
    for speedup, fraction, operator_pk, method_id in points:
        if fraction is None:
            continue
        xs, ys, texts = by_method.setdefault(str(methods[method_id]), ([], [], []))
        xs.append(fraction)
        ys.append(speedup)
        texts.append(operators[operator_pk])
    data = [
        {
            "type": "scatter",
            "mode": "markers",
            "name": name,
            "x": xs,
            "y": ys,
            "text": texts,
            "hovertemplate": "%{text}<br>roofline fraction %{x:.2f}<br>speedup %{y:.2f}x<extra>%{fullData.name}"
            "</extra>",
        }
        for name, (xs, ys, texts) in sorted(by_method.items())
    ]
    return {
        "data": data,
        "layout": _layout(
            f"Device-time speedup against roofline fraction on {chip.label}",
            xaxis={"title": {"text": "Roofline fraction (floor time / measured time; 1 = at the hardware limit)"}},
            yaxis={"title": {"text": "Speedup over the reference (x, log scale)"}, "type": "log"},
        ),
    }

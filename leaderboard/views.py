"""Pages: parse, authorise, call one selector or read, render. Uploads and accounts are in ``upload_views``."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, QueryDict, StreamingHttpResponse
from django.shortcuts import get_object_or_404, render

from evaluation.judge.version import JUDGE_VERSION
from evaluation.models import Chip, Run
from leaderboard import access, board_exports, plots, reads, run_report, selectors
from leaderboard.boards import BoardQuery, board_query, pick, reference_chip
from leaderboard.models import Operator, OperatorSet, Visibility
from leaderboard.progress import submission_progress
from leaderboard.ranking import multi_chip_order, rank_rows
from leaderboard.templatetags.board import highlight_python

logger = logging.getLogger(__name__)

DOWNLOAD_FORMATS = ("csv", "json")
# The matched board's downloads name their speedup figure: kgb-matched-<this>-<set>-<chip>.csv
MATCHED_FILE_QUALIFIERS = {selectors.DEVICE_FIGURE: "device-time", selectors.PROTOCOL_FIGURE: "protocol"}


def _download_format(request: HttpRequest) -> str | None:
    requested = request.GET.get("format", "")
    return requested if requested in DOWNLOAD_FORMATS else None


def _rank_single_chip(rows: list, chip: Chip) -> None:
    """Ranks by overall accuracy (ties where intervals overlap), and whether speed figures mean anything."""
    for row, rank in zip(
        rows,
        rank_rows(rows, lambda r: (r.summaries["overall"].solved, r.summaries["overall"].operators_total)),
        strict=True,
    ):
        row.rank = rank
        row.speed_known = chip.timings_meaningful


def _view_meta(query: BoardQuery, board: str) -> dict:
    return {
        "board": board,
        "chip": query.chip.slug if query.chip else None,
        "set": query.operator_set.slug if query.operator_set else None,
        "kinds": list(query.method_filter.kinds),
        "model": query.method_filter.model,
        "sort": query.sort,
        "chips": [chip.slug for chip in query.picked_chips],
        "rank_rule": "1 + methods whose 95% Wilson interval of accuracy lies wholly above; '=' marks ties",
    }


def _download_name(board: str, query: BoardQuery, *, qualifier: str = "") -> str:
    parts = [
        "kgb",
        board,
        *([qualifier] if qualifier else []),
        query.operator_set.slug if query.operator_set else "none",
    ]
    if board in ("ms", "cost", "matched") and query.chip:
        parts.append(query.chip.slug)
    return "-".join(parts)


def _add_parameter(query_string: str, name: str, value: str) -> str:
    params = QueryDict(query_string, mutable=True)
    params[name] = value
    return params.urlencode()


def leaderboard_index(request: HttpRequest, set_slug: str | None = None) -> HttpResponse:
    """The multi-source board (the paper's MS table): accuracy and speedup per source on one chip."""
    fixed = get_object_or_404(OperatorSet, slug=set_slug, public=True) if set_slug else None
    query = board_query(request, fixed_set=fixed)
    rows = (
        selectors.leaderboard_rows(
            chip=query.chip, operator_set=query.operator_set, method_filter=query.method_filter, sort=query.sort
        )
        if query.chip and query.operator_set
        else []
    )
    views = [view for view in selectors.SOURCE_VIEWS if rows and view in rows[0].summaries] or ["overall"]
    if query.chip:
        _rank_single_chip(rows, query.chip)
    requested = _download_format(request)
    if requested:
        columns, table = board_exports.multi_source_table(rows, views)
        return board_exports.download(
            requested, name=_download_name("ms", query), columns=columns, rows=table, meta=_view_meta(query, "ms")
        )
    paper_views = views if rows else list(selectors.SOURCE_VIEWS)
    paper = selectors.paper_results(table="MS") if query.show_paper else {}
    return render(
        request,
        "leaderboard/index.html",
        {
            **query.context(fixed_set=bool(fixed)),
            "rows": rows,
            "views": views,
            "board": "ms",
            "paper_views": paper_views,
            "paper_rows": _paper_rows(paper, paper_views),
            "fixed_set": fixed,
            "first_screen": not fixed,
            "figures": {"accuracy-by-source": plots.accuracy_by_source(rows, query.chip)} if rows else {},
        },
    )


def _paper_rows(layer: dict, views: list[str]) -> list[dict]:
    return [
        {
            "method": method,
            "model": model,
            "cells": [
                figures.get((view, next((p for v, p in figures if v == view), "")), (None, None)) for view in views
            ],
        }
        for (method, model), figures in sorted(layer.items())
    ]


def multi_chip_board(request: HttpRequest) -> HttpResponse:
    """The multi-chip board (the paper's MC table): accuracy and speedup on every chip, ranked by the mean."""
    query = board_query(request, default_set="kgb-mc")
    reference = reference_chip(query.chips)
    rows = (
        selectors.multi_chip_rows(
            chips=query.picked_chips,
            operator_set=query.operator_set,
            method_filter=query.method_filter,
            sort=query.sort,
            reference_chip=reference,
        )
        if query.operator_set
        else []
    )
    multi_chip_order(rows, query.picked_chips, keep_order=bool(query.sort))
    requested = _download_format(request)
    if requested:
        columns, table = board_exports.multi_chip_table(rows, query.picked_chips)
        return board_exports.download(
            requested, name=_download_name("mc", query), columns=columns, rows=table, meta=_view_meta(query, "mc")
        )
    paper = selectors.paper_results(table="MC") if query.show_paper else {}
    platforms = sorted({platform for figures in paper.values() for _, platform in figures})
    return render(
        request,
        "leaderboard/multi_chip.html",
        {
            **query.context(),
            "rows": rows,
            "board": "mc",
            "reference": reference,
            "paper_platforms": platforms,
            "paper_rows": [
                {"method": m, "model": mo, "cells": [f.get(("aten", p), (None, None)) for p in platforms]}
                for (m, mo), f in sorted(paper.items())
            ],
            "figures": plots.chip_heatmaps(rows, query.picked_chips) if rows else {},
        },
    )


def cost_board(request: HttpRequest) -> HttpResponse:
    """Cost: total tokens, tokens per passed operator and solving hours, with the accuracy they bought."""
    query = board_query(request)
    sort = query.sort or "overall.tokens_per_success"
    rows = (
        selectors.leaderboard_rows(
            chip=query.chip, operator_set=query.operator_set, method_filter=query.method_filter, sort=sort
        )
        if query.chip and query.operator_set
        else []
    )
    if query.chip:
        _rank_single_chip(rows, query.chip)
    requested = _download_format(request)
    if requested:
        columns, table = board_exports.cost_table(rows)
        return board_exports.download(
            requested, name=_download_name("cost", query), columns=columns, rows=table, meta=_view_meta(query, "cost")
        )
    return render(
        request,
        "leaderboard/cost.html",
        {
            **query.context(),
            "rows": rows,
            "board": "cost",
            "paper_costs": selectors.paper_costs() if query.show_paper else [],
            "figures": {"accuracy-vs-tokens": plots.accuracy_vs_tokens(rows, query.chip)} if rows else {},
        },
    )


def matched_board(request: HttpRequest) -> HttpResponse:
    """Speedups over the operators every shown method solved, with 95% bootstrap intervals, by the device-time
    speedup or, with ``?figure=protocol``, the protocol's (each over the operators every method has it for)."""
    query = board_query(request)
    figure = selectors.speedup_figure(request.GET.get("figure"))
    common, rows = (
        selectors.matched_rows(
            chip=query.chip, operator_set=query.operator_set, method_filter=query.method_filter, figure=figure
        )
        if query.chip and query.operator_set
        else ([], [])
    )
    requested = _download_format(request)
    if requested:
        columns, table = board_exports.matched_table(rows, figure)
        return board_exports.download(
            requested,
            name=_download_name("matched", query, qualifier=MATCHED_FILE_QUALIFIERS[figure]),
            columns=columns,
            rows=table,
            meta={
                **_view_meta(query, "matched"),
                "figure": figure,
                "figure_meaning": board_exports.MATCHED_FIGURES[figure],
                "common_operators": common,
            },
        )
    context = query.context()
    # The figure is this board's own parameter: its permalink, downloads and filters keep it; the switch
    # links keep the rest of the view (chip, set, filters).
    if figure != selectors.DEVICE_FIGURE:
        context["view_qs"] = _add_parameter(context["view_qs"], "figure", figure)
    figure_links = {
        selectors.DEVICE_FIGURE: context["board_qs"],
        selectors.PROTOCOL_FIGURE: _add_parameter(context["board_qs"], "figure", selectors.PROTOCOL_FIGURE),
    }
    return render(
        request,
        "leaderboard/matched.html",
        {
            **context,
            "rows": rows,
            "common": common,
            "board": "matched",
            "speedup_figure": figure,
            "figure_links": figure_links,
        },
    )


def portability_board(request: HttpRequest) -> HttpResponse:
    """Each chip's figures against the same method's on the reference chip; a per-operator matrix per method
    whose cells link to the runs they stand for."""
    query = board_query(request, default_set="kgb-mc")
    reference = reference_chip(query.chips)
    rows = (
        selectors.multi_chip_rows(
            chips=query.picked_chips,
            operator_set=query.operator_set,
            method_filter=query.method_filter,
            reference_chip=reference,
            with_ported=True,
        )
        if query.operator_set
        else []
    )
    multi_chip_order(rows, query.picked_chips, keep_order=False)
    methods = reads.listed_methods(user=request.user).filter(public=True)
    method = _pick_method(methods, request.GET.get("method")) or (rows[0].method if rows else None)
    attempted_only = request.GET.get("attempted") == "1"
    matrix = []
    if method and query.operator_set:
        matrix = selectors.operator_pass_matrix(
            method=method, operator_set=query.operator_set, chips=query.picked_chips
        )
        links = reads.matrix_run_links(method=method, operator_set=query.operator_set, chips=query.picked_chips)
        for line in matrix:
            for cell in line["cells"]:
                cell["run_id"] = links.get((line["operator_id"], cell["chip"].pk))
        if attempted_only:
            matrix = [line for line in matrix if any(cell["state"] != "none" for cell in line["cells"])]
    context = query.context()
    method_qs = context["board_qs"] + (f"&method={method.pk}" if method else "")
    return render(
        request,
        "leaderboard/portability.html",
        {
            **context,
            "rows": rows,
            "board": "portability",
            "reference": reference,
            "method": method,
            "matrix": matrix,
            "attempted_only": attempted_only,
            "method_qs": method_qs,
        },
    )


def _pick_method(methods, pk: str | None):
    return methods.filter(pk=int(pk)).first() if pk and pk.isdigit() and len(pk) < 12 else None


def plots_page(request: HttpRequest) -> HttpResponse:
    query = board_query(request)
    figures: dict = {}
    if query.chip and query.operator_set:
        rows = selectors.leaderboard_rows(
            chip=query.chip, operator_set=query.operator_set, method_filter=query.method_filter
        )
        speedups = selectors.clean_speedups_by_figure(
            chip=query.chip,
            operator_set=query.operator_set,
            method_ids=[row.method.pk for row in rows],
            figures=tuple(selectors.SPEEDUP_FIGURES),
            with_launch_bound_shares=True,
        )
        chip_rows = selectors.multi_chip_rows(
            chips=query.picked_chips,
            operator_set=query.operator_set,
            method_filter=query.method_filter,
        )
        figures = {
            "accuracy-by-source": plots.accuracy_by_source(rows, query.chip),
            "accuracy-vs-tokens": plots.accuracy_vs_tokens(rows, query.chip),
            **plots.chip_heatmaps(chip_rows, query.picked_chips),
            "speedup-distribution": plots.speedup_distribution(
                rows, speedups[selectors.DEVICE_FIGURE], query.chip, selectors.DEVICE_FIGURE
            ),
            "protocol-speedup-distribution": plots.speedup_distribution(
                rows,
                speedups[selectors.PROTOCOL_FIGURE],
                query.chip,
                selectors.PROTOCOL_FIGURE,
                launch_bound_shares=speedups[selectors.LAUNCH_BOUND_SHARES],
            ),
            "speedup-vs-roofline": plots.roofline_fraction(chip=query.chip, operator_set=query.operator_set),
        }
    return render(request, "leaderboard/plots.html", {**query.context(), "figures": figures, "board": "plots"})


def about(request: HttpRequest) -> HttpResponse:
    """How to read the boards and how a verdict is made: the definitions every column title links to."""
    return render(request, "leaderboard/about.html", {})


# --- Catalog and methods ------------------------------------------------------------------------------


def operator_list(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "leaderboard/operator_list.html",
        {
            "operators": Operator.objects.order_by("source", "operator_id").only(
                "operator_id", "source", "description", "active", "in_mc", "version"
            )
        },
    )


def operator_detail(request: HttpRequest, operator_id: str) -> HttpResponse:
    operator = get_object_or_404(Operator, operator_id=operator_id)
    chips = list(Chip.objects.filter(active=True))
    chip = pick(chips, request.GET.get("chip"), default=None) or _chip_with_verdicts(chips, operator)
    return render(
        request,
        "leaderboard/operator_detail.html",
        {
            "operator": operator,
            "chips": chips,
            "chip": chip,
            "ranking": reads.operator_ranking(operator=operator, chip=chip) if chip else [],
            "prompt": _operator_prompt(operator, chip.slug if chip else ""),
            "public_cases": operator.public_cases[:200],
        },
    )


def _chip_with_verdicts(chips: list[Chip], operator: Operator) -> Chip | None:
    """The reference chip if the operator has public verdicts there, else the first chip that has some."""
    public_runs = Run.objects.filter(kernel__operator=operator, kernel__submission__visibility=Visibility.PUBLIC)
    reference = reference_chip(chips)
    candidates = ([reference] if reference is not None else []) + [chip for chip in chips if chip != reference]
    # One probe per chip, in that order, each stopping at its first run: not a scan of the operator's history.
    return next((chip for chip in candidates if public_runs.filter(chip=chip).exists()), reference)


def _operator_prompt(operator: Operator, chip_slug: str) -> str | None:
    """The generation prompt, once the prompt module exists (it is written alongside this page)."""
    try:
        from evaluation.catalog.prompts import operator_prompt
        from evaluation.catalog.registry import all_operators
    except ImportError:
        return None
    try:
        spec = all_operators().get(operator.operator_id)
        return operator_prompt(spec, chip_slug) if spec else None
    except Exception as exc:  # a broken record or registry must not take the operator page down
        logger.warning("prompt for %s unavailable: %s", operator.operator_id, exc)
        return None


def prompt_pack(request: HttpRequest) -> HttpResponse:
    """JSON Lines, one prompt per operator of the chosen set, streamed as it is built."""
    try:
        from evaluation.catalog.prompts import prompt_pack_lines
    except ImportError:
        return HttpResponse("Prompt packs are not available yet.", status=503, content_type="text/plain")
    operator_set = get_object_or_404(OperatorSet, slug=request.GET.get("set", "kgb-ms"), public=True)
    chip = get_object_or_404(Chip, slug=request.GET.get("chip", "nvidia-h200"))
    operator_ids = list(operator_set.operators.filter(active=True).values_list("operator_id", flat=True))

    pack = iter(prompt_pack_lines(operator_ids, chip.slug))
    try:  # build the first line before answering, so a broken catalog is a clear 503, not a cut-off download
        first = next(pack, None)
    except Exception as exc:
        logger.warning("prompt pack unavailable: %s", exc)
        return HttpResponse(f"The prompt pack is unavailable right now ({exc}).", status=503, content_type="text/plain")

    def lines() -> Iterator[str]:
        if first is not None:
            yield json.dumps(first) + "\n"
        for line in pack:
            yield json.dumps(line) + "\n"

    response = StreamingHttpResponse(lines(), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="kgb-prompts-{operator_set.slug}-{chip.slug}.jsonl"'
    return response


def method_detail(request: HttpRequest, pk: int) -> HttpResponse:
    method = get_object_or_404(reads.listed_methods(user=request.user).select_related("owner"), pk=pk)
    chips = list(Chip.objects.filter(active=True))
    sets = list(OperatorSet.objects.filter(public=True))
    operator_set = (
        pick(sets, request.GET.get("set"), default=None)
        or pick(sets, "kgb-ms", default=None)
        or (sets[0] if sets else None)
    )
    rows = (
        selectors.multi_chip_rows(
            chips=chips,
            operator_set=operator_set,
            reference_chip=reference_chip(chips),
            method_ids=[method.pk],
        )
        if operator_set
        else []
    )
    row = next((r for r in rows if r.method.pk == method.pk), None)
    submissions = list(access.method_submissions(method=method, user=request.user)[:100])
    dates = sorted(s.created_at for s in submissions)
    return render(
        request,
        "leaderboard/method_detail.html",
        {
            "method": method,
            "chips": chips,
            "row": row,
            "operator_set": operator_set,
            "sets": sets,
            "submissions": submissions,
            "first_upload": dates[0] if dates else None,
            "last_upload": dates[-1] if dates else None,
        },
    )


# --- Submissions and runs -----------------------------------------------------------------------------


def submission_detail(request: HttpRequest, pk: int) -> HttpResponse:
    submission = get_object_or_404(access.visible_submissions(user=request.user), pk=pk)
    progress = submission_progress(submission=submission)
    return render(
        request,
        "leaderboard/submission_detail.html",
        {
            "submission": submission,
            "progress": progress,
            "can_view_code": access.can_view_code(user=request.user, submission=submission),
        },
    )


def submission_status(request: HttpRequest, pk: int) -> JsonResponse:
    """What the submission page polls to update without reloading."""
    submission = get_object_or_404(access.visible_submissions(user=request.user), pk=pk)
    progress = submission_progress(submission=submission)
    return JsonResponse(
        {
            "total": progress["total"],
            "finished": progress["finished"],
            "passed": progress["passed"],
            "chips_without_worker": progress["chips_without_worker"],
            "runs": [
                {
                    "id": run.pk,
                    "operator": run.kernel.operator.operator_id,
                    "chip": run.chip.slug,
                    "status": run.status,
                    "status_label": run.get_status_display(),
                    "reason": run.reason[:300],
                    "queue": run.queue_estimate.describe() if run.queue_estimate else "",
                    "protocol_speedup": run.protocol_speedup,
                    "speedup": run.speedup,
                }
                for run in progress["runs"]
            ],
        }
    )


def _visible_run(request: HttpRequest, pk: int) -> Run:
    """The run ``pk`` if the viewer may see its submission (a private one: its owner and staff), else 404: the
    run page and its downloads answer alike, so a private run's figures are not told to others."""
    run = get_object_or_404(Run.objects.select_related("kernel__submission__method", "kernel__operator", "chip"), pk=pk)
    if not access.visible_submissions(user=request.user).filter(pk=run.kernel.submission_id).exists():
        raise Http404("No such run")
    return run


def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = _visible_run(request, pk)
    submission = run.kernel.submission
    can_view_code = access.can_view_code(user=request.user, submission=submission)
    cases = run_report.case_rows(run)
    return render(
        request,
        "leaderboard/run_detail.html",
        {
            "run": run,
            "submission": submission,
            "can_view_code": can_view_code,
            "report": run_report.run_report(run, code_visible=can_view_code),
            "cases": cases,
            "launch_bound_cases": sum(1 for case in cases if case["protocol_launch_bound"]),
            "protocol_cases": sum(1 for case in cases if case["protocol_speedup"] is not None),
            "code_html": highlight_python(run.kernel.source_code) if can_view_code else "",
            "stale": run.is_stale,
            "judge_version": JUDGE_VERSION,
        },
    )


def run_cases(request: HttpRequest, pk: int, file_format: str) -> HttpResponse:
    """Every case of a run with its protocol and device-time figures, as CSV or JSON (the run page's access)."""
    run = _visible_run(request, pk)
    return board_exports.download(
        file_format,
        name=f"kgb-run-{run.pk}-cases",
        columns=list(run_report.CASE_COLUMNS),
        rows=run_report.case_rows(run),
        meta=run_report.case_download_meta(run),
    )

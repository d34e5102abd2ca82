"""Pages: parse, authorise, call one service or selector, render."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from evaluation.models import Chip, Run
from leaderboard import plots, selectors
from leaderboard.forms import BatchUploadForm, SignUpForm, SingleKernelForm
from leaderboard.models import MethodKind, Operator, OperatorSet
from leaderboard.services import (
    KernelUpload,
    SubmissionRejected,
    decode_kernel_file,
    method_get_or_create,
    submission_create,
)
from leaderboard.templatetags.board import highlight_python
from leaderboard.uploads import UploadProblems, parse_upload

logger = logging.getLogger(__name__)


@dataclass
class BoardQuery:
    """What every board page reads from its query string, so each view can be linked exactly."""

    chips: list[Chip]
    sets: list[OperatorSet]
    chip: Chip | None
    operator_set: OperatorSet | None
    method_filter: selectors.MethodFilter
    sort: str
    show_paper: bool
    picked_chips: list[Chip]

    def context(self) -> dict:
        return {
            "chips": self.chips, "sets": self.sets, "chip": self.chip, "operator_set": self.operator_set,
            "kinds": MethodKind.choices, "picked_kinds": self.method_filter.kinds, "model": self.method_filter.model,
            "sort": self.sort, "show_paper": self.show_paper, "picked_chips": self.picked_chips,
            "curated_sets": [s for s in self.sets if not s.builtin],
        }


def board_query(request: HttpRequest, *, default_set: str = "kgb-ms", fixed_set: OperatorSet | None = None
                ) -> BoardQuery:
    chips = list(Chip.objects.filter(active=True))
    sets = list(OperatorSet.objects.filter(public=True))
    chip = _pick(chips, request.GET.get("chip"), default=_default_chip(chips))
    operator_set = fixed_set or _pick(sets, request.GET.get("set"),
                                      default=_pick(sets, default_set, default=sets[0] if sets else None))
    picked_slugs = set(request.GET.getlist("chips"))
    picked_chips = [c for c in chips if c.slug in picked_slugs] or chips
    kinds = tuple(kind for kind in request.GET.getlist("kind") if kind in MethodKind.values)
    return BoardQuery(
        chips=chips, sets=sets, chip=chip, operator_set=operator_set,
        method_filter=selectors.MethodFilter(kinds=kinds, model=request.GET.get("model", "").strip()[:120]),
        sort=request.GET.get("sort", "")[:64], show_paper=request.GET.get("paper") == "1",
        picked_chips=picked_chips,
    )


def _pick(items: list, slug: str | None, default):
    return next((item for item in items if item.slug == slug), default)


def _default_chip(chips: list[Chip]) -> Chip | None:
    return next((c for c in chips if c.is_reference_platform), None) or (chips[0] if chips else None)


def leaderboard_index(request: HttpRequest, set_slug: str | None = None) -> HttpResponse:
    """The multi-source board (the paper's MS table): accuracy and speedup per source on one chip."""
    fixed = get_object_or_404(OperatorSet, slug=set_slug, public=True) if set_slug else None
    query = board_query(request, fixed_set=fixed)
    rows = (selectors.leaderboard_rows(chip=query.chip, operator_set=query.operator_set,
                                       method_filter=query.method_filter, sort=query.sort)
            if query.chip and query.operator_set else [])
    views = [view for view in selectors.SOURCE_VIEWS if rows and view in rows[0].summaries] or ["overall"]
    paper = selectors.paper_results(table="MS") if query.show_paper else {}
    return render(request, "leaderboard/index.html", {
        **query.context(), "rows": rows, "views": views, "board": "ms", "paper_rows": _paper_rows(paper, views),
        "fixed_set": fixed,
        "figures": {"accuracy-by-source": plots.accuracy_by_source(rows, query.chip)} if rows else {},
    })


def _paper_rows(layer: dict, views: list[str]) -> list[dict]:
    return [{"method": method, "model": model,
             "cells": [figures.get((view, next((p for v, p in figures if v == view), "")), (None, None))
                       for view in views]}
            for (method, model), figures in sorted(layer.items())]


def multi_chip_board(request: HttpRequest) -> HttpResponse:
    """The multi-chip board (the paper's MC table): accuracy and speedup on every chip, ATen (MC) set."""
    query = board_query(request, default_set="kgb-mc")
    reference = _default_chip(query.chips)
    rows = (selectors.multi_chip_rows(chips=query.picked_chips, operator_set=query.operator_set,
                                      method_filter=query.method_filter, sort=query.sort, reference_chip=reference)
            if query.operator_set else [])
    paper = selectors.paper_results(table="MC") if query.show_paper else {}
    platforms = sorted({platform for figures in paper.values() for _, platform in figures})
    return render(request, "leaderboard/multi_chip.html", {
        **query.context(), "rows": rows, "board": "mc", "reference": reference,
        "paper_platforms": platforms,
        "paper_rows": [{"method": m, "model": mo, "cells": [f.get(("aten", p), (None, None)) for p in platforms]}
                       for (m, mo), f in sorted(paper.items())],
        "figures": dict(zip(("accuracy-heatmap", "speedup-heatmap"),
                            plots.chip_heatmaps(rows, query.picked_chips), strict=True)) if rows else {},
    })


def cost_board(request: HttpRequest) -> HttpResponse:
    """Cost: total tokens, tokens per passed operator and solving hours, with the accuracy they bought."""
    query = board_query(request)
    sort = query.sort or "overall.tokens_per_success"
    rows = (selectors.leaderboard_rows(chip=query.chip, operator_set=query.operator_set,
                                       method_filter=query.method_filter, sort=sort)
            if query.chip and query.operator_set else [])
    return render(request, "leaderboard/cost.html", {
        **query.context(), "rows": rows, "board": "cost",
        "paper_costs": selectors.paper_costs() if query.show_paper else [],
        "figures": {"accuracy-vs-tokens": plots.accuracy_vs_tokens(rows, query.chip)} if rows else {},
    })


def matched_board(request: HttpRequest) -> HttpResponse:
    """Speedups over the operators every shown method solved, with 95% bootstrap intervals."""
    query = board_query(request)
    common, rows = (selectors.matched_rows(chip=query.chip, operator_set=query.operator_set,
                                           method_filter=query.method_filter)
                    if query.chip and query.operator_set else ([], []))
    return render(request, "leaderboard/matched.html", {**query.context(), "rows": rows, "common": common,
                                                         "board": "matched"})


def portability_board(request: HttpRequest) -> HttpResponse:
    """Each chip's figures against the same method's on the reference chip; a per-operator matrix per method."""
    query = board_query(request, default_set="kgb-mc")
    reference = _default_chip(query.chips)
    rows = (selectors.multi_chip_rows(chips=query.picked_chips, operator_set=query.operator_set,
                                      method_filter=query.method_filter, reference_chip=reference)
            if query.operator_set else [])
    methods = selectors.visible_methods(user=request.user).filter(public=True)
    method = _pick_method(methods, request.GET.get("method")) or (rows[0].method if rows else None)
    matrix = (selectors.operator_pass_matrix(method=method, operator_set=query.operator_set,
                                             chips=query.picked_chips) if method and query.operator_set else [])
    return render(request, "leaderboard/portability.html", {
        **query.context(), "rows": rows, "board": "portability", "reference": reference, "method": method,
        "matrix": matrix,
    })


def _pick_method(methods, pk: str | None):
    return methods.filter(pk=int(pk)).first() if pk and pk.isdigit() else None


def plots_page(request: HttpRequest) -> HttpResponse:
    query = board_query(request)
    figures: dict = {}
    if query.chip and query.operator_set:
        rows = selectors.leaderboard_rows(chip=query.chip, operator_set=query.operator_set,
                                          method_filter=query.method_filter)
        chip_rows = selectors.multi_chip_rows(chips=query.picked_chips, operator_set=query.operator_set,
                                              method_filter=query.method_filter)
        heatmaps = plots.chip_heatmaps(chip_rows, query.picked_chips)
        figures = {
            "accuracy-by-source": plots.accuracy_by_source(rows, query.chip),
            "accuracy-vs-tokens": plots.accuracy_vs_tokens(rows, query.chip),
            "accuracy-heatmap": heatmaps[0], "speedup-heatmap": heatmaps[1],
            "speedup-distribution": plots.speedup_distribution(rows, query.chip),
            "speedup-vs-roofline": plots.roofline_fraction(chip=query.chip, operator_set=query.operator_set),
        }
    return render(request, "leaderboard/plots.html", {**query.context(), "figures": figures, "board": "plots"})


# --- Catalog and methods ------------------------------------------------------------------------------


def operator_list(request: HttpRequest) -> HttpResponse:
    return render(request, "leaderboard/operator_list.html", {
        "operators": Operator.objects.order_by("source", "operator_id").only(
            "operator_id", "source", "description", "active", "in_mc", "version")})


def operator_detail(request: HttpRequest, operator_id: str) -> HttpResponse:
    operator = get_object_or_404(Operator, operator_id=operator_id)
    chips = list(Chip.objects.filter(active=True))
    chip = _pick(chips, request.GET.get("chip"), default=_default_chip(chips))
    return render(request, "leaderboard/operator_detail.html", {
        "operator": operator, "solvers": selectors.operator_solvers(operator=operator), "chips": chips,
        "chip": chip, "prompt": _operator_prompt(operator, chip.slug if chip else ""),
        "public_cases": operator.public_cases[:200],
    })


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
        return HttpResponse(f"The prompt pack is unavailable right now ({exc}).", status=503,
                            content_type="text/plain")

    def lines() -> Iterator[str]:
        if first is not None:
            yield json.dumps(first) + "\n"
        for line in pack:
            yield json.dumps(line) + "\n"

    response = StreamingHttpResponse(lines(), content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="kgb-prompts-{operator_set.slug}-{chip.slug}.jsonl"'
    return response


def method_detail(request: HttpRequest, pk: int) -> HttpResponse:
    method = get_object_or_404(selectors.visible_methods(user=request.user), pk=pk)
    chips = list(Chip.objects.filter(active=True))
    operator_set = OperatorSet.objects.filter(slug="kgb-ms").first() or OperatorSet.objects.first()
    rows = (selectors.multi_chip_rows(chips=chips, operator_set=operator_set, reference_chip=_default_chip(chips))
            if operator_set else [])
    row = next((r for r in rows if r.method.pk == method.pk), None)
    return render(request, "leaderboard/method_detail.html", {
        "method": method, "chips": chips, "row": row, "operator_set": operator_set,
        "submissions": selectors.method_submissions(method=method, user=request.user)[:100],
    })


# --- Uploads -----------------------------------------------------------------------------------------


@login_required
@require_http_methods(["GET", "POST"])
def submit_kernel(request: HttpRequest) -> HttpResponse:
    form = SingleKernelForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        upload_file = data["kernel_file"]
        try:
            source_code = decode_kernel_file(data=upload_file.read(), filename=upload_file.name)
            method = method_get_or_create(owner=request.user, scaffold=data["scaffold"], model=data["model"],
                                          kind=data["kind"])
            submission = submission_create(
                owner=request.user, method=method, chips=data["chips"], visibility=data["visibility"],
                notes=data["notes"], target_chip=data["target_chip"],
                uploads=[KernelUpload(operator_id=data["operator"].operator_id, source_code=source_code,
                                      filename=upload_file.name, total_tokens=data["total_tokens"],
                                      solve_seconds=data["solve_seconds"])],
            )
        except SubmissionRejected as rejected:
            for problem in rejected.problems:
                form.add_error(None, problem)
        else:
            messages.success(request, "Uploaded: runs are queued.")
            return redirect("leaderboard:submission", pk=submission.pk)
    return render(request, "leaderboard/submit.html", {"form": form})


@login_required
@require_http_methods(["GET", "POST"])
def submit_batch(request: HttpRequest) -> HttpResponse:
    """A zip or tar of ``<namespace>__<op>.py`` files, with optional token usage; all or nothing."""
    form = BatchUploadForm(request.POST or None, request.FILES or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        archive = data["archive"]
        try:
            uploads = parse_upload(data=archive.read(), filename=archive.name,
                                   usage_data=data["usage_file"].read() if data["usage_file"] else None,
                                   usage_filename=data["usage_file"].name if data["usage_file"] else "")
            method = data["method"] or method_get_or_create(
                owner=request.user, scaffold=data["scaffold"], model=data["model"], kind=data["kind"])
            submission = submission_create(owner=request.user, method=method, uploads=uploads, chips=data["chips"],
                                           visibility=data["visibility"], notes=data["notes"],
                                           target_chip=data["target_chip"])
        except (UploadProblems, SubmissionRejected) as rejected:
            for problem in rejected.problems:
                form.add_error(None, problem)
        else:
            messages.success(request, f"Uploaded {len(uploads)} kernels: runs are queued.")
            return redirect("leaderboard:submission", pk=submission.pk)
    return render(request, "leaderboard/submit_batch.html", {"form": form})


# --- Submissions and runs -----------------------------------------------------------------------------


def submission_detail(request: HttpRequest, pk: int) -> HttpResponse:
    submission = get_object_or_404(selectors.visible_submissions(user=request.user), pk=pk)
    progress = selectors.submission_progress(submission=submission)
    return render(request, "leaderboard/submission_detail.html", {
        "submission": submission, "progress": progress,
        "can_view_code": selectors.can_view_code(user=request.user, submission=submission),
    })


def submission_status(request: HttpRequest, pk: int) -> JsonResponse:
    """What the submission page polls to update without reloading."""
    submission = get_object_or_404(selectors.visible_submissions(user=request.user), pk=pk)
    progress = selectors.submission_progress(submission=submission)
    return JsonResponse({
        "total": progress["total"], "finished": progress["finished"], "passed": progress["passed"],
        "chips_without_worker": progress["chips_without_worker"],
        "runs": [{"id": run.pk, "operator": run.kernel.operator.operator_id, "chip": run.chip.slug,
                  "status": run.status, "status_label": run.get_status_display(), "reason": run.reason[:300],
                  "speedup": run.speedup} for run in progress["runs"]],
    })


def run_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(Run.objects.select_related("kernel__submission__method", "kernel__operator", "chip"),
                            pk=pk)
    submission = run.kernel.submission
    if not selectors.visible_submissions(user=request.user).filter(pk=submission.pk).exists():
        raise Http404("No such run")
    can_view_code = selectors.can_view_code(user=request.user, submission=submission)
    return render(request, "leaderboard/run_detail.html", {
        "run": run, "submission": submission, "can_view_code": can_view_code,
        "code_html": highlight_python(run.kernel.source_code) if can_view_code else "",
        "stale": run.operator_version < run.kernel.operator.version,
    })


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        return redirect("leaderboard:index")
    return render(request, "registration/signup.html", {"form": form})

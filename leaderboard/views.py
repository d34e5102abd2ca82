"""Pages: parse, authorise, call one service or selector, render."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from evaluation.models import Chip, Run
from leaderboard import selectors
from leaderboard.forms import SignUpForm, SingleKernelForm
from leaderboard.models import OperatorSet
from leaderboard.services import (
    KernelUpload,
    SubmissionRejected,
    decode_kernel_file,
    method_get_or_create,
    submission_create,
)


def leaderboard_index(request: HttpRequest) -> HttpResponse:
    chips = list(Chip.objects.filter(active=True))
    sets = list(OperatorSet.objects.filter(public=True))
    chip = _pick(chips, request.GET.get("chip"), default=_default_chip(chips))
    operator_set = _pick(sets, request.GET.get("set"), default=sets[0] if sets else None)
    rows = selectors.leaderboard_rows(chip=chip, operator_set=operator_set) if chip and operator_set else []
    views = [view for view in selectors.SOURCE_VIEWS if rows and view in rows[0].summaries] or ["overall"]
    return render(request, "leaderboard/index.html", {
        "chips": chips, "sets": sets, "chip": chip, "operator_set": operator_set, "rows": rows, "views": views,
    })


def _pick(items: list, slug: str | None, default):
    return next((item for item in items if item.slug == slug), default)


def _default_chip(chips: list[Chip]) -> Chip | None:
    return next((c for c in chips if c.is_reference_platform), None) or (chips[0] if chips else None)


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
    return render(request, "leaderboard/run_detail.html", {
        "run": run, "submission": submission,
        "can_view_code": selectors.can_view_code(user=request.user, submission=submission),
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

"""Staff pages: re-judging a set on a chip and what it changed. Everyone else is refused."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from evaluation import rejudges, services
from evaluation.judge.version import JUDGE_VERSION
from evaluation.models import RejudgeBatch
from leaderboard.forms import RejudgeForm


def staff_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Anonymous visitors are sent to log in; signed-in non-staff get the 403 page."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not request.user.is_staff:
            raise PermissionDenied("Staff only.")
        return view(request, *args, **kwargs)

    return wrapped


@staff_only
def rejudge_list(request: HttpRequest) -> HttpResponse:
    """The re-judgements asked so far, and the form that asks for one."""
    form = RejudgeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            batch = services.rejudge_set(
                operator_set=data["operator_set"],
                chip=data["chip"],
                stale_only=data["stale_only"],
                requested_by=request.user,
            )
        except services.RejudgeRefused as refused:
            form.add_error(None, str(refused))
        else:
            messages.success(request, f"{batch.runs.count()} runs queued for re-judgement.")
            return redirect("leaderboard:rejudge", pk=batch.pk)
    batches = RejudgeBatch.objects.select_related("chip", "requested_by").annotate(run_count=Count("runs"))[:100]
    return render(
        request,
        "leaderboard/rejudge_list.html",
        {"form": form, "batches": batches, "judge_version": JUDGE_VERSION},
        status=400 if form.errors else 200,
    )


@staff_only
def rejudge_detail(request: HttpRequest, pk: int) -> HttpResponse:
    batch = get_object_or_404(RejudgeBatch.objects.select_related("chip", "requested_by"), pk=pk)
    diff = rejudges.rejudge_diff(batch=batch)
    return render(
        request, "leaderboard/rejudge_detail.html", {"batch": batch, "diff": diff, "judge_version": JUDGE_VERSION}
    )

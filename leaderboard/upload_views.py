"""Upload pages and an uploader's home: the single and batch forms (both through ``intake``), "my
submissions", and sign-up that returns people to where they were going."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

from leaderboard import intake, reads
from leaderboard.forms import BatchUploadForm, SignUpForm, SingleKernelForm
from leaderboard.models import Operator
from leaderboard.services import SubmissionRejected


def _upload_context(form) -> dict:
    return {"form": form, "chip_statuses": intake.chip_statuses()}


@login_required
@require_http_methods(["GET", "POST"])
def submit_kernel(request: HttpRequest) -> HttpResponse:
    form = SingleKernelForm(request.POST or None, request.FILES or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        upload_file = data["kernel_file"]
        operator_id = (data.get("operator") or "").strip()
        uploads, problems = intake.read_files(
            data=upload_file.read(),
            filename=upload_file.name,
            operator_id=operator_id,
            total_tokens=data.get("total_tokens"),
            solve_seconds=data.get("solve_seconds"),
        )
        if not uploads and not problems:
            problems = [f"{upload_file.name}: no kernel in the file"]
        problems = [
            f"{upload_file.name}: choose the operator, or name the file <namespace>__<op>.py (e.g. "
            "aten__cos.py) so it names its operator"
            if ": not named <namespace>__<op>.py" in problem
            else problem
            for problem in problems
        ]
        try:
            submission = intake.submission_intake(
                owner=request.user, uploads=uploads, read_problems=problems, options=form.intake_options()
            )
        except SubmissionRejected as rejected:
            for problem in rejected.problems:
                form.add_error(None, problem)
        else:
            messages.success(request, "Uploaded: runs are queued.")
            return redirect("leaderboard:submission", pk=submission.pk)
    return render(
        request,
        "leaderboard/submit.html",
        {
            **_upload_context(form),
            "operator_ids": Operator.objects.filter(active=True)
            .order_by("operator_id")
            .values_list("operator_id", flat=True),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def submit_batch(request: HttpRequest) -> HttpResponse:
    """A zip or tar of ``<namespace>__<op>.py`` files, with optional token usage; all or nothing."""
    form = BatchUploadForm(request.POST or None, request.FILES or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        archive, usage = data["archive"], data["usage_file"]
        uploads, problems = intake.read_files(
            data=archive.read(),
            filename=archive.name,
            usage_data=usage.read() if usage else None,
            usage_filename=usage.name if usage else "",
        )
        try:
            submission = intake.submission_intake(
                owner=request.user, uploads=uploads, read_problems=problems, options=form.intake_options()
            )
        except SubmissionRejected as rejected:
            for problem in rejected.problems:
                form.add_error(None, problem)
        else:
            messages.success(request, f"Uploaded {len(uploads)} kernels: runs are queued.")
            return redirect("leaderboard:submission", pk=submission.pk)
    return render(request, "leaderboard/submit_batch.html", _upload_context(form))


@login_required
def my_submissions(request: HttpRequest) -> HttpResponse:
    """Everything the user uploaded, public and private, with how far judging got."""
    return render(
        request,
        "leaderboard/my_submissions.html",
        {
            "submissions": reads.own_submissions(user=request.user)[:500],
            "methods": request.user.methods.order_by("scaffold", "model"),
        },
    )


def _safe_next(request: HttpRequest) -> str:
    candidate = request.POST.get("next") or request.GET.get("next") or ""
    if candidate and url_has_allowed_host_and_scheme(
        candidate, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return candidate
    return ""


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    form = SignUpForm(request.POST or None)
    next_url = _safe_next(request)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect(next_url or "leaderboard:index")
    return render(request, "registration/signup.html", {"form": form, "next": next_url})

"""The one upload intake behind the single-file form, the batch form and the API.

Every path hands over files (or ready kernels) and the same options; this module reads the files with one
file-name rule, resolves the chips (default: those with a live worker), the target chip and the method, and
calls ``submission_create`` once, which runs the checks once. A method named for the first time is created
inside the submission's transaction, so a refused upload leaves no Method row behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from evaluation.models import Chip
from leaderboard import access
from leaderboard.models import Method, MethodKind, Submission, Visibility
from leaderboard.progress import chip_has_live_worker
from leaderboard.services import (
    KernelUpload,
    SubmissionRejected,
    check_kernel_uploads,
    method_get_or_create,
    submission_create,
)
from leaderboard.uploads import operator_id_from_filename, read_upload


@dataclass
class IntakeOptions:
    """Who wrote the kernels and where to judge them, as every upload path gives them."""

    method: Method | None = None  # an existing method; else the fields below name a new (or known) one
    method_id: int | None = None
    scaffold: str = ""
    model: str = ""
    kind: str = MethodKind.AGENT
    method_fields: dict = field(default_factory=dict)  # model_version, paper_url, code_url of a new method
    chip_slugs: Sequence[str] = ()  # empty: every active chip with a live worker (else every active chip)
    target_chip_slug: str | None = None
    visibility: str = Visibility.PUBLIC
    notes: str = ""


def default_chips() -> list[Chip]:
    """Chips a new upload is judged on unless told otherwise: those a worker serves now, else all active."""
    active = list(Chip.objects.filter(active=True).order_by("slug"))
    live = [chip for chip in active if chip_has_live_worker(chip=chip)]
    return live or active


def chip_statuses() -> list[tuple[Chip, bool]]:
    """Every active chip with whether a worker serves it now (what the forms show beside each box)."""
    return [(chip, chip_has_live_worker(chip=chip)) for chip in Chip.objects.filter(active=True).order_by("slug")]


def read_files(
    *,
    data: bytes,
    filename: str,
    operator_id: str = "",
    usage_data: bytes | None = None,
    usage_filename: str = "",
    total_tokens: int | None = None,
    solve_seconds: float | None = None,
) -> tuple[list[KernelUpload], list[str]]:
    """Kernels of one uploaded file (a ``.py`` or an archive) and the problems found reading it.

    A single ``.py`` whose name follows ``<namespace>__<op>.py`` names its operator; ``operator_id`` (the
    form's explicit choice) wins over the name, so ``my_kernel.py`` uploads too.
    """
    if filename.lower().endswith(".py") and operator_id:
        inferred = operator_id_from_filename(filename)
        filename_for_reader = filename if inferred == operator_id else operator_id.replace("::", "__") + ".py"
    else:
        filename_for_reader = filename
    uploads, problems = read_upload(
        data=data, filename=filename_for_reader, usage_data=usage_data, usage_filename=usage_filename
    )
    problems = [problem.replace(filename_for_reader, filename, 1) for problem in problems]
    for upload in uploads:
        if filename_for_reader != filename:
            upload.filename = filename
        if total_tokens is not None:
            upload.total_tokens = total_tokens
        if solve_seconds is not None:
            upload.solve_seconds = solve_seconds
    return uploads, problems


def submission_intake(
    *, owner: AbstractBaseUser, uploads: list[KernelUpload], options: IntakeOptions, read_problems: Sequence[str] = ()
) -> Submission:
    """Resolve chips and method, then create the submission and queue its runs; SubmissionRejected listing
    every problem (reading, options and the service's checks) otherwise, with nothing saved."""
    problems = list(read_problems)
    chips = _chips(options.chip_slugs, problems)
    target_chip = None
    if options.target_chip_slug:
        target_chip = Chip.objects.filter(slug=options.target_chip_slug).first()
        if target_chip is None:
            problems.append(f"unknown target chip {options.target_chip_slug!r}")
    method = options.method
    if method is None and options.method_id:
        method = access.visible_methods(user=owner).filter(pk=options.method_id).first()
        if method is None:
            problems.append(f"unknown method {options.method_id}")
    if method is None and not (options.method_id or options.scaffold.strip()):
        problems.append("choose one of your methods or name a new one (scaffold at least)")
    if problems:
        # The service's checks still run (once) so every problem is listed in one answer.
        problems.extend(check_kernel_uploads(uploads=uploads)[0] if uploads else [])
        raise SubmissionRejected(problems)
    with transaction.atomic():  # a method created here goes with a refused submission
        if method is None:
            method = method_get_or_create(
                owner=owner, scaffold=options.scaffold, model=options.model, kind=options.kind, **options.method_fields
            )
        return submission_create(
            owner=owner,
            method=method,
            uploads=uploads,
            chips=chips,
            visibility=options.visibility,
            notes=options.notes,
            target_chip=target_chip,
        )


def _chips(slugs: Sequence[str], problems: list[str]) -> list[Chip]:
    if not slugs:
        return default_chips()
    active = {chip.slug: chip for chip in Chip.objects.filter(active=True)}
    problems.extend(f"unknown or inactive chip {slug!r}" for slug in slugs if slug not in active)
    return [active[slug] for slug in dict.fromkeys(slugs) if slug in active]

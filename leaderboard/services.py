"""Writes of the leaderboard side: methods, submissions and their kernels.

``submission_create`` is the one way kernels enter the system (web form, API, importers): it validates every
file first and saves nothing unless all are acceptable, then queues one run per (kernel, chip) after commit.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from evaluation.models import Chip
from evaluation.services import runs_create_for_kernels
from leaderboard.models import Kernel, Method, MethodKind, Operator, Submission, Visibility

# No run costs a quadrillion tokens; a larger count is a mistake (and past 2**63 the database refuses it).
MAX_TOKEN_COUNT = 10**15
MAX_SOLVE_SECONDS = 10**9
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "total_tokens")


class SubmissionRejected(Exception):
    """The upload has problems; ``problems`` names each offending file. Nothing was saved."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


@dataclass
class KernelUpload:
    """One kernel as uploaded: which operator, the code, and what it cost to write."""

    operator_id: str
    source_code: str
    filename: str = ""
    round: int = 1
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_creation_tokens: int | None = None
    cache_read_tokens: int | None = None
    total_tokens: int | None = None
    solve_seconds: float | None = None
    extra: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.filename or self.operator_id


def decode_kernel_file(*, data: bytes, filename: str) -> str:
    """The file's text; SubmissionRejected when it is too large or not UTF-8."""
    if len(data) > settings.KGB_MAX_KERNEL_BYTES:
        raise SubmissionRejected(
            [f"{filename}: too large ({len(data)} bytes; the limit is {settings.KGB_MAX_KERNEL_BYTES})"]
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SubmissionRejected([f"{filename}: not UTF-8 text ({exc.reason} at byte {exc.start})"]) from None


def defined_functions(source_code: str) -> set[str] | None:
    """Names of top-level functions (and assigned names) in the file; None when it does not parse.

    A file that does not parse is still accepted: the judge gives it ``failed_compile`` with the error, so
    the attempt is on record like any other.
    """
    try:
        tree = ast.parse(source_code)
    except (SyntaxError, ValueError):
        return None
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.ImportFrom):
            names.update(alias.asname or alias.name for alias in node.names)
    return names


def check_kernel_uploads(*, uploads: Sequence[KernelUpload]) -> tuple[list[str], dict[str, Operator]]:
    """Every problem of the batch, each naming its file; and the operators the uploads refer to."""
    problems: list[str] = []
    wanted_ids = {upload.operator_id for upload in uploads}
    operators = {op.operator_id: op for op in Operator.objects.filter(operator_id__in=wanted_ids)}
    seen: dict[tuple[str, int], str] = {}
    if not uploads:
        problems.append("no kernel files in the upload")
    for upload in uploads:
        operator = operators.get(upload.operator_id)
        if operator is None:
            problems.append(f"{upload.label}: unknown operator {upload.operator_id!r}")
            continue
        if not operator.active:
            problems.append(
                f"{upload.label}: operator {upload.operator_id} cannot be judged now"
                f" ({operator.unavailable_reason or 'deactivated'})"
            )
            continue
        key = (upload.operator_id, upload.round)
        if key in seen:
            problems.append(f"{upload.label}: duplicate operator {upload.operator_id} (also in {seen[key]})")
            continue
        seen[key] = upload.label
        if len(upload.source_code.encode("utf-8")) > settings.KGB_MAX_KERNEL_BYTES:
            problems.append(f"{upload.label}: too large (limit {settings.KGB_MAX_KERNEL_BYTES} bytes)")
            continue
        if not upload.source_code.strip():
            problems.append(f"{upload.label}: empty file")
            continue
        problems.extend(_cost_problems(upload))
        names = defined_functions(upload.source_code)
        if names is not None:
            required = [entry["name"] for entry in operator.entry_points]
            missing = [name for name in required if name not in names]
            if missing:
                problems.append(
                    f"{upload.label}: missing entry point(s) {', '.join(missing)} required by {upload.operator_id}"
                )
    return problems, operators


def _cost_problems(upload: KernelUpload) -> list[str]:
    """Token counts and solving time out of range, whichever intake read them."""
    problems = []
    for name in TOKEN_FIELDS:
        value = getattr(upload, name)
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKEN_COUNT
        ):
            problems.append(
                f"{upload.label}: {name} must be a whole number from 0 to {MAX_TOKEN_COUNT} (got {str(value)[:30]})"
            )
    seconds = upload.solve_seconds
    if seconds is not None and not (
        isinstance(seconds, (int, float)) and math.isfinite(seconds) and 0 <= seconds <= MAX_SOLVE_SECONDS
    ):
        problems.append(
            f"{upload.label}: solve time must be from 0 to {MAX_SOLVE_SECONDS} seconds (got {str(seconds)[:30]})"
        )
    return problems


def check_upload_quota(*, owner: AbstractBaseUser, count: int) -> str | None:
    since = timezone.now() - timedelta(days=1)
    used = Kernel.objects.filter(submission__owner=owner, created_at__gte=since).count()
    quota = settings.KGB_DAILY_UPLOAD_QUOTA
    if used + count > quota:
        return f"daily quota exceeded: {used} kernels uploaded in the last 24 hours, {count} more would pass {quota}"
    return None


def method_get_or_create(
    *,
    owner: AbstractBaseUser,
    scaffold: str,
    model: str = "",
    kind: str = MethodKind.AGENT,
    link: str = "",
    public: bool = True,
    model_version: str = "",
    paper_url: str = "",
    code_url: str = "",
) -> Method:
    """The owner's method of that scaffold and model; created with the given metadata when new (an existing
    method keeps its own metadata)."""
    method, _ = Method.objects.get_or_create(
        scaffold=scaffold.strip(),
        model=model.strip(),
        owner=owner,
        defaults={
            "kind": kind,
            "link": link,
            "public": public,
            "model_version": model_version.strip(),
            "paper_url": paper_url.strip(),
            "code_url": code_url.strip(),
        },
    )
    return method


def submission_create(
    *,
    owner: AbstractBaseUser,
    method: Method,
    uploads: Sequence[KernelUpload],
    chips: Iterable[Chip],
    visibility: str = Visibility.PUBLIC,
    notes: str = "",
    target_chip: Chip | None = None,
) -> Submission:
    """Validate everything, then save the submission and its kernels and queue their runs, or nothing."""
    chips = list(chips)
    problems, operators = check_kernel_uploads(uploads=uploads)
    if not chips:
        problems.append("choose at least one chip to judge on")
    quota_problem = check_upload_quota(owner=owner, count=len(uploads))
    if quota_problem:
        problems.append(quota_problem)
    if method.owner_id not in (None, owner.pk) and not owner.is_staff:
        problems.append(f"method {method} belongs to another user")
    if problems:
        raise SubmissionRejected(problems)
    with transaction.atomic():
        submission = Submission.objects.create(
            owner=owner, method=method, visibility=visibility, notes=notes, target_chip=target_chip
        )
        kernels = [
            Kernel.objects.create(
                submission=submission,
                operator=operators[upload.operator_id],
                source_code=upload.source_code,
                sha256=Kernel.hash_source(upload.source_code),
                filename=upload.filename,
                round=upload.round,
                input_tokens=upload.input_tokens,
                output_tokens=upload.output_tokens,
                cache_creation_tokens=upload.cache_creation_tokens,
                cache_read_tokens=upload.cache_read_tokens,
                total_tokens=upload.total_tokens if upload.total_tokens is not None else _sum_tokens(upload),
                solve_seconds=upload.solve_seconds,
            )
            for upload in uploads
        ]
        runs_create_for_kernels(kernels=kernels, chips=chips)
    return submission


def _sum_tokens(upload: KernelUpload) -> int | None:
    parts = [upload.input_tokens, upload.output_tokens, upload.cache_creation_tokens, upload.cache_read_tokens]
    known = [part for part in parts if part is not None]
    return sum(known) if known else None

"""The built-in reference kernels as a ranked method, so a fresh install shows verified rows within minutes.

``reference_kernels_submit`` uploads the catalog's Triton reference kernels (evaluation/catalog/
reference_kernels/) as the method "Built-in reference kernels", owned by a system account that cannot log
in, through the ordinary ``submission_create``: the worker judges them like any upload. A small set of quick
pointwise operators goes first, in its own submission, so the first rows land in a couple of minutes; the
rest follow. Idempotent: operators the method already has a kernel for are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model

from evaluation.models import Chip
from leaderboard.models import Kernel, Method, MethodKind, Operator, Submission
from leaderboard.services import KernelUpload, method_get_or_create, submission_create
from leaderboard.uploads import operator_id_from_filename

KERNEL_DIR = Path(__file__).resolve().parents[1] / "evaluation" / "catalog" / "reference_kernels"
SYSTEM_USERNAME = "kgb-reference"
SCAFFOLD = "Built-in reference kernels"
# Pointwise operators whose smoke cases the CPU interpreter judges in seconds: the first rows a newcomer sees.
FIRST_OPERATORS = (
    "aten::cos",
    "aten::neg",
    "aten::floor",
    "aten::rsqrt",
    "aten::sgn",
    "aten::cosh",
    "aten::log10",
    "aten::hardsigmoid",
    "aten::bitwise_not",
    "aten::acosh",
)


@dataclass
class SeedResult:
    submissions: list[Submission]
    skipped_existing: int
    skipped_unavailable: list[str]


def system_user():
    """The account that owns the reference method; it has no usable password, so nobody logs in as it."""
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=SYSTEM_USERNAME, defaults={"is_active": True})
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def reference_method() -> Method:
    method = method_get_or_create(owner=system_user(), scaffold=SCAFFOLD, kind=MethodKind.LIBRARY)
    if not method.description:
        Method.objects.filter(pk=method.pk).update(
            description=(
                "The Triton kernels shipped with this site's operator catalog, written by its engineers, judged here "
                "like any upload. A baseline to read other methods against, and what a fresh install ranks first."
            )
        )
        method.refresh_from_db()
    return method


def reference_kernels_submit(*, chips: list[Chip], limit: int | None = None) -> SeedResult:
    """Submit every reference kernel the method does not have yet: the quick ones first, then the rest."""
    method = reference_method()
    have = set(Kernel.objects.filter(submission__method=method).values_list("operator__operator_id", flat=True))
    active = set(Operator.objects.filter(active=True).values_list("operator_id", flat=True))
    files = sorted(KERNEL_DIR.glob("*.py"))
    uploads: dict[str, KernelUpload] = {}
    unavailable: list[str] = []
    skipped = 0
    for path in files:
        operator_id = operator_id_from_filename(path.name)
        if operator_id is None:
            continue
        if operator_id in have:
            skipped += 1
            continue
        if operator_id not in active:
            unavailable.append(operator_id)
            continue
        uploads[operator_id] = KernelUpload(
            operator_id=operator_id, source_code=path.read_text(encoding="utf-8"), filename=path.name
        )
    first = [uploads.pop(op) for op in FIRST_OPERATORS if op in uploads]
    rest = [uploads[op] for op in sorted(uploads)]
    batches = [batch for batch in (first, rest) if batch]
    if limit is not None:
        batches = _cut(batches, limit)
    submissions = [
        submission_create(
            owner=method.owner,
            method=method,
            uploads=batch,
            chips=chips,
            notes="The catalog's built-in reference kernels (seeded by manage.py judge_reference_kernels).",
        )
        for batch in batches
    ]
    return SeedResult(submissions=submissions, skipped_existing=skipped, skipped_unavailable=unavailable)


def _cut(batches: list[list[KernelUpload]], limit: int) -> list[list[KernelUpload]]:
    kept: list[list[KernelUpload]] = []
    left = limit
    for batch in batches:
        if left <= 0:
            break
        kept.append(batch[:left])
        left -= len(kept[-1])
    return kept

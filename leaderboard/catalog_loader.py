"""Mirror the declarative operator records (evaluation.catalog) and the paper's numbers into the database.

Idempotent: running it twice changes nothing; an operator whose record changed gets its version bumped, so
runs judged against the older definition show as stale (the boards' totals of its sets are recomputed, as
are those of a built-in set whose members changed).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import transaction

from evaluation.catalog.registry import all_operators
from evaluation.catalog.spec import OperatorSpec
from leaderboard import best_verdicts
from leaderboard.models import Operator, OperatorSet, PaperCost, PaperResult

# The built-in sets: slug -> (title, description, which operators, display position).
BUILTIN_SETS: dict[str, tuple[str, str, str, int]] = {
    "kgb-ms": ("KernelGenBench-MS", "All 210 operators: 110 ATen, 50 vLLM, 50 cuBLAS (multi-source).", "all", 1),
    "kgb-mc": ("KernelGenBench-MC", "The 110 ATen operators judged on every chip (multi-chip).", "mc", 2),
    "aten": ("ATen", "The 110 PyTorch ATen operators.", "aten", 3),
    "vllm": ("vLLM", "The 50 vLLM 0.13 custom operators.", "vllm", 4),
    "cublas": ("cuBLAS", "The 50 cuBLAS 12.4 routines.", "cublas", 5),
}

REFERENCE_BY_SOURCE = {
    "aten": "The ATen operator itself ({overloads}) on the same device and dtype.",
    "vllm": "A pure-PyTorch reference of vLLM 0.13's custom op, run on the same device.",
    "cublas": "A PyTorch reference working on raw column-major storage exactly as cuBLAS does.",
}


@dataclass(frozen=True)
class CatalogRow:
    operator_id: str
    source: str
    name: str
    in_ms: bool
    in_mc: bool


def read_operator_list(path: Path | None = None) -> list[CatalogRow]:
    """The benchmark's 210 operator ids (operators.csv)."""
    path = path or settings.KGB_DATA_FILES_DIR / "operators.csv"
    with open(path, newline="") as handle:
        return [
            CatalogRow(row["operator_id"], row["source"], row["name"], row["in_ms"] == "1", row["in_mc"] == "1")
            for row in csv.DictReader(handle)
        ]


def describe_reference(spec: OperatorSpec) -> str:
    overloads = ", ".join(entry.aten_overload for entry in spec.entry_points if entry.aten_overload)
    text = REFERENCE_BY_SOURCE[spec.source].format(overloads=overloads or spec.operator_id)
    if spec.fp64_relative_bound is not None:
        text += f" Second opinion: float64 CPU reference, relative error bound {spec.fp64_relative_bound:g}."
    if spec.baseline_name:
        text += f" Timed against: {spec.baseline_name} where the worker has it."
    return text


def operator_fields(spec: OperatorSpec) -> dict:
    return {
        "source": spec.source,
        "name": spec.name,
        "description": spec.description,
        "entry_points": [
            {
                "name": e.name,
                "signature": e.signature,
                "aten_overload": e.aten_overload,
                "mutates": list(e.mutates),
                "compare_return": e.compare_return,
            }
            for e in spec.entry_points
        ],
        "reference": describe_reference(spec),
        "public_cases": [case.to_json() for case in spec.public],
        "smoke_cases": [case.to_json() for case in spec.smoke],
        "tolerance_rule": "assert_close with atol = 1e-4 x reduce_dim and rtol by dtype (fp16 1e-3, bf16 1.6e-2, "
        "fp32/fp64 1e-5, integers and bool exact); exact output dtype and shape.",
        "judgement": spec.judgement,
        "judgement_notes": spec.judgement_notes,
        "cost_model": "bytes and flops declared by the record"
        if spec.bytes_moved or spec.flops
        else "bytes = inputs read once + outputs written once; one flop per output element",
        "departures": spec.departures,
        "unavailable_reason": spec.unavailable_reason,
        "definition_hash": spec.definition_hash(),
    }


@transaction.atomic
def catalog_load(*, operator_list: list[CatalogRow] | None = None) -> dict[str, int]:
    """Create or update every operator and the built-in sets. Returns counts of what changed."""
    rows = operator_list or read_operator_list()
    specs = all_operators()
    counts = {"created": 0, "updated": 0, "unchanged": 0, "without_record": 0}
    by_id: dict[str, Operator] = {}
    bumped: list[int] = []  # operators whose version moved: their older verdicts are stale now
    for row in rows:
        spec = specs.get(row.operator_id)
        if spec is None:
            fields = {
                "source": row.source,
                "name": row.name,
                "active": False,
                "unavailable_reason": "No catalog record yet: this operator cannot be judged.",
                "definition_hash": "",
            }
            counts["without_record"] += 1
        else:
            fields = operator_fields(spec)
            fields["active"] = not spec.unavailable_reason
        fields["in_mc"] = row.in_mc
        operator, created = Operator.objects.get_or_create(operator_id=row.operator_id, defaults=fields)
        if created:
            counts["created"] += 1
        elif _differs(operator, fields):
            if fields["definition_hash"] != operator.definition_hash and operator.definition_hash:
                operator.version += 1
                bumped.append(operator.pk)
            for name, value in fields.items():
                setattr(operator, name, value)
            operator.save()
            counts["updated"] += 1
        else:
            counts["unchanged"] += 1
        by_id[row.operator_id] = operator
    regrouped: list[int] = []  # sets whose members changed
    for slug, (title, description, members, position) in BUILTIN_SETS.items():
        operator_set, _ = OperatorSet.objects.update_or_create(
            slug=slug,
            defaults={
                "title": title,
                "description": description,
                "builtin": True,
                "public": True,
                "position": position,
            },
        )
        wanted = [by_id[row.operator_id] for row in rows if _in_set(row, members)]
        if set(operator_set.operators.values_list("pk", flat=True)) != {op.pk for op in wanted}:
            operator_set.operators.set(wanted)
            regrouped.append(operator_set.pk)
    # The boards' totals per set follow, in this transaction.
    best_verdicts.sets_changed(set_ids=regrouped)
    best_verdicts.operators_changed(operator_ids=bumped)
    return counts


def _in_set(row: CatalogRow, members: str) -> bool:
    if members == "all":
        return row.in_ms
    if members == "mc":
        return row.in_mc
    return row.source == members


def _differs(operator: Operator, fields: dict) -> bool:
    return any(
        json.dumps(getattr(operator, name), sort_keys=True, default=str)
        != json.dumps(value, sort_keys=True, default=str)
        for name, value in fields.items()
    )


@transaction.atomic
def paper_results_load(*, directory: Path | None = None) -> int:
    """Load paper_results.csv and paper_cost.csv as the 'reported in the paper' layer."""
    directory = directory or settings.KGB_DATA_FILES_DIR
    loaded = 0
    results_path, cost_path = directory / "paper_results.csv", directory / "paper_cost.csv"
    if results_path.exists():
        with open(results_path, newline="") as handle:
            for row in csv.DictReader(handle):
                PaperResult.objects.update_or_create(
                    table=row["table"],
                    method=row["method"],
                    model=row["model"],
                    view=row["view"],
                    platform=row["platform"],
                    defaults={
                        "accuracy_pct": _float(row["accuracy_pct"]),
                        "speedup_geomean": _float(row["speedup_geomean"]),
                    },
                )
                loaded += 1
    if cost_path.exists():
        with open(cost_path, newline="") as handle:
            for row in csv.DictReader(handle):
                PaperCost.objects.update_or_create(
                    method=row["method"],
                    model=row["model"],
                    platform=row["platform"],
                    operator_set=row["operator_set"],
                    defaults={
                        "total_tokens_millions": float(row["total_tokens_millions"]),
                        "tokens_per_passed_operator_millions": float(row["tokens_per_passed_operator_millions"]),
                        "total_hours": float(row["total_hours"]),
                    },
                )
                loaded += 1
    return loaded


def _float(value: str) -> float | None:
    value = (value or "").strip()
    return float(value) if value and value.lower() not in {"na", "nan", "-"} else None

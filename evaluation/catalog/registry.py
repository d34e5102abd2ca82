"""The catalog: every operator record, by id. Records live in one module per family and source."""

from __future__ import annotations

import importlib
from dataclasses import replace
from functools import cache

from evaluation.catalog import smoke_twins
from evaluation.catalog.spec import OperatorSpec

# Each module exposes OPERATORS: list[OperatorSpec]. Order is display order.
RECORD_MODULES: tuple[str, ...] = (
    "evaluation.catalog.aten.pointwise",
    "evaluation.catalog.aten.copies",
    "evaluation.catalog.aten.creation",
    "evaluation.catalog.aten.views",
    "evaluation.catalog.aten.reductions",
    "evaluation.catalog.aten.linalg",
    "evaluation.catalog.aten.random_ops",
    "evaluation.catalog.aten.indexing",
    "evaluation.catalog.aten.losses",
    "evaluation.catalog.cublas.level1",
    "evaluation.catalog.cublas.level2",
    "evaluation.catalog.cublas.level3",
    "evaluation.catalog.cublas.batched",
    "evaluation.catalog.vllm.norms",
    "evaluation.catalog.vllm.rotary",
    "evaluation.catalog.vllm.kv_cache",
    "evaluation.catalog.vllm.kv_blocks",
    "evaluation.catalog.vllm.kv_gather",
    "evaluation.catalog.vllm.attention",
    "evaluation.catalog.vllm.sparse_index",
    "evaluation.catalog.vllm.quant",
    "evaluation.catalog.vllm.norm_quant",
    "evaluation.catalog.vllm.gemm_quant",
    "evaluation.catalog.vllm.marlin",
    "evaluation.catalog.vllm.ggml",
    "evaluation.catalog.vllm.moe",
    "evaluation.catalog.vllm.moe_align",
    "evaluation.catalog.vllm.ssm",
    "evaluation.catalog.vllm.misc",
)


@cache
def records_as_written() -> dict[str, OperatorSpec]:
    """The records as their modules define them, before the smoke tier's derived twins are appended."""
    operators: dict[str, OperatorSpec] = {}
    for module_name in RECORD_MODULES:
        for spec in importlib.import_module(module_name).OPERATORS:
            if spec.operator_id in operators:
                raise ValueError(f"operator {spec.operator_id} is defined twice")
            operators[spec.operator_id] = spec
    return operators


@cache
def all_operators() -> dict[str, OperatorSpec]:
    """Every record, its smoke tier followed by its derived twins of the public grid's structures."""
    twins = smoke_twins.load_twins()
    return {
        operator_id: replace(spec, smoke=spec.smoke + twins[operator_id]) if operator_id in twins else spec
        for operator_id, spec in records_as_written().items()
    }


def get_operator(operator_id: str) -> OperatorSpec:
    """The record for ``operator_id``; KeyError with a readable message when it is unknown."""
    try:
        return all_operators()[operator_id]
    except KeyError:
        raise KeyError(f"unknown operator {operator_id!r}") from None

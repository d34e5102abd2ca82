"""Small builders shared by the non-pointwise ATen record modules (creation, views, reductions, linalg, ...).

Entry points are declared from the ATen schema string pinned in the record (tests compare the pin with the
installed torch), and the reference is always the overload the entry point names, called on the same device.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import torch

from evaluation.catalog.inputs import Layout, make_tensor
from evaluation.catalog.spec import Call, Case, EntryPoint, OperatorSpec

FLOAT_DTYPES = ("float16", "float32", "bfloat16")
CPU = torch.device("cpu")

# Creation ops take a ``device=`` argument: the record builds it as the CPU device, and the judge maps every
# torch.device in a call to the device under test exactly as it moves tensors (see DEVICE_NOTE in prompts).
DEVICE_NOTE = (
    "The call passes `device=` (and `dtype=`) explicitly: allocate the result there. "
    "`layout` and `pin_memory` are always None."
)


def entry(schema: str, *, mutates: tuple[int | str, ...] = (), compare_return: bool = True) -> EntryPoint:
    """An entry point from a pinned ATen schema: ``aten::sum.dim_IntList(...) -> T`` -> ``sum_dim_IntList``."""
    qualified, _, rest = schema.partition("(")
    overload_name = qualified.split("::", 1)[1]
    name = overload_name.replace(".", "_")
    arguments, _, returns = rest.rpartition(") -> ")
    return EntryPoint(
        name=name,
        signature=f"{name}({python_arguments(arguments)}) -> {returns}",
        aten_overload=qualified,
        mutates=mutates,
        compare_return=compare_return,
    )


def python_arguments(arguments: str) -> str:
    """ATen argument notation in the entry points' notation: ``int[1]? dim=None`` -> ``dim: int[1] | None = None``."""
    parts, depth, current = [], 0, ""
    for char in arguments:
        depth += char in "[("
        depth -= char in "])"
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        parts.append(current.strip())
    converted = []
    for part in parts:
        if part == "*":
            converted.append(part)
            continue
        declaration, has_default, default = part.partition("=")
        type_name, _, argument_name = declaration.strip().rpartition(" ")
        if type_name.endswith("?"):
            type_name = f"{type_name[:-1]} | None"
        converted.append(f"{argument_name}: {type_name}" + (f" = {default}" if has_default else ""))
    return ", ".join(converted)


def aten_overload(qualified: str) -> torch._ops.OpOverload:
    """``aten::sum.dim_IntList`` -> ``torch.ops.aten.sum.dim_IntList`` (``.default`` when none is named)."""
    op_name, _, overload = qualified.split("::", 1)[1].partition(".")
    return getattr(getattr(torch.ops.aten, op_name), overload or "default")


HALF_DTYPES = (torch.float16, torch.bfloat16)


def half_in_float32(reference: Callable[[Case, Call], Any]) -> Callable[[Case, Call], Any]:
    """``reference`` computed on float32 copies of its half-precision tensors, its tensor results rounded
    once back to the inputs' half dtype: what CUDA's kernels do (they compute half inputs in float32) and the
    accurate answer. For ops whose ATen CPU kernel rounds its intermediates in half, so that on the CPU
    interpreter chip the reference itself sat beyond fp16's tolerance of the accurate answer: a kernel
    copying that rounding passed on the CPU and failed on the H200 (logit: 9 % of a 1024 x 1024 case, the
    same count on both), and one computing in float32 leaned on the well-posed fallback."""

    def widened(case: Case, call: Call) -> Any:
        halves = [v.dtype for v in (*call.args, *call.kwargs.values()) if isinstance(v, torch.Tensor)]
        half = next((dtype for dtype in halves if dtype in HALF_DTYPES), None)
        if half is None:
            return reference(case, call)

        def up(value: Any) -> Any:
            return value.float() if isinstance(value, torch.Tensor) and value.dtype in HALF_DTYPES else value

        result = reference(case, Call([up(v) for v in call.args], {k: up(v) for k, v in call.kwargs.items()}))
        if isinstance(result, torch.Tensor) and result.dtype == torch.float32:
            return result.to(half)
        return result

    return widened


def record(
    name: str,
    description: str,
    schemas: Sequence[EntryPoint],
    *,
    make_inputs: Callable[[Case, torch.Generator], Call],
    smoke: Sequence[Case],
    public: Sequence[Case],
    held_out: Callable[[random.Random], Sequence[Case]],
    **fields: Any,
) -> OperatorSpec:
    """An ``aten::<name>`` record whose reference is the ATen overload of the case's entry point (unless the
    record passes its own ``reference``, for ops whose ATen result depends on the device: see cumsum)."""
    overloads = {point.name: aten_overload(point.aten_overload) for point in schemas}

    def aten_reference(case: Case, call: Call) -> Any:
        return overloads[case.entry_point](*call.args, **call.kwargs)

    reference = fields.pop("reference", aten_reference)
    composite = fields.pop("composite_in_aten", False)
    if fields.pop("half_in_float32", False):
        if composite:  # eager rounds each step in half on every device: its answer passes too
            fields["eager_alternative"] = reference
        reference = half_in_float32(reference)
    elif composite:
        raise ValueError(f"aten::{name}: composite_in_aten only qualifies a half_in_float32 reference")

    return OperatorSpec(
        operator_id=f"aten::{name}",
        source="aten",
        description=description,
        entry_points=tuple(schemas),
        make_inputs=make_inputs,
        reference=reference,
        smoke=tuple(smoke),
        public=tuple(public),
        held_out=held_out,
        **fields,
    )


def case(entry_point: str, reduce_dim: int = 1, timed: bool = True, **params: Any) -> Case:
    """One case; tuples in params become lists so the case stays JSON-serialisable and hashable by id."""
    clean = {key: (_listify(value)) for key, value in params.items()}
    return Case(entry_point=entry_point, params=clean, reduce_dim=max(1, int(reduce_dim)), timed=timed)


def _listify(value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return [_listify(item) for item in value]
    return value


def tensor(
    params: dict[str, Any] | Any,
    generator: torch.Generator,
    *,
    shape_key: str = "shape",
    dtype: str | None = None,
    layout: Layout | None = None,
    low: float = -2.0,
    high: float = 2.0,
    away_from_zero: float = 0.0,
) -> torch.Tensor:
    """A tensor from a case's params (``shape``, ``dtype``, ``layout``) with optional overrides."""
    return make_tensor(
        params[shape_key],
        dtype or params["dtype"],
        generator,
        layout=layout or params.get("layout", "contiguous"),
        low=low,
        high=high,
        away_from_zero=away_from_zero,
    )


def numel(shape: Sequence[int]) -> int:
    total = 1
    for size in shape:
        total *= int(size)
    return total


def itemsize(dtype_name: str) -> int:
    return torch.empty((), dtype=getattr(torch, dtype_name)).element_size()


def draw_shape(
    rng: random.Random, *, rank: tuple[int, int] = (1, 4), max_size: int = 3000, max_numel: int = 4_000_000
) -> list[int]:
    """An odd shape nobody saw before the run, within an element budget."""
    shape = []
    budget = max_numel
    for _ in range(rng.randint(*rank)):
        size = rng.randint(1, max(1, min(max_size, budget)))
        budget = max(1, budget // size)
        shape.append(size)
    return shape


def distinct_indices(count: int, upper: int, generator: torch.Generator) -> torch.Tensor:
    """``count`` distinct int64 indices in [0, upper), in random order (no write conflicts)."""
    return torch.randperm(upper, generator=generator)[:count]


def random_indices(shape: Sequence[int], upper: int, generator: torch.Generator) -> torch.Tensor:
    """int64 indices in [0, upper), repeats allowed (reads only)."""
    return torch.randint(0, upper, tuple(shape), generator=generator, dtype=torch.int64)

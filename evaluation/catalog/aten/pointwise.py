"""ATen pointwise operators: one record each, on the original benchmark's shared pointwise grid."""

from __future__ import annotations

import random

import torch

from evaluation.catalog.inputs import make_tensor
from evaluation.catalog.spec import Call, Case, EntryPoint, OperatorSpec, dtype_of, grid

# The original's shared grids (PROTOCOL section 3), split by tier.
SMOKE_SHAPES = ((), (1,), (33,), (4, 17), (2, 3, 5))
PUBLIC_SHAPES = ((), (1,), (1024, 1024), (20, 320, 15), (16, 128, 64, 60), (16, 7, 57, 32, 29))
FLOAT_DTYPES = ("float16", "float32", "bfloat16")


def draw_held_out_shapes(rng: random.Random, count: int = 6) -> list[tuple[int, ...]]:
    """Odd sizes and ranks nobody saw before the run: 1-4 dims, sizes 1..3000, at most ~4M elements."""
    shapes = []
    for _ in range(count):
        rank = rng.randint(1, 4)
        budget = 4_000_000
        shape = []
        for _ in range(rank):
            size = rng.randint(1, min(3000, max(1, budget)))
            budget //= max(1, size)
            shape.append(size)
        shapes.append(tuple(shape))
    return shapes


def unary_inputs(case: Case, generator: torch.Generator) -> Call:
    params = case.params
    low, high = params.get("range", (-2.0, 2.0))
    tensor = make_tensor(params["shape"], params["dtype"], generator, layout=params.get("layout", "contiguous"),
                         low=low, high=high)
    return Call(args=[tensor])


def unary_out_inputs(case: Case, generator: torch.Generator) -> Call:
    call = unary_inputs(case, generator)
    # The out buffer's contents are garbage the judge poisons before each call.
    call.kwargs["out"] = torch.empty(tuple(case.params["shape"]), dtype=dtype_of(case.params["dtype"]))
    return call


def unary_pointwise(name: str, description: str, *, value_range: tuple[float, float] = (-2.0, 2.0),
                    with_out: bool = True) -> OperatorSpec:
    """A record for a unary float op with ``<op>`` and (optionally) ``<op>_out`` entry points."""
    aten_op = getattr(torch.ops.aten, name)
    entry_points = [EntryPoint(name, f"{name}(self: Tensor) -> Tensor", f"aten::{name}")]
    if with_out:
        entry_points.append(EntryPoint(f"{name}_out", f"{name}_out(self: Tensor, *, out: Tensor) -> Tensor",
                                       f"aten::{name}.out", mutates=("out",), compare_return=False))

    def reference(case: Case, call: Call) -> torch.Tensor:
        if case.entry_point.endswith("_out"):
            return aten_op.out(*call.args, **call.kwargs)
        return aten_op.default(*call.args, **call.kwargs)

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        return (unary_out_inputs if case.entry_point.endswith("_out") else unary_inputs)(case, generator)

    def held_out(rng: random.Random) -> list[Case]:
        cases = []
        for shape in draw_held_out_shapes(rng):
            layout = rng.choice(("contiguous", "transposed", "strided", "broadcast"))
            cases.append(Case(name, {"shape": list(shape), "dtype": rng.choice(FLOAT_DTYPES), "layout": layout,
                                     "range": list(value_range)}))
        return cases

    smoke = grid(name, shape=[list(s) for s in SMOKE_SHAPES], dtype=FLOAT_DTYPES, range=[list(value_range)])
    smoke += grid(name, shape=[[4, 17]], dtype=["float32"], layout=["transposed", "strided"],
                  range=[list(value_range)])
    public = grid(name, shape=[list(s) for s in PUBLIC_SHAPES], dtype=FLOAT_DTYPES, range=[list(value_range)])
    if with_out:
        smoke += grid(f"{name}_out", shape=[[33]], dtype=["float32"], range=[list(value_range)])
        public += grid(f"{name}_out", shape=[[1024, 1024]], dtype=FLOAT_DTYPES, range=[list(value_range)])
    return OperatorSpec(
        operator_id=f"aten::{name}",
        source="aten",
        description=description,
        entry_points=tuple(entry_points),
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        held_out=held_out,
    )


OPERATORS: list[OperatorSpec] = [
    unary_pointwise("cos", "Element-wise cosine of a floating-point tensor."),
]

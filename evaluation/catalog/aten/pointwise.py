"""ATen pointwise operators: one record each, on the original benchmark's shared pointwise grid.

A record is a list of overloads (pinned ATen schema, turned into an entry point) plus case grids whose params
say how each argument is drawn. Params keys, all JSON: ``shape``/``dtype``/``layout``/``range``/``away``/
``integral`` describe ``self``; the same keys with an ``other_``, ``mask_`` or ``src_`` prefix describe the
second tensor (falling back to ``self``'s dtype and range); ``scalar``, ``value``, ``n``, ``alpha``,
``rounding_mode``, ``eps``, ``to_dtype``, ``memory_format`` and ``copy`` are the non-tensor arguments.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import torch

from evaluation.catalog.aten._build import half_in_float32 as widen_halves
from evaluation.catalog.inputs import make_tensor
from evaluation.catalog.spec import Call, Case, EntryPoint, OperatorSpec, dtype_of, grid

# The original's shared grids (PROTOCOL section 3), split by tier.
SMOKE_SHAPES = ((), (1,), (33,), (4, 17), (2, 3, 5))
PUBLIC_SHAPES = ((), (1,), (1024, 1024), (20, 320, 15), (16, 128, 64, 60), (16, 7, 57, 32, 29))
# The public grid's ranks 4 and 5, small, in one dtype: a wrapper that handles at most three dims fails here
# on the CPU interpreter as it fails the public grid on a GPU.
SMOKE_HIGH_RANKS = ((2, 3, 2, 4), (2, 1, 3, 2, 3))
FLOAT_DTYPES = ("float16", "float32", "bfloat16")
SCALARS = (0.001, -0.999, 100.001, -111.999)
# (self, other) shapes: equal shapes, then broadcasting either way; then two 0-d tensors (the public grid's
# first pair, where a wrapper's shortcut for a 0-d operand lives).
SMOKE_PAIRS = (
    ((33,), (33,)),
    ((4, 17), (4, 17)),
    ((2, 3, 5), (2, 1, 5)),
    ((4, 17), (17,)),
    ((), (2, 3)),
    ((), ()),
    ((2, 3, 2, 4), (1, 3, 1, 4)),  # the public grid's rank-4 broadcast, both sides
)
PUBLIC_PAIRS = tuple((shape, shape) for shape in PUBLIC_SHAPES) + (
    ((1024, 1024), (1024,)),
    ((20, 320, 15), (20, 1, 15)),
    ((16, 128, 64, 60), (1, 128, 1, 60)),
    ((1,), (1024, 1024)),
)
# In-place ops write ``self``: the broadcast result must have self's shape.
SMOKE_INPLACE_PAIRS = tuple(pair for pair in SMOKE_PAIRS if len(pair[0]) >= len(pair[1]))
PUBLIC_INPLACE_PAIRS = tuple(pair for pair in PUBLIC_PAIRS if len(pair[0]) >= len(pair[1]) and pair[0] != (1,))
SHAPE_KEYS = ("shape", "other_shape", "mask_shape", "src_shape")
MEMORY_FORMATS = {"contiguous_format": torch.contiguous_format, "preserve_format": torch.preserve_format}


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


# ---- drawing arguments from a case's params ---------------------------------------------------------------


def draw_tensor(params: dict[str, Any], generator: torch.Generator, prefix: str = "") -> torch.Tensor:
    """The tensor described by ``<prefix>shape`` etc.; dtype and range fall back to ``self``'s."""

    def get(key: str, default: Any = None) -> Any:
        inherited = key in ("dtype", "range", "nan_fraction")
        return params.get(prefix + key, params.get(key, default) if inherited else default)

    dtype = dtype_of("bool" if prefix == "mask_" else get("dtype"))
    low, high = get("range", (-2.0, 2.0))
    tensor = make_tensor(
        get("shape", params["shape"]),
        dtype,
        generator,
        layout=get("layout", "contiguous"),
        low=low,
        high=high,
        away_from_zero=get("away", 0.0),
    )
    storage_owner = tensor if tensor._base is None else tensor._base
    if get("integral") and dtype.is_floating_point:
        # Integer-valued floats: exact ties for comparisons, no rounding-boundary luck in floor/trunc.
        storage_owner.round_()
        if get("away"):
            # A float16/bfloat16 draw at the away bound is exactly 0.5, which rounds (half to even) to 0: a zero
            # divisor gives inf, and 0 / 0 a NaN that never matches. Keep the |x| >= away promise.
            storage_owner.masked_fill_(storage_owner == 0, 1)
    if get("away") and not (dtype.is_floating_point or dtype == torch.bool):
        storage_owner.masked_fill_(storage_owner == 0, 1)  # integer divisors: never zero
    if get("nan_fraction"):
        # fmax/fmin semantics are about NaN: put some there (same positions in the base, any layout).
        holes = torch.rand(storage_owner.shape, generator=generator) < get("nan_fraction")
        storage_owner.masked_fill_(holes, float("nan"))
    if get("neg_bit"):
        tensor = torch._neg_view(tensor)
    if get("conj_bit"):
        tensor = tensor.conj()
    return tensor


def _kwarg(key: str, params: dict[str, Any]) -> Any:
    if key == "dtype":
        return dtype_of(params["to_dtype"])
    if key == "memory_format":
        return MEMORY_FORMATS[params["memory_format"]]
    return params[key]


# Positional argument kinds an overload's recipe may name.
ARG_DRAWERS: dict[str, Callable[[dict[str, Any], torch.Generator], Any]] = {
    "self": lambda params, generator: draw_tensor(params, generator),
    "other": lambda params, generator: draw_tensor(params, generator, "other_"),
    "mask": lambda params, generator: draw_tensor(params, generator, "mask_"),
    "src": lambda params, generator: draw_tensor(params, generator, "src_"),
    "scalar": lambda params, generator: params["scalar"],
    "value": lambda params, generator: params["value"],
    # fill_.Tensor / masked_fill_.Tensor: a 0-dim tensor of self's dtype.
    "value_tensor": lambda params, generator: torch.tensor(params["value"], dtype=dtype_of(params["dtype"])),
    "n": lambda params, generator: params["n"],
    "to_dtype": lambda params, generator: dtype_of(params["to_dtype"]),
}
KWARG_SOURCES = {"dtype": "to_dtype"}  # kwarg name -> params key, where they differ


@dataclass(frozen=True)
class Overload:
    """One pinned ATen overload: its entry point, the reference op and how a call is put together."""

    entry: EntryPoint
    op: torch._ops.OpOverload
    args: tuple[str, ...]
    kwargs: tuple[str, ...]
    functional: torch._ops.OpOverload | None = None  # .out overloads: the op that gives out's shape and dtype

    def make_call(self, case: Case, generator: torch.Generator) -> Call:
        params = dict(case.params)
        call = Call(args=[ARG_DRAWERS[kind](params, generator) for kind in self.args])
        for key in self.kwargs:
            if KWARG_SOURCES.get(key, key) in params:
                call.kwargs[key] = _kwarg(key, params)
        if "out" in self.entry.mutates:
            # Shape and dtype from a meta run; the judge poisons the buffer's contents before each call.
            assert self.functional is not None
            meta = self.functional(*[_to_meta(arg) for arg in call.args], **call.kwargs)
            call.kwargs["out"] = torch.empty(meta.shape, dtype=meta.dtype)
        return call


def _to_meta(value: Any) -> Any:
    return value.to("meta") if isinstance(value, torch.Tensor) else value


def overload(schema: str, *, args: str, kwargs: str = "") -> Overload:
    """``overload("add.Tensor(self: Tensor, other: Tensor, *, alpha: Scalar = 1) -> Tensor", ...)``.

    The schema string is pinned from torch's registry (``torch.ops.aten.add.Tensor._schema``) in the entry
    point's notation. In-place ops (name ends with ``_``) mutate ``self``; ``.out`` overloads mutate ``out``.
    """
    qualified, rest = schema.split("(", 1)
    op_name, _, overload_name = qualified.partition(".")
    name = f"{op_name}_{overload_name}" if overload_name else op_name
    mutates: tuple[int | str, ...] = ()
    if "out" in overload_name.split("_") or overload_name == "out":
        mutates = ("out",)
    elif op_name.endswith("_"):
        mutates = (0,)
    entry = EntryPoint(name, f"{name}({rest}", f"aten::{qualified}", mutates=mutates, compare_return=not mutates)
    packet = getattr(torch.ops.aten, op_name)
    functional = None
    if mutates == ("out",):
        functional = getattr(packet, overload_name.removesuffix("out").removesuffix("_") or "default")
    return Overload(
        entry, getattr(packet, overload_name or "default"), tuple(args.split()), tuple(kwargs.split()), functional
    )


# ---- cases ------------------------------------------------------------------------------------------------


def paired(
    entry_point: str,
    pairs: Iterable[tuple[tuple[int, ...], tuple[int, ...]]],
    prefix: str = "other_",
    **axes: Iterable[Any],
) -> tuple[Case, ...]:
    """``grid`` over ``axes`` for each (self shape, second tensor shape) pair."""
    cases: list[Case] = []
    for shape, second in pairs:
        for case in grid(entry_point, **axes):
            cases.append(replace(case, params={"shape": list(shape), f"{prefix}shape": list(second), **case.params}))
    return tuple(cases)


def with_nan(cases: Iterable[Case]) -> tuple[Case, ...]:
    return tuple(replace(case, allow_nan=True) for case in cases)


def wide_only(cases: Iterable[Case], minimum: int = 30) -> tuple[Case, ...]:
    """The cases whose output has at least ``minimum`` elements.

    For bool outputs: a few elements can all be True by chance, which is also the judge's poison value, and its
    ghost replay (launches turned off) would then call an honest kernel a hack.
    """
    kept = []
    for case in cases:
        shapes = [case.params[key] for key in SHAPE_KEYS if key in case.params]
        if math.prod(torch.broadcast_shapes(*(tuple(shape) for shape in shapes))) >= minimum:
            kept.append(case)
    return tuple(kept)


def _broadcast_partner(shape: Sequence[int], rng: random.Random) -> list[int]:
    """A shape that broadcasts to ``shape``: leading dims dropped and some dims set to 1."""
    partner = [1 if rng.random() < 0.3 else size for size in shape]
    drop = rng.randint(0, len(partner)) if rng.random() < 0.3 else 0
    return partner[drop:]


def _arguments(case: Case) -> str:
    """A case's params without shapes, layouts and dtype: what the values of the other arguments are."""
    drawn = set(SHAPE_KEYS) | {"dtype"}
    return repr(
        sorted((key, value) for key, value in case.params.items() if key not in drawn and not key.endswith("layout"))
    )


def perturbed_held_out(
    templates: Sequence[Case],
    layouts: Sequence[str],
    count: int = 8,
    minimum_output: int = 1,
) -> Callable[[random.Random], list[Case]]:
    """Held-out cases: public cases with unseen shapes, layouts and dtypes of the same entry point."""

    def held_out(rng: random.Random) -> list[Case]:
        cases: list[Case] = []
        while len(cases) < count:
            (shape,) = draw_held_out_shapes(rng, 1)
            if math.prod(shape) < minimum_output:
                continue
            template = rng.choice(templates)
            params = dict(template.params)
            # Any dtype the public tier pairs with the same entry point and arguments (alpha, scalar, ...).
            kin = [
                case.params["dtype"]
                for case in templates
                if case.entry_point == template.entry_point and _arguments(case) == _arguments(template)
            ]
            params["dtype"] = rng.choice(sorted(set(kin)))
            for key in SHAPE_KEYS[1:]:
                if key in params:
                    params[key] = list(shape) if params[key] == params["shape"] else _broadcast_partner(shape, rng)
            params["shape"] = list(shape)
            params["layout"] = rng.choice(layouts)
            cases.append(replace(template, params=params))
        return cases

    return held_out


# ---- records ----------------------------------------------------------------------------------------------


def pointwise_record(
    name: str,
    description: str,
    overloads: Sequence[Overload],
    *,
    smoke: Sequence[Case],
    public: Sequence[Case],
    held_out: Callable[[random.Random], Sequence[Case]] | None = None,
    prompt_notes: str = "",
    judgement_notes: str = "",
    departures: str = "",
    minimum_output: int = 1,
    exact_formula: Callable[[Case, Call], Any] | None = None,
    exact_formula_why: str = "",
    half_in_float32: bool = False,
) -> OperatorSpec:
    """``half_in_float32``: the reference computes half inputs in float32 and rounds once (_build.half_in_float32)."""
    by_name = {item.entry.name: item for item in overloads}
    inplace = any(0 in item.entry.mutates for item in overloads)

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        return by_name[case.entry_point].make_call(case, generator)

    def reference(case: Case, call: Call) -> Any:
        return by_name[case.entry_point].op(*call.args, **call.kwargs)

    if half_in_float32:
        reference = widen_halves(reference)
    layouts = ("contiguous", "transposed", "strided") + (() if inplace else ("broadcast",))
    default_held_out = perturbed_held_out(public, layouts, minimum_output=minimum_output)
    return OperatorSpec(
        operator_id=f"aten::{name}",
        source="aten",
        description=description,
        entry_points=tuple(item.entry for item in overloads),
        make_inputs=make_inputs,
        reference=reference,
        smoke=tuple(smoke),
        public=tuple(public),
        held_out=held_out or default_held_out,
        judgement_notes=" ".join(notes for notes in (judgement_notes, exact_formula_why) if notes),
        prompt_notes=prompt_notes,
        departures=departures,
        exact_formula=exact_formula,
        exact_formula_why=exact_formula_why,
    )


def in_float64(formula: Callable[..., Any]) -> Callable[[Case, Call], Any]:
    """An ``exact_formula`` from ``formula(self, other, **kwargs)`` applied to the call's tensors widened to
    float64 (Python scalars as the caller gave them)."""

    def exact(case: Case, call: Call) -> Any:
        def widen(value: Any) -> Any:
            return value.to(torch.float64) if isinstance(value, torch.Tensor) else value

        return formula(*(widen(value) for value in call.args), **call.kwargs)

    return exact


def _exact_division(self: torch.Tensor, other: Any, rounding_mode: str | None = None) -> torch.Tensor:
    quotient = self / other
    if rounding_mode == "floor":
        return torch.floor(quotient)
    return torch.trunc(quotient) if rounding_mode == "trunc" else quotient


QUOTIENT_AT_A_MULTIPLE = (
    "A rounded quotient at an exact multiple (fp16 integers // 0.7: 7 / 0.7 is 10 in exact arithmetic) "
    "depends on how the division rounds: torch's fmod-based floor gives 9 where an exactly rounded division "
    "gives 10. Both are accepted: the reference's answer, and the correctly rounded result of floor(self / "
    "other) computed in float64."
)


def unary_pointwise(
    name: str,
    description: str,
    *,
    value_range: tuple[float, float] = (-2.0, 2.0),
    with_out: bool = True,
    dtypes: Sequence[str] = FLOAT_DTYPES,
    prompt_notes: str = "",
) -> OperatorSpec:
    """A record for a unary op with ``<op>`` and (optionally) ``<op>_out`` entry points."""
    overloads = [overload(f"{name}(self: Tensor) -> Tensor", args="self")]
    if with_out:
        overloads.append(overload(f"{name}.out(self: Tensor, *, out: Tensor) -> Tensor", args="self"))
    value_range_param = [list(value_range)]
    # float32 when there is one: the layout and out cases of aten::cos were float32 before the other records.
    first = "float32" if "float32" in dtypes else dtypes[0]

    def held_out(rng: random.Random) -> list[Case]:
        cases = []
        for shape in draw_held_out_shapes(rng):
            layout = rng.choice(("contiguous", "transposed", "strided", "broadcast"))
            dtype = rng.choice(tuple(dtypes))
            if dtype == "bool" and math.prod(shape) < 30:
                dtype = "uint8"  # no extra draw: records without bool keep their held-out cases
            cases.append(
                Case(name, {"shape": list(shape), "dtype": dtype, "layout": layout, "range": list(value_range)})
            )
        return cases

    smoke = grid(name, shape=[list(s) for s in SMOKE_SHAPES], dtype=dtypes, range=value_range_param)
    smoke += grid(name, shape=[[4, 17]], dtype=[first], layout=["transposed", "strided"], range=value_range_param)
    smoke += grid(name, shape=[list(s) for s in SMOKE_HIGH_RANKS], dtype=[first], range=value_range_param)
    public = grid(name, shape=[list(s) for s in PUBLIC_SHAPES], dtype=dtypes, range=value_range_param)
    # A bool result of a few elements can be all True, the judge's poison: its ghost replay needs more.
    smoke = tuple(case for case in smoke if case.params["dtype"] != "bool" or math.prod(case.params["shape"]) >= 30)
    public = tuple(case for case in public if case.params["dtype"] != "bool" or math.prod(case.params["shape"]) >= 30)
    if with_out:
        smoke += grid(f"{name}_out", shape=[[33]], dtype=[first], range=value_range_param)
        public += grid(f"{name}_out", shape=[[1024, 1024]], dtype=dtypes, range=value_range_param)
    return pointwise_record(
        name, description, overloads, smoke=smoke, public=public, held_out=held_out, prompt_notes=prompt_notes
    )


INT_DTYPES = ("int32", "int64")


def binary_cases(
    entry_point: str,
    *,
    dtypes: Sequence[str],
    int_dtypes: Sequence[str] = (),
    inplace: bool = False,
    draw: dict[str, list[Any]] | None = None,
    alpha: bool = False,
    smoke_half_draw: dict[str, list[Any]] | None = None,
) -> tuple[tuple[Case, ...], tuple[Case, ...]]:
    """(smoke, public) cases of a Tensor-Tensor overload: equal shapes, broadcasting, layouts, dtypes.

    ``smoke_half_draw`` replaces ``draw`` for the smoke tier's float16/bfloat16 cases (see ``NO_CANCELLATION``).
    """
    draw = draw or {}
    smoke_pairs = SMOKE_INPLACE_PAIRS if inplace else SMOKE_PAIRS
    public_pairs = PUBLIC_INPLACE_PAIRS if inplace else PUBLIC_PAIRS
    alphas = {"alpha": [2.5]} if alpha else {}
    int_alphas = {"alpha": [3]} if alpha else {}
    others = [dtype for dtype in dtypes if dtype != "float32"]
    smoke = paired(entry_point, smoke_pairs, dtype=["float32"], **draw, **alphas)
    smoke += paired(entry_point, smoke_pairs[:1], dtype=others, **(smoke_half_draw or draw), **alphas)
    smoke += paired(
        entry_point,
        [((4, 17), (4, 17))],
        dtype=["float32"],
        layout=["transposed", "strided"],
        other_layout=["broadcast"],
        **draw,
        **alphas,
    )
    smoke += paired(entry_point, smoke_pairs[1:2], dtype=int_dtypes, **draw, **int_alphas)
    public = paired(entry_point, public_pairs[:6], dtype=dtypes, **draw, **({"alpha": list(SCALARS)} if alpha else {}))
    public += paired(entry_point, public_pairs[6:], dtype=dtypes, **draw, **alphas)
    public += paired(
        entry_point,
        [((1024, 1024), (1024, 1024))],
        dtype=["float32"],
        layout=["transposed"],
        other_layout=["strided"],
        **draw,
        **alphas,
    )
    public += paired(entry_point, public_pairs[2:4], dtype=int_dtypes, **draw, **int_alphas)
    return smoke, public


def scalar_cases(
    entry_point: str,
    *,
    dtypes: Sequence[str],
    scalars: Sequence[Any] = SCALARS,
    draw: dict[str, list[Any]] | None = None,
    alpha: bool = False,
    key: str = "scalar",
) -> tuple[tuple[Case, ...], tuple[Case, ...]]:
    """(smoke, public) cases of a Tensor-Scalar overload over the original's scalars."""
    draw = draw or {}
    alphas = {"alpha": [2.5]} if alpha else {}
    others = [dtype for dtype in dtypes if dtype != "float32"]
    smoke = grid(entry_point, shape=[[4, 17], []], dtype=["float32"], **{key: scalars[:2]}, **draw, **alphas)
    smoke += grid(
        entry_point, shape=[[2, 3, 5]], dtype=["float32"], layout=["transposed"], **{key: scalars[:1]}, **draw, **alphas
    )
    smoke += grid(entry_point, shape=[[33]], dtype=others, **{key: scalars[-1:]}, **draw, **alphas)
    public = grid(
        entry_point, shape=[list(s) for s in PUBLIC_SHAPES], dtype=dtypes, **{key: list(scalars)}, **draw, **alphas
    )
    return smoke, public


def binary_pointwise(
    name: str,
    description: str,
    *,
    dtypes: Sequence[str] = FLOAT_DTYPES,
    int_dtypes: Sequence[str] = (),
    tensor_overload: str = "Tensor",
    scalar_overload: str = "Scalar",
    alpha: bool = False,
    other_name: str = "other",
    draw: dict[str, list[Any]] | None = None,
    scalars: Sequence[Any] = SCALARS,
    allow_nan: bool = False,
    wide: bool = False,
    smoke_half_draw: dict[str, list[Any]] | None = None,
    prompt_notes: str = "",
    exact_formula: Callable[[Case, Call], Any] | None = None,
    exact_formula_why: str = "",
) -> OperatorSpec:
    """``op.Tensor(self, other[, alpha])`` and, unless ``scalar_overload`` is empty, ``op.Scalar``.

    ``wide`` keeps only cases with 30 or more output elements (bool results, see ``wide_only``).
    A name ending in ``_`` is the in-place op: ``self`` is written, so it is never a broadcast view and the
    broadcast result has its shape.
    """
    inplace = name.endswith("_")
    self_type, result = ("Tensor(a!)", "Tensor(a!)") if inplace else ("Tensor", "Tensor")
    qualified = f"{name}.{tensor_overload}" if tensor_overload else name
    alpha_kw = ", *, alpha: Scalar = 1" if alpha else ""
    overloads = [
        overload(
            f"{qualified}(self: {self_type}, {other_name}: Tensor{alpha_kw}) -> {result}",
            args="self other",
            kwargs="alpha" if alpha else "",
        )
    ]
    smoke, public = binary_cases(
        overloads[0].entry.name,
        dtypes=dtypes,
        int_dtypes=int_dtypes,
        inplace=inplace,
        draw=draw,
        alpha=alpha,
        smoke_half_draw=smoke_half_draw,
    )
    if scalar_overload:
        alpha_pos = ", alpha: Scalar = 1" if alpha else ""
        overloads.append(
            overload(
                f"{name}.{scalar_overload}(self: {self_type}, other: Scalar{alpha_pos}) -> {result}",
                args="self scalar",
                kwargs="alpha" if alpha else "",
            )
        )
        more_smoke, more_public = scalar_cases(
            overloads[-1].entry.name, dtypes=dtypes, scalars=scalars, draw=draw, alpha=alpha
        )
        smoke, public = smoke + more_smoke, public + more_public
    if allow_nan:
        smoke, public = with_nan(smoke), with_nan(public)
    if wide:
        smoke, public = wide_only(smoke), wide_only(public)
    departures = []
    if wide:
        departures.append(
            "Outputs of fewer than 30 elements (shapes () and (1,)) are left out: a bool result that "
            "small can equal the judge's poison by chance. Inputs are small integer-valued numbers "
            "so that ties (==) occur."
        )
    if smoke_half_draw:
        departures.append(
            "Smoke float16/bfloat16 tensor cases draw signs that rule out cancellation: the CPU "
            "reference rounds alpha * other to the dtype on some paths, and near 0 that differs from "
            "the float32 math of CUDA (and of any good kernel) by more than the tolerance."
        )
    if allow_nan:
        departures.append("About 10% of each input is NaN, to test the NaN rule; NaN outputs are compared as equal.")
    return pointwise_record(
        name,
        description,
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes=prompt_notes,
        minimum_output=30 if wide else 1,
        departures=" ".join(departures),
        exact_formula=exact_formula,
        exact_formula_why=exact_formula_why,
    )


# ---- operators whose arguments do not fit the unary/binary mould ---------------------------------------------

# Integer-valued floats and nonzero divisors: floor/trunc land on the same integer for any sane algorithm.
EXACT_DIVISION = {
    "integral": [True],
    "other_integral": [True],
    "range": [[-20, 20]],
    "other_range": [[-6, 6]],
    "away": [0.5],
    "other_away": [0.5],
}
DENOMINATOR_AWAY = {"other_away": [0.5]}


def division(name: str, description: str, *, prompt_notes: str) -> OperatorSpec:
    """div / div_: true division, then ``rounding_mode`` "trunc" / "floor" on Tensor_mode and Scalar_mode."""
    inplace = name.endswith("_")
    self_type, result = ("Tensor(a!)", "Tensor(a!)") if inplace else ("Tensor", "Tensor")
    mode = "*, rounding_mode: str | None"
    overloads = [
        overload(f"{name}.Tensor(self: {self_type}, other: Tensor) -> {result}", args="self other"),
        overload(f"{name}.Scalar(self: {self_type}, other: Scalar) -> {result}", args="self scalar"),
        overload(
            f"{name}.Tensor_mode(self: {self_type}, other: Tensor, {mode}) -> {result}",
            args="self other",
            kwargs="rounding_mode",
        ),
        overload(
            f"{name}.Scalar_mode(self: {self_type}, other: Scalar, {mode}) -> {result}",
            args="self scalar",
            kwargs="rounding_mode",
        ),
    ]
    tensor, scalar, tensor_mode, scalar_mode = (item.entry.name for item in overloads)
    smoke, public = binary_cases(tensor, dtypes=FLOAT_DTYPES, inplace=inplace, draw=DENOMINATOR_AWAY)
    more = scalar_cases(scalar, dtypes=FLOAT_DTYPES)
    smoke, public = smoke + more[0], public + more[1]
    # True division of integers gives float32 (not for div_: the result would not fit self).
    if not inplace:
        smoke += paired(tensor, SMOKE_PAIRS[1:2], dtype=["int32"], other_away=[1])
        public += paired(tensor, PUBLIC_PAIRS[2:3], dtype=INT_DTYPES, other_away=[1])
    modes = ["trunc", "floor"]
    pairs = SMOKE_INPLACE_PAIRS if inplace else SMOKE_PAIRS
    smoke += paired(tensor_mode, pairs[1:3], dtype=["float32"], rounding_mode=modes, **EXACT_DIVISION)
    smoke += paired(
        tensor_mode, pairs[1:2], dtype=["float16", "bfloat16", "int32"], rounding_mode=["floor"], **EXACT_DIVISION
    )
    smoke += paired(tensor_mode, pairs[1:2], dtype=["float32"], rounding_mode=[None], **DENOMINATOR_AWAY)
    smoke += grid(
        scalar_mode,
        shape=[[4, 17]],
        dtype=["float32"],
        scalar=[3.0, -2.0],
        rounding_mode=modes,
        integral=[True],
        range=[[-20, 20]],
    )
    public += paired(
        tensor_mode,
        (PUBLIC_INPLACE_PAIRS if inplace else PUBLIC_PAIRS)[2:],
        dtype=FLOAT_DTYPES + INT_DTYPES,
        rounding_mode=modes,
        **EXACT_DIVISION,
    )
    public += grid(
        scalar_mode,
        shape=[list(s) for s in PUBLIC_SHAPES[2:]],
        dtype=FLOAT_DTYPES,
        scalar=[3.0, -2.0],
        rounding_mode=modes,
        integral=[True],
        range=[[-20, 20]],
    )
    return pointwise_record(
        name,
        description,
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes=prompt_notes,
        departures="Rounded division ('trunc', 'floor') is tested on integer-valued inputs, where every correct "
        "algorithm gives the same integer; random reals would make a quotient within one rounding of an "
        "integer, where torch's fmod-based floor and a plain floor(a / b) legitimately differ.",
        exact_formula=in_float64(_exact_division),
        exact_formula_why=QUOTIENT_AT_A_MULTIPLE,
    )


def power() -> OperatorSpec:
    overloads = [
        overload("pow.Tensor_Tensor(self: Tensor, exponent: Tensor) -> Tensor", args="self other"),
        overload("pow.Tensor_Scalar(self: Tensor, exponent: Scalar) -> Tensor", args="self scalar"),
        overload("pow.Scalar(self: Scalar, exponent: Tensor) -> Tensor", args="scalar self"),
    ]
    positive_base = {"range": [[0.5, 2.0]], "other_range": [[-2.0, 2.0]]}
    smoke, public = binary_cases("pow_Tensor_Tensor", dtypes=FLOAT_DTYPES, draw=positive_base)
    more = scalar_cases(
        "pow_Tensor_Scalar", dtypes=FLOAT_DTYPES, scalars=(2, 0.5, -1.5, 3), draw={"range": [[0.5, 2.0]]}
    )
    smoke, public = smoke + more[0], public + more[1]
    # Integer exponents of negative bases are defined (and signed).
    smoke += grid("pow_Tensor_Scalar", shape=[[4, 17]], dtype=["float32"], scalar=[2, 3], range=[[-2.0, 2.0]])
    public += grid("pow_Tensor_Scalar", shape=[[1024, 1024]], dtype=FLOAT_DTYPES, scalar=[2, 3], range=[[-2.0, 2.0]])
    more = scalar_cases("pow_Scalar", dtypes=FLOAT_DTYPES, scalars=(2.0, 0.5, 10.0))
    smoke, public = smoke + more[0], public + more[1]
    return pointwise_record(
        "pow",
        "Element-wise power: tensor ** tensor (broadcast), tensor ** scalar, scalar ** tensor.",
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes="pow.Scalar takes the scalar base first: pow_Scalar(self: Scalar, exponent: Tensor). The "
        "result dtype is the tensor's float dtype; compute in float32 for float16/bfloat16. Negative "
        "bases occur only with integer exponents, where the result keeps the sign of base**n.",
    )


def logit() -> OperatorSpec:
    overloads = [overload("logit(self: Tensor, eps: float | None = None) -> Tensor", args="self", kwargs="eps")]
    inside = [[0.02, 0.98]]
    smoke = grid("logit", shape=[list(s) for s in SMOKE_SHAPES], dtype=FLOAT_DTYPES, range=inside)
    smoke += grid("logit", shape=[[4, 17]], dtype=["float32"], layout=["transposed", "strided"], range=inside)
    smoke += grid("logit", shape=[[33]], dtype=["float32"], eps=[1e-6, 0.05], range=[[0.0, 1.0]])
    public = grid("logit", shape=[list(s) for s in PUBLIC_SHAPES], dtype=FLOAT_DTYPES, range=inside)
    public += grid("logit", shape=[[1024, 1024]], dtype=FLOAT_DTYPES, eps=[1e-6, 0.05], range=[[0.0, 1.0]])
    return pointwise_record(
        "logit",
        "Element-wise log(p / (1 - p)), with optional clamping of p to [eps, 1 - eps].",
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes="eps=None: no clamping (inputs lie inside (0, 1)); otherwise p is clamped to [eps, 1 - eps] "
        "before log(p / (1 - p)).",
        half_in_float32=True,  # ATen's CPU logit rounds each step in half
    )


def polygamma() -> OperatorSpec:
    overloads = [overload("polygamma(n: int, self: Tensor) -> Tensor", args="n self")]
    positive = [[0.5, 4.0]]
    smoke = grid("polygamma", shape=[[33], [4, 17], []], dtype=["float32"], n=[0, 1, 2], range=positive)
    smoke += grid("polygamma", shape=[[2, 3, 5]], dtype=["float16", "bfloat16"], n=[1], range=positive)
    smoke += grid("polygamma", shape=[[4, 17]], dtype=["float32"], layout=["transposed"], n=[2], range=positive)
    public = grid("polygamma", shape=[list(s) for s in PUBLIC_SHAPES], dtype=FLOAT_DTYPES, n=[0, 1, 2], range=positive)
    return pointwise_record(
        "polygamma",
        "Element-wise n-th derivative of the digamma function, n in {0, 1, 2}.",
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes="n comes first. n=0 is digamma; inputs are positive (0.5 to 4), away from the poles.",
    )


def masked_fill() -> OperatorSpec:
    overloads = [
        overload(
            "masked_fill_.Scalar(self: Tensor(a!), mask: Tensor, value: Scalar) -> Tensor(a!)", args="self mask value"
        ),
        overload(
            "masked_fill_.Tensor(self: Tensor(a!), mask: Tensor, value: Tensor) -> Tensor(a!)",
            args="self mask value_tensor",
        ),
    ]
    smoke: tuple[Case, ...] = ()
    public: tuple[Case, ...] = ()
    for entry in ("masked_fill__Scalar", "masked_fill__Tensor"):
        smoke += paired(entry, SMOKE_INPLACE_PAIRS, "mask_", dtype=["float32"], value=[-0.999])
        smoke += paired(entry, SMOKE_INPLACE_PAIRS[1:2], "mask_", dtype=["float16", "bfloat16"], value=[100.001])
        smoke += paired(entry, SMOKE_INPLACE_PAIRS[1:2], "mask_", dtype=["int32"], value=[7])
        smoke += paired(
            entry,
            SMOKE_INPLACE_PAIRS[1:2],
            "mask_",
            dtype=["float32"],
            layout=["transposed"],
            mask_layout=["strided"],
            value=[0.001],
        )
        public += paired(entry, PUBLIC_INPLACE_PAIRS, "mask_", dtype=FLOAT_DTYPES, value=list(SCALARS))
        public += paired(entry, PUBLIC_INPLACE_PAIRS[2:4], "mask_", dtype=INT_DTYPES, value=[7])
    return pointwise_record(
        "masked_fill_",
        "In place: self[mask] = value, the bool mask broadcast to self's shape.",
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes="Mutates and returns self. mask is bool and broadcasts to self. value is a Python number "
        "(.Scalar) or a 0-dim tensor (.Tensor), cast to self's dtype.",
    )


def fill() -> OperatorSpec:
    overloads = [
        overload("fill_.Scalar(self: Tensor(a!), value: Scalar) -> Tensor(a!)", args="self value"),
        overload("fill_.Tensor(self: Tensor(a!), value: Tensor) -> Tensor(a!)", args="self value_tensor"),
    ]
    smoke: tuple[Case, ...] = ()
    public: tuple[Case, ...] = ()
    for entry in ("fill__Scalar", "fill__Tensor"):
        smoke += grid(entry, shape=[list(s) for s in SMOKE_SHAPES], dtype=["float32"], value=[-0.999])
        smoke += grid(entry, shape=[[4, 17]], dtype=["float16", "bfloat16"], value=[100.001])
        smoke += grid(entry, shape=[[4, 17]], dtype=["int32"], value=[7])
        smoke += grid(entry, shape=[[4, 17]], dtype=["float32"], layout=["transposed", "strided"], value=[0.001])
        public += grid(entry, shape=[list(s) for s in PUBLIC_SHAPES], dtype=FLOAT_DTYPES, value=list(SCALARS))
        public += grid(entry, shape=[[1024, 1024]], dtype=INT_DTYPES, layout=["contiguous", "transposed"], value=[7])
    return pointwise_record(
        "fill_",
        "In place: every element of self becomes value.",
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes="Mutates and returns self, whatever its strides (transposed and strided views are written "
        "through). value is a Python number (.Scalar) or a 0-dim tensor (.Tensor), cast to self's dtype.",
    )


def zero() -> OperatorSpec:
    overloads = [overload("zero_(self: Tensor(a!)) -> Tensor(a!)", args="self")]
    smoke = grid("zero_", shape=[list(s) for s in SMOKE_SHAPES], dtype=["float32"])
    smoke += grid("zero_", shape=[[4, 17]], dtype=["float16", "bfloat16", "int32", "int64"])
    smoke += grid("zero_", shape=[[4, 17]], dtype=["float32"], layout=["transposed", "strided"])
    public = grid("zero_", shape=[list(s) for s in PUBLIC_SHAPES], dtype=FLOAT_DTYPES)
    public += grid("zero_", shape=[[1024, 1024]], dtype=INT_DTYPES, layout=["contiguous", "transposed", "strided"])
    return pointwise_record(
        "zero_",
        "In place: every element of self becomes 0.",
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes="Mutates and returns self, written through its strides.",
    )


# Comparisons on small integer-valued data: ties happen, so eq is not all-False and gt/le meet their boundary.
TIES = {"integral": [True], "other_integral": [True], "range": [[-3, 3]]}
# Mid-range scalars: over 30+ elements, an all-True (or all-False) result is vanishingly rare.
TIE_SCALARS = (0.0, 1.0, -1.0)
COMPARISON_NOTES = "Returns a bool tensor of the broadcast shape; compare after type promotion of the two sides."
# self + alpha * other with alpha > 0 (resp. - and reversed): same-sign terms, never a difference near 0.
NO_CANCELLATION = {
    "add": {"range": [[0.5, 2.0]], "other_range": [[0.5, 2.0]]},
    "sub": {"range": [[0.5, 2.0]], "other_range": [[-2.0, -0.5]]},
    "rsub": {"range": [[-2.0, -0.5]], "other_range": [[0.5, 2.0]]},
}
TYPE_PROMOTION = (
    "Tensor and Tensor of the same dtype keep it; a Python scalar does not change a float tensor's "
    "dtype; broadcasting follows torch's rules (trailing dimensions, size-1 expands)."
)

OPERATORS: list[OperatorSpec] = [
    unary_pointwise("cos", "Element-wise cosine of a floating-point tensor."),
    unary_pointwise("acosh", "Element-wise inverse hyperbolic cosine (inputs >= 1).", value_range=(1.0, 5.0)),
    binary_pointwise(
        "add",
        "Element-wise self + alpha * other, with broadcasting or a scalar other.",
        alpha=True,
        smoke_half_draw=NO_CANCELLATION["add"],
        int_dtypes=INT_DTYPES,
        prompt_notes="out = self + alpha * other. " + TYPE_PROMOTION,
    ),
    binary_pointwise(
        "add_",
        "In place: self += alpha * other (other broadcast to self, or a scalar).",
        alpha=True,
        smoke_half_draw=NO_CANCELLATION["add"],
        int_dtypes=INT_DTYPES,
        prompt_notes="Mutates and returns self; other broadcasts to self's shape.",
    ),
    unary_pointwise("asin", "Element-wise arcsine (inputs in (-1, 1)).", value_range=(-0.95, 0.95)),
    # Below 90: ~x of a uint8 never equals the judge's 0xA5 poison.
    unary_pointwise(
        "bitwise_not",
        "Element-wise bitwise NOT of an integer or bool tensor.",
        value_range=(0, 90),
        dtypes=("int32", "int64", "bool", "uint8"),
        prompt_notes="Integer dtypes: ~x; bool: logical not. The dtype is kept.",
    ),
    unary_pointwise("cosh", "Element-wise hyperbolic cosine.", value_range=(-4.0, 4.0)),
    division(
        "div",
        "Element-wise self / other, optionally rounded ('trunc' or 'floor').",
        prompt_notes="True division promotes integer inputs to float32. rounding_mode None: true division; "
        "'trunc': round toward zero; 'floor': round down (Python //), integer dtype kept. " + TYPE_PROMOTION,
    ),
    division(
        "div_",
        "In place: self /= other, optionally rounded ('trunc' or 'floor').",
        prompt_notes="Mutates and returns self; other broadcasts to self's shape. rounding_mode as for div.",
    ),
    binary_pointwise(
        "eq",
        "Element-wise self == other (bool result).",
        int_dtypes=INT_DTYPES,
        draw=TIES,
        scalars=TIE_SCALARS,
        wide=True,
        prompt_notes=COMPARISON_NOTES,
    ),
    unary_pointwise("erfc", "Element-wise complementary error function 1 - erf(x).", value_range=(-3.0, 3.0)),
    unary_pointwise("floor", "Element-wise floor.", value_range=(-100.0, 100.0)),
    binary_pointwise(
        "floor_divide",
        "Element-wise floor(self / other) (Python //).",
        tensor_overload="",
        int_dtypes=INT_DTYPES,
        draw=EXACT_DIVISION,
        scalars=(3.0, -2.0, 0.7, -0.999),
        prompt_notes="Rounds the quotient down (toward -inf), like div(rounding_mode='floor'); integer "
        "dtypes stay integer.",
        exact_formula=in_float64(lambda self, other: torch.floor(self / other)),
        exact_formula_why=QUOTIENT_AT_A_MULTIPLE,
    ),
    binary_pointwise(
        "fmax",
        "Element-wise maximum that ignores NaN (NaN only where both are NaN).",
        tensor_overload="",
        scalar_overload="",
        draw={"nan_fraction": [0.1]},
        allow_nan=True,
        prompt_notes="Unlike maximum, a NaN on one side yields the other side; NaN only if both are.",
    ),
    binary_pointwise(
        "gt",
        "Element-wise self > other (bool result).",
        int_dtypes=INT_DTYPES,
        draw=TIES,
        scalars=TIE_SCALARS,
        wide=True,
        prompt_notes=COMPARISON_NOTES,
    ),
    unary_pointwise("hardsigmoid", "Element-wise hardsigmoid: clamp(x / 6 + 1 / 2, 0, 1).", value_range=(-4.0, 4.0)),
    binary_pointwise(
        "heaviside",
        "Element-wise step: 0 for self < 0, values where self == 0, 1 for self > 0.",
        tensor_overload="",
        scalar_overload="",
        other_name="values",
        draw={"integral": [True], "range": [[-2, 3]], "other_range": [[-2.0, 2.0]]},
        prompt_notes="Where self == 0 the result is values (broadcast); self holds many exact zeros.",
    ),
    unary_pointwise("i0", "Element-wise modified Bessel function of the first kind, order 0.", value_range=(-4.0, 4.0)),
    binary_pointwise(
        "le",
        "Element-wise self <= other (bool result).",
        int_dtypes=INT_DTYPES,
        draw=TIES,
        scalars=TIE_SCALARS,
        wide=True,
        prompt_notes=COMPARISON_NOTES,
    ),
    unary_pointwise("log10", "Element-wise base-10 logarithm (inputs > 0).", value_range=(0.05, 50.0)),
    binary_pointwise(
        "logaddexp2",
        "Element-wise log2(2**self + 2**other), computed without overflow.",
        tensor_overload="",
        scalar_overload="",
        draw={"range": [[-10.0, 10.0]]},
    ),
    logit(),
    unary_pointwise("mish", "Element-wise mish: x * tanh(softplus(x)).", value_range=(-4.0, 4.0)),
    binary_pointwise(
        "mul",
        "Element-wise self * other, with broadcasting or a scalar other.",
        int_dtypes=INT_DTYPES,
        prompt_notes=TYPE_PROMOTION,
    ),
    unary_pointwise("neg", "Element-wise negation.", dtypes=FLOAT_DTYPES + INT_DTYPES),
    polygamma(),
    power(),
    unary_pointwise("rsqrt", "Element-wise 1 / sqrt(x) (inputs > 0).", value_range=(0.1, 10.0)),
    binary_pointwise(
        "rsub",
        "Element-wise other - alpha * self (reversed subtraction).",
        alpha=True,
        smoke_half_draw=NO_CANCELLATION["rsub"],
        int_dtypes=INT_DTYPES,
        prompt_notes="out = other - alpha * self (note the order). " + TYPE_PROMOTION,
    ),
    unary_pointwise(
        "sgn", "Element-wise sign (-1, 0 or 1; for real tensors the same as sign).", dtypes=FLOAT_DTYPES + ("int32",)
    ),
    unary_pointwise("silu", "Element-wise SiLU: x * sigmoid(x).", value_range=(-4.0, 4.0)),
    unary_pointwise("sin", "Element-wise sine of a floating-point tensor."),
    unary_pointwise(
        "special_entr", "Element-wise entropy term: -x * ln(x) for x > 0, 0 at 0, -inf below.", value_range=(0.0, 3.0)
    ),
    unary_pointwise("square", "Element-wise x * x.", dtypes=FLOAT_DTYPES + ("int32",)),
    binary_pointwise(
        "sub",
        "Element-wise self - alpha * other, with broadcasting or a scalar other.",
        alpha=True,
        smoke_half_draw=NO_CANCELLATION["sub"],
        int_dtypes=INT_DTYPES,
        prompt_notes="out = self - alpha * other. " + TYPE_PROMOTION,
    ),
    masked_fill(),
    fill(),
    zero(),
]

"""ATen creation operators (arange, full, zeros, *_like, empty_strided, ...) and the scalar readers item /
_local_scalar_dense."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import torch

from evaluation.catalog.aten._build import (
    CPU,
    DEVICE_NOTE,
    FLOAT_DTYPES,
    case,
    draw_shape,
    entry,
    itemsize,
    numel,
    record,
    tensor,
)
from evaluation.catalog.spec import Call, Case, OperatorSpec, dtype_of

ALL_DTYPES = (*FLOAT_DTYPES, "int64", "int32", "bool")
SMOKE_SIZES = ([1], [33], [4, 17], [2, 3, 5])
PUBLIC_SIZES = ([1], [1024, 1024], [20, 320, 15], [16, 128, 64, 60])


def _out_bytes(case_: Case) -> int:
    params = case_.params
    return numel(params.get("size", params.get("shape", []))) * itemsize(params["dtype"])


def _factory_kwargs(params: dict) -> dict:
    return {"dtype": dtype_of(params["dtype"]), "device": CPU}


# --- arange -------------------------------------------------------------------------------------------------


def _arange_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    kwargs = _factory_kwargs(params)
    if case_.entry_point == "arange":
        return Call([params["end"]], kwargs)
    if case_.entry_point == "arange_start":
        return Call([params["start"], params["end"]], kwargs)
    return Call([params["start"], params["end"], params["step"]], kwargs)


def _arange_length(params: dict) -> int:
    start, step = params.get("start", 0), params.get("step", 1)
    return max(0, math.ceil((params["end"] - start) / step))


def _arange_held_out(rng: random.Random) -> list[Case]:
    cases = []
    for _ in range(4):
        start = rng.randint(-1000, 1000)
        step = rng.choice([1, 2, 3, 7])
        count = rng.randint(1, 3_000_000)
        cases.append(
            case(
                "arange_start_step",
                start=start,
                end=start + step * count,
                step=step,
                dtype=rng.choice(["int64", "int32", "float32"]),
            )
        )
    cases.append(case("arange", end=rng.randint(1, 2_000_000), dtype="int64"))
    cases.append(
        case("arange_start_step", start=rng.uniform(-5, 5), end=rng.uniform(6, 60), step=0.25, dtype="float32")
    )
    return cases


ARANGE = record(
    "arange",
    "A 1-D tensor of values from start (default 0) up to but excluding end, spaced by step.",
    [
        entry(
            "aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
            "bool? pin_memory=None) -> Tensor"
        ),
        entry(
            "aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, "
            "Device? device=None, bool? pin_memory=None) -> Tensor"
        ),
        entry(
            "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, "
            "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"
        ),
    ],
    make_inputs=_arange_inputs,
    smoke=(
        case("arange", end=17, dtype="int64"),
        case("arange", end=33, dtype="float32"),
        case("arange_start", start=-5, end=12, dtype="int32"),
        case("arange_start_step", start=0.5, end=10.0, step=0.25, dtype="float32"),
        case("arange_start_step", start=-3, end=50, step=2, dtype="int64"),
        case("arange_start_step", start=1, end=40, step=3, dtype="float16"),
    ),
    public=(
        case("arange", end=1, dtype="int64"),
        case("arange", end=1024 * 1024, dtype="int64"),
        case("arange", end=4096, dtype="float32"),
        case("arange", end=2048, dtype="float16"),
        case("arange", end=256, dtype="bfloat16"),
        case("arange_start", start=-100, end=1_000_000, dtype="int32"),
        case("arange_start_step", start=0, end=1_000_000, step=3, dtype="int64"),
        case("arange_start_step", start=-1.5, end=100.0, step=0.125, dtype="float32"),
    ),
    held_out=_arange_held_out,
    bytes_moved=lambda c: _arange_length(c.params) * itemsize(c.params["dtype"]),
    prompt_notes=DEVICE_NOTE + " The length is ceil((end - start) / step); element i is start + i * step "
    "computed in the result dtype's accumulate type (double for floating results).",
)


# --- full / zeros / empty_strided / scalar_tensor ------------------------------------------------------------


def _size_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    args: list = [list(params["size"])]
    if "stride" in params:
        args.append(list(params["stride"]))
    if "fill_value" in params:
        args.append(params["fill_value"])
    return Call(args, _factory_kwargs(params))


def _size_held_out(extra: dict) -> Callable[[random.Random], list[Case]]:
    def draw(rng: random.Random) -> list[Case]:
        return [
            case(
                extra["entry"],
                size=draw_shape(rng),
                dtype=rng.choice(ALL_DTYPES),
                **{k: v for k, v in extra.items() if k != "entry"},
            )
            for _ in range(5)
        ]

    return draw


FULL = record(
    "full",
    "A tensor of the given size filled with fill_value.",
    [
        entry(
            "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, "
            "Device? device=None, bool? pin_memory=None) -> Tensor"
        )
    ],
    make_inputs=_size_inputs,
    smoke=tuple(
        case("full", size=s, fill_value=v, dtype=d)
        for s in SMOKE_SIZES[1:]
        for v, d in ((0.001, "float32"), (-111.999, "float16"), (3, "int64"), (100.001, "bfloat16"))
    ),
    public=tuple(
        case("full", size=s, fill_value=v, dtype=d)
        for s in [[], *PUBLIC_SIZES]
        for v, d in ((0.001, "float32"), (-0.999, "float16"), (100.001, "bfloat16"), (7, "int32"), (True, "bool"))
    ),
    held_out=lambda rng: [
        case("full", size=draw_shape(rng), fill_value=round(rng.uniform(-100, 100), 3), dtype=rng.choice(FLOAT_DTYPES))
        for _ in range(5)
    ],
    bytes_moved=_out_bytes,
    prompt_notes=DEVICE_NOTE,
)

ZEROS = record(
    "zeros",
    "A tensor of the given size filled with zeros.",
    [
        entry(
            "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
            "bool? pin_memory=None) -> Tensor"
        )
    ],
    make_inputs=_size_inputs,
    smoke=tuple(case("zeros", size=s, dtype=d) for s in SMOKE_SIZES for d in ("float32", "float16", "int64")),
    public=tuple(case("zeros", size=s, dtype=d) for s in [[], *PUBLIC_SIZES] for d in ALL_DTYPES),
    held_out=_size_held_out({"entry": "zeros"}),
    bytes_moved=_out_bytes,
    prompt_notes=DEVICE_NOTE,
)

EMPTY_STRIDED = record(
    "empty_strided",
    "An uninitialised tensor with the given size and strides.",
    [
        entry(
            "aten::empty_strided(SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, Layout? layout=None, "
            "Device? device=None, bool? pin_memory=None) -> Tensor"
        )
    ],
    make_inputs=_size_inputs,
    smoke=(
        case("empty_strided", size=[4, 17], stride=[17, 1], dtype="float32", timed=False),
        case("empty_strided", size=[4, 17], stride=[1, 4], dtype="float16", timed=False),
        case("empty_strided", size=[2, 3, 5], stride=[30, 10, 2], dtype="int64", timed=False),
        case("empty_strided", size=[3, 0], stride=[1, 1], dtype="bfloat16", timed=False),
    ),
    public=(
        case("empty_strided", size=[1024, 1024], stride=[1024, 1], dtype="float32", timed=False),
        case("empty_strided", size=[1024, 1024], stride=[1, 1024], dtype="float16", timed=False),
        case("empty_strided", size=[20, 320, 15], stride=[1, 20, 6400], dtype="bfloat16", timed=False),
        case("empty_strided", size=[16, 128, 64], stride=[16384, 128, 2], dtype="int32", timed=False),
    ),
    held_out=lambda rng: [
        case(
            "empty_strided",
            size=[rng.randint(1, 500), rng.randint(1, 500)],
            stride=[1, rng.randint(500, 600)],
            dtype=rng.choice(ALL_DTYPES),
            timed=False,
        )
        for _ in range(3)
    ],
    judgement="metadata",
    judgement_notes="Contents are uninitialised: only shape, stride, dtype and device are compared. Not timed "
    "(allocation only).",
    prompt_notes=DEVICE_NOTE + " The strides of the result must be exactly `stride`.",
)

SCALAR_TENSOR = record(
    "scalar_tensor",
    "A 0-dimensional tensor holding the scalar s.",
    [
        entry(
            "aten::scalar_tensor(Scalar s, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
            "bool? pin_memory=None) -> Tensor"
        )
    ],
    make_inputs=lambda c, g: Call([c.params["s"]], _factory_kwargs(c.params)),
    smoke=tuple(
        case("scalar_tensor", s=s, dtype=d, timed=False)
        for s, d in ((0.001, "float32"), (-111.999, "float16"), (3, "int64"), (1, "bool"))
    ),
    public=tuple(
        case("scalar_tensor", s=s, dtype=d, timed=False)
        for s in (0.001, -0.999, 100.001, -111.999)
        for d in FLOAT_DTYPES
    ),
    held_out=lambda rng: [
        case("scalar_tensor", s=round(rng.uniform(-1e3, 1e3), 4), dtype=rng.choice(FLOAT_DTYPES), timed=False)
        for _ in range(3)
    ],
    judgement_notes="Value compared after rounding to the result dtype. Not timed (one element).",
    prompt_notes=DEVICE_NOTE + " The result has shape ().",
)


# --- *_like and new_* -------------------------------------------------------------------------------------


def _like_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    source = tensor(params, generator, dtype=params.get("self_dtype", params["dtype"]))
    if case_.entry_point in ("new_ones", "new_empty_strided"):
        args = [source, list(params["size"])]
        if "stride" in params:
            args.append(list(params["stride"]))
        kwargs = {"dtype": dtype_of(params["dtype"])} if params.get("self_dtype") else {}
        return Call(args, kwargs)
    kwargs = {"dtype": dtype_of(params["dtype"])} if params.get("self_dtype") else {}
    return Call([source], kwargs)


def _like_cases(name: str, shapes, dtypes, timed: bool = True) -> tuple[Case, ...]:
    cases = [case(name, shape=s, dtype=d, timed=timed) for s in shapes for d in dtypes]
    cases += [
        case(name, shape=shapes[-1], dtype="float32", layout=lay, timed=timed) for lay in ("transposed", "strided")
    ]
    cases.append(case(name, shape=shapes[-1], dtype="int64", self_dtype="float16", timed=timed))
    return tuple(cases)


def _like_record(name: str, description: str, schema: str) -> OperatorSpec:
    return record(
        name,
        description,
        [entry(schema)],
        make_inputs=_like_inputs,
        smoke=_like_cases(name, [[1], [33], [4, 17]], ("float32", "float16")),
        public=_like_cases(name, [[], [1024, 1024], [20, 320, 15], [16, 128, 64, 60]], FLOAT_DTYPES),
        held_out=lambda rng: [
            case(
                name,
                shape=draw_shape(rng),
                dtype=rng.choice(FLOAT_DTYPES),
                layout=rng.choice(["contiguous", "transposed", "strided"]),
            )
            for _ in range(4)
        ],
        bytes_moved=_out_bytes,
        judgement_notes="Values, shape and dtype compared; strides of the result are not (preserve_format may "
        "give a dense copy).",
        prompt_notes="Result on self's device with self's dtype unless `dtype=` is given (the call passes it "
        "only when it differs).",
    )


ONES_LIKE = _like_record(
    "ones_like",
    "A tensor of ones with the size (and by default dtype and device) of self.",
    "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
)
ZEROS_LIKE = _like_record(
    "zeros_like",
    "A tensor of zeros with the size (and by default dtype and device) of self.",
    "aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
)

NEW_ONES = record(
    "new_ones",
    "A tensor of ones of the given size, with self's dtype and device unless dtype= is given.",
    [
        entry(
            "aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
            "Device? device=None, bool? pin_memory=None) -> Tensor"
        )
    ],
    make_inputs=_like_inputs,
    smoke=tuple(case("new_ones", shape=[3], size=s, dtype=d) for s in SMOKE_SIZES for d in ("float32", "int64"))
    + (case("new_ones", shape=[3], size=[4, 17], dtype="float16", self_dtype="float32"),),
    public=tuple(case("new_ones", shape=[3], size=s, dtype=d) for s in [[], *PUBLIC_SIZES] for d in FLOAT_DTYPES)
    + (case("new_ones", shape=[3], size=[1024, 1024], dtype="int32", self_dtype="float32"),),
    held_out=lambda rng: [
        case("new_ones", shape=[2], size=draw_shape(rng), dtype=rng.choice(FLOAT_DTYPES)) for _ in range(4)
    ],
    bytes_moved=_out_bytes,
    prompt_notes="`self` only supplies the default dtype and device; its values are irrelevant.",
)

NEW_EMPTY_STRIDED = record(
    "new_empty_strided",
    "An uninitialised tensor of the given size and strides, with self's dtype and device.",
    [
        entry(
            "aten::new_empty_strided(Tensor self, SymInt[] size, SymInt[] stride, *, ScalarType? dtype=None, "
            "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"
        )
    ],
    make_inputs=_like_inputs,
    smoke=(
        case("new_empty_strided", shape=[3], size=[4, 17], stride=[17, 1], dtype="float32", timed=False),
        case("new_empty_strided", shape=[3], size=[4, 17], stride=[1, 4], dtype="float16", timed=False),
        case(
            "new_empty_strided",
            shape=[3],
            size=[2, 3, 5],
            stride=[30, 10, 2],
            dtype="int64",
            self_dtype="float32",
            timed=False,
        ),
    ),
    public=(
        case("new_empty_strided", shape=[3], size=[1024, 1024], stride=[1, 1024], dtype="float32", timed=False),
        case("new_empty_strided", shape=[3], size=[20, 320, 15], stride=[1, 20, 6400], dtype="bfloat16", timed=False),
    ),
    held_out=lambda rng: [
        case(
            "new_empty_strided",
            shape=[2],
            size=[rng.randint(1, 500), rng.randint(1, 500)],
            stride=[1, rng.randint(500, 600)],
            dtype=rng.choice(FLOAT_DTYPES),
            timed=False,
        )
        for _ in range(3)
    ],
    judgement="metadata",
    judgement_notes="Contents are uninitialised: only shape, stride, dtype and device are compared. Not timed.",
    prompt_notes="The strides of the result must be exactly `stride`; dtype and device default to self's.",
)


# --- item / _local_scalar_dense -------------------------------------------------------------------------------

SCALAR_READER_NOTES = (
    "Returns a Python scalar (float for floating, int for integer, bool for bool tensors): the judge compares "
    "its Python type exactly and its value with the input dtype's tolerance (integers and bool exactly). "
    "Not timed: the read itself is a device-to-host copy whose cost is the synchronisation, not a kernel."
)


def _scalar_reader(name: str, description: str, schema: str) -> OperatorSpec:
    def make_inputs(case_: Case, generator: torch.Generator) -> Call:
        params = case_.params
        return Call([tensor(params, generator, low=-100.0, high=100.0, away_from_zero=0.5)])

    return record(
        name,
        description,
        [entry(schema)],
        make_inputs=make_inputs,
        smoke=tuple(
            case(name, shape=s, dtype=d, timed=False) for s in ([], [1], [1, 1]) for d in ("float32", "int64", "bool")
        ),
        public=tuple(
            case(name, shape=s, dtype=d, timed=False)
            for s in ([], [1, 1, 1])
            for d in (*FLOAT_DTYPES, "int64", "int32", "bool")
        ),
        held_out=lambda rng: [
            case(name, shape=[1] * rng.randint(0, 4), dtype=rng.choice(FLOAT_DTYPES), timed=False) for _ in range(3)
        ],
        judgement_notes=SCALAR_READER_NOTES,
        prompt_notes="self has exactly one element; return its value as a Python scalar.",
    )


ITEM = _scalar_reader(
    "item", "The value of a one-element tensor as a Python scalar.", "aten::item(Tensor self) -> Scalar"
)
LOCAL_SCALAR_DENSE = _scalar_reader(
    "_local_scalar_dense",
    "The value of a one-element tensor as a Python scalar (item's kernel).",
    "aten::_local_scalar_dense(Tensor self) -> Scalar",
)

OPERATORS: list[OperatorSpec] = [
    ARANGE,
    EMPTY_STRIDED,
    FULL,
    NEW_EMPTY_STRIDED,
    NEW_ONES,
    ONES_LIKE,
    SCALAR_TENSOR,
    ZEROS,
    ZEROS_LIKE,
    LOCAL_SCALAR_DENSE,
    ITEM,
]

"""ATen view and shape operators (as_strided, expand, narrow, reshape, select, t, unsqueeze, splits) and the
copying shape ops (rot90, cat, stack, diff)."""

from __future__ import annotations

import random

import torch

from evaluation.catalog.aten._build import FLOAT_DTYPES, case, draw_shape, entry, itemsize, numel, record, tensor
from evaluation.catalog.spec import Call, Case, OperatorSpec

VIEW_NOTES = (
    "Pure view: values, shape and dtype are compared (a copy with the right values passes too). Not "
    "timed: the reference only builds metadata, so a speedup would mean nothing."
)
LAYOUTS3 = ("contiguous", "transposed", "strided")


def _self_only(extra_args: list[str]):
    """make_inputs for ops called as ``op(self, *params[extra_args])``."""

    def make_inputs(case_: Case, generator: torch.Generator) -> Call:
        params = case_.params
        return Call([tensor(params, generator), *(params[key] for key in extra_args)])

    return make_inputs


def _view_record(name: str, description: str, schemas, extra_args, smoke, public, held_out, **fields) -> OperatorSpec:
    return record(
        name,
        description,
        schemas,
        make_inputs=_self_only(extra_args),
        smoke=smoke,
        public=public,
        held_out=held_out,
        judgement_notes=fields.pop("judgement_notes", VIEW_NOTES),
        **fields,
    )


def _view(entry_point: str, **params) -> Case:
    return case(entry_point, timed=False, **params)


AS_STRIDED = _view_record(
    "as_strided",
    "A view of self's storage with the given size, stride and storage offset.",
    [
        entry(
            "aten::as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)"
        )
    ],
    ["size", "stride", "storage_offset"],
    smoke=(
        _view("as_strided", shape=[4, 17], dtype="float32", size=[4, 4], stride=[17, 1], storage_offset=0),
        _view("as_strided", shape=[4, 17], dtype="float16", size=[3, 5], stride=[1, 3], storage_offset=2),
        _view("as_strided", shape=[33], dtype="float32", size=[5, 5], stride=[5, 1], storage_offset=8),
        _view("as_strided", shape=[2, 3, 5], dtype="bfloat16", size=[2, 2, 2], stride=[15, 5, 1], storage_offset=None),
    ),
    public=tuple(
        _view("as_strided", shape=[1024, 1024], dtype=d, size=size, stride=stride, storage_offset=off)
        for d in FLOAT_DTYPES
        for size, stride, off in (
            ([512, 512], [1024, 2], 0),
            ([1000, 1000], [1, 1024], 17),
            ([64, 64, 64], [4096, 64, 1], 1000),
        )
    ),
    held_out=lambda rng: [
        _view(
            "as_strided",
            shape=[rng.randint(200, 600), 1000],
            dtype=rng.choice(FLOAT_DTYPES),
            size=[rng.randint(1, 100), rng.randint(1, 100)],
            stride=[rng.randint(1, 500), rng.randint(1, 500)],
            storage_offset=rng.randint(0, 1000),
        )
        for _ in range(4)
    ],
    prompt_notes="self is contiguous; size/stride/storage_offset index its storage (offset None means self's).",
)

EXPAND = _view_record(
    "expand",
    "A view of self with size-1 dimensions broadcast to size (-1 keeps a dimension).",
    [entry("aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)")],
    ["size"],
    smoke=(
        _view("expand", shape=[1, 17], dtype="float32", size=[4, 17]),
        _view("expand", shape=[4, 1], dtype="float16", size=[2, 4, 6]),
        _view("expand", shape=[3, 1, 5], dtype="float32", size=[-1, 7, -1], layout="strided"),
    ),
    public=tuple(
        _view("expand", shape=s, dtype=d, size=size)
        for d in FLOAT_DTYPES
        for s, size in (
            ([1, 1024], [1024, 1024]),
            ([20, 1, 15], [20, 320, 15]),
            ([16, 1, 64, 1], [16, 128, 64, 60]),
            ([1], [4096, -1]),
        )
    )
    + (_view("expand", shape=[1024, 1], dtype="float32", size=[1024, 1024], layout="strided"),),
    held_out=lambda rng: [
        _view(
            "expand",
            shape=[rng.randint(1, 300), 1],
            dtype=rng.choice(FLOAT_DTYPES),
            size=[rng.randint(1, 8), -1, rng.randint(1, 300)],
        )
        for _ in range(4)
    ],
)


def _expand_as_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    return Call([tensor(params, generator), tensor(params, generator, shape_key="other_shape")])


def _expand_as_held_out(rng: random.Random) -> list[Case]:
    cases = []
    for _ in range(3):
        rows = rng.randint(1, 300)
        cases.append(
            _view(
                "expand_as",
                shape=[rows, 1],
                other_shape=[rng.randint(1, 8), rows, rng.randint(1, 300)],
                dtype=rng.choice(FLOAT_DTYPES),
            )
        )
    return cases


EXPAND_AS = record(
    "expand_as",
    "self expanded to the size of other.",
    [entry("aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)")],
    make_inputs=_expand_as_inputs,
    smoke=(
        _view("expand_as", shape=[1, 17], other_shape=[4, 17], dtype="float32"),
        _view("expand_as", shape=[4, 1], other_shape=[2, 4, 6], dtype="float16"),
    ),
    public=tuple(
        _view("expand_as", shape=s, other_shape=o, dtype=d)
        for d in FLOAT_DTYPES
        for s, o in (([1, 1024], [1024, 1024]), ([20, 1, 15], [20, 320, 15]))
    ),
    held_out=_expand_as_held_out,
    judgement_notes=VIEW_NOTES,
)


def _narrow_held_out(rng: random.Random) -> list[Case]:
    cases = []
    for _ in range(4):
        shape = draw_shape(rng, rank=(1, 3))
        dim = rng.randrange(len(shape))
        start = rng.randrange(shape[dim])
        cases.append(
            _view(
                "narrow",
                shape=shape,
                dtype=rng.choice(FLOAT_DTYPES),
                layout=rng.choice(LAYOUTS3),
                dim=dim,
                start=start,
                length=rng.randint(0, shape[dim] - start),
            )
        )
    return cases


NARROW = _view_record(
    "narrow",
    "A view of self restricted to [start, start + length) along dim.",
    [entry("aten::narrow(Tensor(a) self, int dim, SymInt start, SymInt length) -> Tensor(a)")],
    ["dim", "start", "length"],
    smoke=(
        _view("narrow", shape=[4, 17], dtype="float32", dim=1, start=3, length=9),
        _view("narrow", shape=[4, 17], dtype="float16", dim=0, start=1, length=2, layout="transposed"),
        _view("narrow", shape=[2, 3, 5], dtype="float32", dim=-1, start=-3, length=2),
    ),
    public=tuple(
        _view("narrow", shape=s, dtype=d, dim=dim, start=st, length=ln, layout=lay)
        for d in FLOAT_DTYPES
        for s, dim, st, ln in (([1024, 1024], 0, 100, 500), ([1024, 1024], 1, 1, 1023), ([20, 320, 15], 2, -5, 5))
        for lay in LAYOUTS3
    ),
    held_out=_narrow_held_out,
    prompt_notes="A negative start counts from the end of dim.",
)


def _reshape_held_out(rng: random.Random) -> list[Case]:
    cases = []
    for _ in range(4):
        a, b, c = rng.randint(1, 100), rng.randint(1, 100), rng.randint(1, 100)
        layout = rng.choice(LAYOUTS3)
        cases.append(
            case(
                "reshape",
                shape=[a, b * c],
                dtype=rng.choice(FLOAT_DTYPES),
                layout=layout,
                target=[a * b, -1],
                timed=layout != "contiguous",
            )
        )
    return cases


RESHAPE = _view_record(
    "reshape",
    "self with a new shape (a view when the strides allow it, else a copy); -1 is inferred.",
    [entry("aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)")],
    ["target"],
    smoke=tuple(
        case("reshape", shape=s, dtype="float32", target=t, layout=lay, timed=lay != "contiguous")
        for s, t in (([4, 18], [8, 9]), ([2, 3, 5], [-1]), ([33], [3, 11]))
        for lay in LAYOUTS3
    )
    + (case("reshape", shape=[4, 18], dtype="float16", target=[3, -1, 2], layout="transposed"),),
    public=tuple(
        case("reshape", shape=s, dtype=d, target=t, layout=lay, timed=lay != "contiguous")
        for d in FLOAT_DTYPES
        for s, t in (([1024, 1024], [-1]), ([20, 320, 15], [6400, 15]), ([16, 128, 64, 60], [2048, 3840]))
        for lay in LAYOUTS3
    ),
    held_out=_reshape_held_out,
    judgement_notes="Values, shape and dtype compared. Timed only where the layout forces a copy "
    "(transposed/strided inputs); contiguous inputs give a free view.",
)

SELECT = _view_record(
    "select",
    "The slice of self at index along dim (that dimension removed).",
    [entry("aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)")],
    ["dim", "index"],
    smoke=(
        _view("select_int", shape=[4, 17], dtype="float32", dim=0, index=2),
        _view("select_int", shape=[4, 17], dtype="float16", dim=1, index=-1, layout="transposed"),
        _view("select_int", shape=[2, 3, 5], dtype="float32", dim=2, index=3, layout="strided"),
    ),
    public=tuple(
        _view("select_int", shape=s, dtype=d, dim=dim, index=i)
        for d in FLOAT_DTYPES
        for s, dim, i in (
            ([1024, 1024], 0, 511),
            ([1024, 1024], 1, -1),
            ([20, 320, 15], 1, 100),
            ([16, 128, 64, 60], 3, 0),
        )
    ),
    held_out=lambda rng: [
        _view("select_int", shape=s, dtype=rng.choice(FLOAT_DTYPES), dim=len(s) - 1, index=rng.randrange(s[-1]))
        for s in (draw_shape(rng, rank=(2, 3)) for _ in range(3))
    ],
    prompt_notes="A negative index counts from the end.",
)

T = _view_record(
    "t",
    "The transpose of a tensor of at most 2 dimensions (0-D and 1-D are returned as they are).",
    [entry("aten::t(Tensor(a) self) -> Tensor(a)")],
    [],
    smoke=tuple(_view("t", shape=s, dtype=d) for s in ([], [17], [4, 17]) for d in ("float32", "float16")),
    public=tuple(
        _view("t", shape=s, dtype=d, layout=lay)
        for s in ([1024, 1024], [4096, 256])
        for d in FLOAT_DTYPES
        for lay in LAYOUTS3
    ),
    held_out=lambda rng: [
        _view("t", shape=draw_shape(rng, rank=(1, 2)), dtype=rng.choice(FLOAT_DTYPES)) for _ in range(3)
    ],
)

UNSQUEEZE = _view_record(
    "unsqueeze",
    "self with a size-1 dimension inserted at dim.",
    [entry("aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)")],
    ["dim"],
    smoke=tuple(_view("unsqueeze", shape=s, dtype="float32", dim=d) for s, d in (([], 0), ([17], -1), ([4, 17], 1))),
    public=tuple(
        _view("unsqueeze", shape=s, dtype=dt, dim=d)
        for dt in FLOAT_DTYPES
        for s, d in (([1024, 1024], 0), ([20, 320, 15], -1), ([16, 128, 64, 60], 2))
    ),
    held_out=lambda rng: [
        _view("unsqueeze", shape=s, dtype=rng.choice(FLOAT_DTYPES), dim=rng.randint(-len(s) - 1, len(s)))
        for s in (draw_shape(rng) for _ in range(3))
    ],
)

SPLIT_NOTES = "Every piece is compared (values, shape, dtype), in order. Not timed: the pieces are views."

UNSAFE_SPLIT = _view_record(
    "unsafe_split",
    "self split into pieces of split_size along dim (the last may be smaller).",
    [entry("aten::unsafe_split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]")],
    ["split_size", "dim"],
    smoke=(
        _view("unsafe_split_Tensor", shape=[4, 17], dtype="float32", split_size=5, dim=1),
        _view("unsafe_split_Tensor", shape=[4, 17], dtype="float16", split_size=2, dim=0),
        _view("unsafe_split_Tensor", shape=[33], dtype="float32", split_size=40, dim=0),
    ),
    public=tuple(
        _view("unsafe_split_Tensor", shape=s, dtype=d, split_size=k, dim=dim)
        for d in FLOAT_DTYPES
        for s, k, dim in (([1024, 1024], 100, 0), ([20, 320, 15], 64, 1), ([16, 128, 64, 60], 7, -1))
    ),
    held_out=lambda rng: [
        _view("unsafe_split_Tensor", shape=s, dtype=rng.choice(FLOAT_DTYPES), split_size=rng.randint(1, s[0]), dim=0)
        for s in (draw_shape(rng, rank=(1, 3)) for _ in range(3))
    ],
    judgement_notes=SPLIT_NOTES,
)

UNSAFE_SPLIT_WITH_SIZES = _view_record(
    "unsafe_split_with_sizes",
    "self split along dim into pieces of the given sizes (which sum to its size).",
    [entry("aten::unsafe_split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]")],
    ["split_sizes", "dim"],
    smoke=(
        _view("unsafe_split_with_sizes", shape=[4, 17], dtype="float32", split_sizes=[5, 0, 12], dim=1),
        _view("unsafe_split_with_sizes", shape=[4, 17], dtype="float16", split_sizes=[1, 3], dim=0),
    ),
    public=tuple(
        _view("unsafe_split_with_sizes", shape=s, dtype=d, split_sizes=k, dim=dim)
        for d in FLOAT_DTYPES
        for s, k, dim in (([1024, 1024], [1, 511, 512], 0), ([20, 320, 15], [300, 20], 1))
    ),
    held_out=lambda rng: [
        _view(
            "unsafe_split_with_sizes", shape=[n, 7], dtype=rng.choice(FLOAT_DTYPES), split_sizes=[cut, n - cut], dim=0
        )
        for n, cut in ((n, rng.randint(0, n)) for n in (rng.randint(1, 4000) for _ in range(3)))
    ],
    judgement_notes=SPLIT_NOTES,
)


def _bytes_in_out(case_: Case) -> int:
    """Read self once, write the same number of elements (copying shape ops)."""
    return 2 * numel(case_.params["shape"]) * itemsize(case_.params["dtype"])


ROT90 = _view_record(
    "rot90",
    "self rotated by 90 degrees k times in the plane of dims (a copy).",
    [entry("aten::rot90(Tensor self, int k=1, int[] dims=[0, 1]) -> Tensor")],
    ["k", "dims"],
    smoke=tuple(
        case("rot90", shape=s, dtype="float32", k=k, dims=dims, layout=lay)
        for s, dims in (([4, 17], [0, 1]), ([2, 3, 5], [2, 0]))
        for k in (1, 2, -1)
        for lay in ("contiguous", "transposed")
    ),
    public=tuple(
        case("rot90", shape=s, dtype=d, k=k, dims=dims)
        for d in FLOAT_DTYPES
        for s, dims in (([1024, 1024], [0, 1]), ([20, 320, 15], [1, 2]), ([16, 128, 64, 60], [3, 2]))
        for k in (1, 2, 3)
    ),
    held_out=lambda rng: [
        case(
            "rot90",
            shape=draw_shape(rng, rank=(2, 3)),
            dtype=rng.choice(FLOAT_DTYPES),
            k=rng.randint(-3, 5),
            dims=[1, 0],
            layout=rng.choice(LAYOUTS3),
        )
        for _ in range(3)
    ],
    judgement_notes="Values, shape and dtype compared.",
    bytes_moved=_bytes_in_out,
    prompt_notes="k may be negative or > 3 (taken modulo 4; k = 0 returns a copy of self).",
)


# --- cat / stack ------------------------------------------------------------------------------------------


def _list_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    tensors = [
        tensor({"shape": shape, "dtype": params["dtype"], "layout": params.get("layout", "contiguous")}, generator)
        for shape in params["shapes"]
    ]
    return Call([tensors, params["dim"]])


def _list_bytes(case_: Case) -> int:
    return 2 * sum(numel(s) for s in case_.params["shapes"]) * itemsize(case_.params["dtype"])


def _cat_held_out(rng: random.Random) -> list[Case]:
    cases = []
    for _ in range(4):
        rows = rng.randint(1, 500)
        shapes = [[rows, rng.randint(0, 2000)] for _ in range(rng.randint(1, 5))]
        cases.append(case("cat", shapes=shapes, dim=1, dtype=rng.choice(FLOAT_DTYPES), layout=rng.choice(LAYOUTS3)))
    return cases


CAT = record(
    "cat",
    "The tensors concatenated along dim (all other sizes equal).",
    [entry("aten::cat(Tensor[] tensors, int dim=0) -> Tensor")],
    make_inputs=_list_inputs,
    smoke=(
        case("cat", shapes=[[4, 17], [2, 17]], dim=0, dtype="float32"),
        case("cat", shapes=[[4, 17], [4, 3], [4, 1]], dim=1, dtype="float16"),
        case("cat", shapes=[[4, 17], [4, 5]], dim=-1, dtype="float32", layout="transposed"),
        case("cat", shapes=[[2, 3, 5], [2, 0, 5], [2, 4, 5]], dim=1, dtype="bfloat16"),
        case("cat", shapes=[[33]], dim=0, dtype="int64"),
    ),
    public=tuple(
        case("cat", shapes=shapes, dim=dim, dtype=d, layout=lay)
        for d in FLOAT_DTYPES
        for shapes, dim in (
            ([[1024, 1024], [1024, 1024]], 0),
            ([[1024, 1024], [1024, 1000], [1024, 1]], 1),
            ([[20, 320, 15]] * 4, 2),
            ([[16, 128, 64, 60], [16, 1, 64, 60]], 1),
        )
        for lay in ("contiguous", "strided")
    ),
    held_out=_cat_held_out,
    bytes_moved=_list_bytes,
    prompt_notes="`tensors` is a Python list; inputs may be non-contiguous; the result is contiguous.",
)

STACK = record(
    "stack",
    "The tensors (all the same shape) stacked along a new dimension dim.",
    [entry("aten::stack(Tensor[] tensors, int dim=0) -> Tensor")],
    make_inputs=_list_inputs,
    smoke=(
        case("stack", shapes=[[4, 17], [4, 17]], dim=0, dtype="float32"),
        case("stack", shapes=[[4, 17]] * 3, dim=2, dtype="float16"),
        case("stack", shapes=[[4, 17]] * 2, dim=-2, dtype="float32", layout="strided"),
        case("stack", shapes=[[33]], dim=1, dtype="int64"),
    ),
    public=tuple(
        case("stack", shapes=shapes, dim=dim, dtype=d, layout=lay)
        for d in FLOAT_DTYPES
        for shapes, dim in (([[1024, 1024]] * 2, 0), ([[1024, 1024]] * 3, 2), ([[20, 320, 15]] * 4, 1))
        for lay in ("contiguous", "transposed")
    ),
    held_out=lambda rng: [
        case("stack", shapes=[s] * rng.randint(1, 6), dim=rng.randint(0, len(s)), dtype=rng.choice(FLOAT_DTYPES))
        for s in (draw_shape(rng, rank=(1, 3), max_numel=500_000) for _ in range(3))
    ],
    bytes_moved=_list_bytes,
    prompt_notes="`tensors` is a Python list; inputs may be non-contiguous; the result is contiguous.",
)


# --- diff ---------------------------------------------------------------------------------------------------


def _diff_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    kwargs = {}
    for key in ("prepend", "append"):
        if key in params:
            kwargs[key] = tensor(params, generator, shape_key=key)
    return Call([tensor(params, generator), params["n"], params["dim"]], kwargs)


def _diff_record() -> OperatorSpec:
    spec_kwargs = dict(
        make_inputs=_diff_inputs,
        smoke=(
            case("diff", shape=[4, 17], dtype="float32", n=1, dim=-1),
            case("diff", shape=[4, 17], dtype="float16", n=2, dim=0, layout="transposed"),
            case("diff", shape=[33], dtype="float32", n=1, dim=0, prepend=[2], append=[3]),
            case("diff", shape=[2, 3, 5], dtype="int64", n=3, dim=2),
            case("diff", shape=[4, 17], dtype="bfloat16", n=1, dim=1, append=[4, 1], layout="strided"),
        ),
        public=tuple(
            case("diff", shape=s, dtype=d, n=n, dim=dim)
            for d in FLOAT_DTYPES
            for s, dim in (([1024, 1024], 1), ([1024, 1024], 0), ([20, 320, 15], 1))
            for n in (1, 2)
        )
        + (
            case(
                "diff",
                shape=[1024, 1024],
                dtype="float32",
                n=1,
                dim=1,
                prepend=[1024, 3],
                append=[1024, 1],
                layout="transposed",
            ),
        ),
        held_out=lambda rng: [
            case(
                "diff",
                shape=s,
                dtype=rng.choice(FLOAT_DTYPES),
                n=rng.randint(1, 3),
                dim=-1,
                layout=rng.choice(LAYOUTS3),
            )
            for s in (draw_shape(rng, rank=(1, 3)) for _ in range(3))
        ],
        bytes_moved=_bytes_in_out,
        judgement_notes="allclose; reduce_dim 1 (differences of neighbours; n <= 3 keeps the error small).",
        prompt_notes="n may exceed 1 (repeated differences); prepend/append have self's shape except along dim.",
    )
    return record(
        "diff",
        "The n-th forward difference along dim, after optionally prepending/appending tensors.",
        [entry("aten::diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor")],
        **spec_kwargs,
    )


DIFF = _diff_record()

OPERATORS: list[OperatorSpec] = [
    AS_STRIDED,
    EXPAND,
    EXPAND_AS,
    NARROW,
    RESHAPE,
    SELECT,
    T,
    UNSQUEEZE,
    UNSAFE_SPLIT,
    UNSAFE_SPLIT_WITH_SIZES,
    ROT90,
    CAT,
    STACK,
    DIFF,
]

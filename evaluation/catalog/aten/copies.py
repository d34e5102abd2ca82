"""ATen copies and conversions: clone, copy_, _to_copy, to, contiguous, resolve_conj, resolve_neg.

They share the pointwise records' machinery (pinned overloads, params that say how each tensor is drawn);
what is judged is the values and dtype of the result, whatever the input's layout.
"""

from __future__ import annotations

import math
import random

from evaluation.catalog.aten.pointwise import (
    FLOAT_DTYPES,
    PUBLIC_SHAPES,
    SMOKE_SHAPES,
    draw_held_out_shapes,
    overload,
    paired,
    pointwise_record,
    wide_only,
)
from evaluation.catalog.spec import Case, OperatorSpec, grid

ALL_LAYOUTS = ["contiguous", "transposed", "strided", "broadcast"]
VIEW_LAYOUTS = ["transposed", "strided", "broadcast"]
SMOKE = [list(shape) for shape in SMOKE_SHAPES]
PUBLIC = [list(shape) for shape in PUBLIC_SHAPES]
# (from, to) dtype pairs: narrowing and widening floats, float -> int (truncation toward zero), int -> float,
# and anything -> bool (nonzero).
CONVERSIONS = (
    ("float32", "float16"),
    ("float32", "bfloat16"),
    ("float16", "float32"),
    ("bfloat16", "float32"),
    ("float32", "int32"),
    ("int32", "float32"),
    ("float32", "bool"),
    ("int64", "int32"),
)
CONVERSION_RANGE = [[-100.0, 100.0]]


def conversions(entry_point: str, shapes: list[list[int]], **axes: list) -> tuple[Case, ...]:
    cases: tuple[Case, ...] = ()
    for source, target in CONVERSIONS:
        # To bool: small integer values, so that zeros (False) are common, on outputs of 30+ elements.
        if target == "bool":
            cases += wide_only(
                grid(
                    entry_point,
                    shape=shapes,
                    dtype=[source],
                    to_dtype=[target],
                    range=[[-2, 2]],
                    integral=[True],
                    **axes,
                )
            )
        else:
            cases += grid(entry_point, shape=shapes, dtype=[source], to_dtype=[target], range=CONVERSION_RANGE, **axes)
    return cases


def clone() -> OperatorSpec:
    overloads = [
        overload(
            "clone(self: Tensor, *, memory_format: MemoryFormat | None = None) -> Tensor",
            args="self",
            kwargs="memory_format",
        )
    ]
    smoke = grid("clone", shape=SMOKE, dtype=["float32"])
    smoke += grid("clone", shape=[[4, 17]], dtype=["float16", "bfloat16", "int32", "bool"])
    smoke += grid("clone", shape=[[2, 3, 5]], dtype=["float32"], layout=VIEW_LAYOUTS)
    smoke += grid(
        "clone", shape=[[4, 17]], dtype=["float32"], layout=["transposed"], memory_format=["contiguous_format"]
    )
    public = grid("clone", shape=PUBLIC, dtype=FLOAT_DTYPES)
    public += grid("clone", shape=[[1024, 1024], [16, 128, 64, 60]], dtype=["float32", "int64"], layout=VIEW_LAYOUTS)
    public += grid(
        "clone", shape=[[1024, 1024]], dtype=["float16"], layout=["transposed"], memory_format=["contiguous_format"]
    )
    return pointwise_record(
        "clone",
        "A copy of self with its own storage.",
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes="Return a new tensor with the same values, shape and dtype (any strides; memory_format asks for "
        "a particular one). Never return self or a view of it.",
    )


def copy() -> OperatorSpec:
    overloads = [
        overload("copy_(self: Tensor(a!), src: Tensor, non_blocking: bool = False) -> Tensor(a!)", args="self src")
    ]
    pairs = [((33,), (33,)), ((4, 17), (4, 17)), ((2, 3, 5), (3, 5)), ((4, 17), (1, 17))]
    smoke = paired("copy_", pairs, "src_", dtype=["float32"])
    smoke += paired("copy_", pairs[1:2], "src_", dtype=["float16", "int32"], src_dtype=["float32"])
    smoke += paired("copy_", pairs[1:2], "src_", dtype=["float32"], src_dtype=["bfloat16", "int64"])
    smoke += paired(
        "copy_", pairs[1:2], "src_", dtype=["float32"], layout=["transposed", "strided"], src_layout=["transposed"]
    )
    public_pairs = [(shape, shape) for shape in PUBLIC_SHAPES] + [((1024, 1024), (1024,)), ((20, 320, 15), (320, 1))]
    public = paired("copy_", public_pairs, "src_", dtype=FLOAT_DTYPES)
    public += paired(
        "copy_",
        public_pairs[2:4],
        "src_",
        dtype=["float32"],
        src_dtype=["float16", "bfloat16", "int32"],
        range=[[-100.0, 100.0]],
    )
    public += paired(
        "copy_",
        public_pairs[2:3],
        "src_",
        dtype=["float32"],
        layout=["transposed", "strided"],
        src_layout=["transposed", "strided"],
    )
    return pointwise_record(
        "copy_",
        "In place: self's elements become src's, src broadcast to self and cast to self's dtype.",
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes="Mutates and returns self, written through its strides; src broadcasts to self's shape and is "
        "converted to self's dtype (float to int truncates toward zero). non_blocking has no effect.",
    )


def to_copy() -> OperatorSpec:
    overloads = [
        overload(
            "_to_copy(self: Tensor, *, dtype: ScalarType | None = None, layout: Layout | None = None, "
            "device: Device | None = None, pin_memory: bool | None = None, non_blocking: bool = False, "
            "memory_format: MemoryFormat | None = None) -> Tensor",
            args="self",
            kwargs="dtype memory_format",
        )
    ]
    smoke = conversions("_to_copy", [[4, 17]])
    smoke += grid("_to_copy", shape=[[], [33], [2, 3, 5]], dtype=["float32"], to_dtype=["float16"])
    smoke += grid("_to_copy", shape=[[4, 17]], dtype=["float32"], to_dtype=["float16"], layout=VIEW_LAYOUTS)
    public = conversions("_to_copy", PUBLIC)
    public += grid("_to_copy", shape=[[1024, 1024]], dtype=["float32"], to_dtype=["bfloat16"], layout=VIEW_LAYOUTS)
    return pointwise_record(
        "_to_copy",
        "A copy of self converted to dtype (same device).",
        overloads,
        smoke=smoke,
        public=public,
        minimum_output=30,
        prompt_notes="dtype=None keeps self's dtype. Float to int truncates toward zero; anything to bool is "
        "x != 0; float narrowing rounds to nearest even. device/layout/pin_memory are never set.",
    )


def to() -> OperatorSpec:
    overloads = [
        overload(
            "to.dtype(self: Tensor, dtype: ScalarType, non_blocking: bool = False, copy: bool = False, "
            "memory_format: MemoryFormat | None = None) -> Tensor",
            args="self to_dtype",
            kwargs="copy",
        )
    ]
    smoke = conversions("to_dtype", [[4, 17]])
    smoke += grid("to_dtype", shape=[[], [33]], dtype=["float32"], to_dtype=["float16"])
    smoke += grid("to_dtype", shape=[[4, 17]], dtype=["float32"], to_dtype=["float16"], layout=["transposed"])
    smoke += grid("to_dtype", shape=[[4, 17]], dtype=["float32"], to_dtype=["float32"], copy=[True])
    public = conversions("to_dtype", PUBLIC)
    public += grid(
        "to_dtype",
        shape=[[1024, 1024]],
        dtype=["float16"],
        to_dtype=["float16"],
        copy=[True],
        layout=["contiguous", "transposed"],
    )
    return pointwise_record(
        "to",
        "self converted to dtype (a copy unless the dtype already matches and copy is False).",
        overloads,
        smoke=smoke,
        public=public,
        minimum_output=30,
        prompt_notes="Same conversion rules as _to_copy. With copy=False and the same dtype, returning self is "
        "allowed; with copy=True a new tensor is required.",
    )


def contiguous_held_out(rng: random.Random) -> list[Case]:
    """Unseen shapes in views that are never contiguous (the last two sizes >= 2), so a copy is always due."""
    cases = []
    for shape in draw_held_out_shapes(rng):
        sizes = [max(2, size) for size in ([1] * max(0, 2 - len(shape)) + list(shape))[-4:]]
        while math.prod(sizes) > 4_000_000:
            largest = sizes.index(max(sizes))
            sizes[largest] //= 2
        cases.append(
            Case(
                "contiguous",
                {"shape": sizes, "dtype": rng.choice(FLOAT_DTYPES + ("int64",)), "layout": rng.choice(VIEW_LAYOUTS)},
            )
        )
    return cases


def contiguous() -> OperatorSpec:
    overloads = [
        overload("contiguous(self: Tensor, *, memory_format: MemoryFormat = contiguous_format) -> Tensor", args="self")
    ]
    # Only views that are not contiguous: for a contiguous self the answer is self and there is nothing to judge.
    smoke = grid("contiguous", shape=[[4, 17], [2, 3, 5]], dtype=["float32"], layout=VIEW_LAYOUTS)
    smoke += grid("contiguous", shape=[[33]], dtype=["float32"], layout=["strided"])
    smoke += grid("contiguous", shape=[[4, 17]], dtype=["float16", "bfloat16", "int32", "bool"], layout=["transposed"])
    public = grid("contiguous", shape=PUBLIC[2:], dtype=FLOAT_DTYPES, layout=VIEW_LAYOUTS)
    public += grid("contiguous", shape=[[1024, 1024]], dtype=["int64"], layout=VIEW_LAYOUTS)
    return pointwise_record(
        "contiguous",
        "self in row-major (C-contiguous) memory: a copy unless it already is.",
        overloads,
        smoke=smoke,
        public=public,
        held_out=contiguous_held_out,
        prompt_notes="If self is already contiguous return it; otherwise return a contiguous copy (strides of a "
        "fresh torch.empty). Inputs are transposed, every-other-element and expanded views.",
        judgement_notes="Values and dtype are compared; the result must also be C-contiguous.",
        departures="Every case is a non-contiguous view (a contiguous self is returned as is: nothing to judge). "
        "A value comparison cannot see a returned non-contiguous self; the judge needs an "
        "is_contiguous() check on contiguous outputs.",
    )


def resolve_conj() -> OperatorSpec:
    overloads = [overload("resolve_conj(self: Tensor) -> Tensor", args="self")]
    smoke = grid("resolve_conj", shape=[[33], [4, 17], []], dtype=["complex64"], conj_bit=[True])
    smoke += grid("resolve_conj", shape=[[4, 17]], dtype=["complex64"], conj_bit=[True], layout=["transposed"])
    public = grid("resolve_conj", shape=PUBLIC, dtype=["complex64"], conj_bit=[True])
    public += grid(
        "resolve_conj", shape=[[1024, 1024]], dtype=["complex64"], conj_bit=[True], layout=["transposed", "strided"]
    )
    return pointwise_record(
        "resolve_conj",
        "A tensor with the conjugation of a conj-bit view materialised.",
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes="self may be a lazily conjugated complex view (self.is_conj()): its storage holds the "
        "unconjugated values. Return a tensor whose is_conj() is False and whose values are self's "
        "(imaginary parts negated from storage). Without the conj bit, returning self would be correct "
        "(every case sets it). "
        "torch.view_as_real needs a tensor without the conj bit (self.conj() is that view).",
        judgement_notes="Values are compared (complex64: rtol 1.3e-6). The input's conj bit must reach the "
        "candidate (the judge's wire has to carry is_conj() with each tensor view), and the result "
        "must not carry the bit.",
        departures="The original's check of the conj bit on the output is not expressible in the record; the "
        "judge needs an is_conj() check on resolve_conj outputs.",
    )


def resolve_neg() -> OperatorSpec:
    overloads = [overload("resolve_neg(self: Tensor) -> Tensor", args="self")]
    smoke = grid("resolve_neg", shape=SMOKE, dtype=["float32"], neg_bit=[True])
    smoke += grid("resolve_neg", shape=[[4, 17]], dtype=["float16", "bfloat16"], neg_bit=[True])
    smoke += grid("resolve_neg", shape=[[4, 17]], dtype=["float32"], neg_bit=[True], layout=["transposed", "strided"])
    public = grid("resolve_neg", shape=PUBLIC, dtype=FLOAT_DTYPES, neg_bit=[True])
    public += grid(
        "resolve_neg", shape=[[1024, 1024]], dtype=["float32"], neg_bit=[True], layout=["transposed", "strided"]
    )
    return pointwise_record(
        "resolve_neg",
        "A tensor with the negation of a neg-bit view materialised.",
        overloads,
        smoke=smoke,
        public=public,
        prompt_notes="self may be a lazily negated view (self.is_neg()): its storage holds the values before "
        "negation. Return a tensor whose is_neg() is False with self's (negated) values. Without the "
        "neg bit, returning self would be correct (every case sets it).",
        judgement_notes="Values are compared. The input's neg bit must reach the candidate (the judge's wire has "
        "to carry is_neg() with each tensor view), and the result must not carry the bit.",
        departures="The neg-bit check on the output is not expressible in the record; the judge needs an "
        "is_neg() check on resolve_neg outputs.",
    )


OPERATORS: list[OperatorSpec] = [clone(), copy(), to_copy(), to(), contiguous(), resolve_conj(), resolve_neg()]

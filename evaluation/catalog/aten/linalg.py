"""ATen matrix products: mm, bmm, matmul, linear. reduce_dim is K; fp32 cases get the float64 second opinion."""

from __future__ import annotations

import random

import torch

from evaluation.catalog.aten._build import FLOAT_DTYPES, case, entry, itemsize, numel, record
from evaluation.catalog.inputs import make_tensor
from evaluation.catalog.spec import Call, Case, OperatorSpec

# EXPLOITS 16: fp32 done as tf32 is ~7.7e-4 off float64 in relative norm at 4096^3; true fp32 stays < 1.2e-6.
FP32_RELATIVE_BOUND = 1e-5
MATMUL_NOTES = (
    "allclose with reduce_dim = K (atol = 1e-4 * K) and the dtype's rtol; float32 cases must also "
    "stay within a relative norm error of 1e-5 of a float64 product (EXPLOITS 16), so tf32 fails."
)
PRECISION_NOTE = (
    "float32 inputs must be multiplied in true fp32 (in Triton: tl.dot(..., "
    'input_precision="ieee")); tf32 fails the float64 check. float16/bfloat16 accumulate in float32.'
)
SMOKE_MNK = ([16, 8, 24], [1, 5, 7], [33, 17, 9])
PUBLIC_MNK = (
    [256, 256, 256],
    [1024, 1024, 1024],
    [4096, 4096, 4096],
    [1000, 999, 1001],
    [4095, 511, 4097],
    [1, 4096, 4096],
    [8192, 64, 128],
)


def _operand(shape, params: dict, generator: torch.Generator, layout_key: str) -> torch.Tensor:
    return make_tensor(shape, params["dtype"], generator, layout=params.get(layout_key, "contiguous"))


def _matmul_bytes(case_: Case) -> int:
    params = case_.params
    batch = numel(params.get("batch", []))
    m, n, k = params["mnk"]
    return batch * (m * k + k * n + m * n) * itemsize(params["dtype"])


def _matmul_flops(case_: Case) -> int:
    params = case_.params
    m, n, k = params["mnk"]
    return 2 * numel(params.get("batch", [])) * m * n * k


def _mnk_cases(entry_point: str, mnks, dtypes, layouts, **extra) -> tuple[Case, ...]:
    cases = [case(entry_point, mnk=mnk, dtype=d, reduce_dim=mnk[2], **extra) for mnk in mnks for d in dtypes]
    for layout_a, layout_b in layouts:
        mnk = mnks[0]
        cases.append(
            case(
                entry_point, mnk=mnk, dtype="float32", layout_a=layout_a, layout_b=layout_b, reduce_dim=mnk[2], **extra
            )
        )
    return tuple(cases)


def _draw_mnk(rng: random.Random) -> list[int]:
    return [rng.randint(1, 4096), rng.randint(1, 4096), rng.randint(1, 4096)]


LAYOUT_PAIRS = (("transposed", "contiguous"), ("contiguous", "transposed"), ("strided", "transposed"))


# --- mm -----------------------------------------------------------------------------------------------------


def _mm_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    m, n, k = params["mnk"]
    return Call([_operand([m, k], params, generator, "layout_a"), _operand([k, n], params, generator, "layout_b")])


MM = record(
    "mm",
    "Matrix product of self (M x K) and mat2 (K x N).",
    [entry("aten::mm(Tensor self, Tensor mat2) -> Tensor")],
    make_inputs=_mm_inputs,
    smoke=_mnk_cases("mm", SMOKE_MNK, FLOAT_DTYPES, LAYOUT_PAIRS),
    public=_mnk_cases("mm", PUBLIC_MNK, FLOAT_DTYPES, LAYOUT_PAIRS),
    held_out=lambda rng: [
        case(
            "mm",
            mnk=mnk,
            dtype=rng.choice(FLOAT_DTYPES),
            layout_a=rng.choice(["contiguous", "transposed"]),
            layout_b=rng.choice(["contiguous", "transposed"]),
            reduce_dim=mnk[2],
        )
        for mnk in (_draw_mnk(rng) for _ in range(5))
    ],
    fp64_relative_bound=FP32_RELATIVE_BOUND,
    bytes_moved=_matmul_bytes,
    flops=_matmul_flops,
    judgement_notes=MATMUL_NOTES,
    prompt_notes=PRECISION_NOTE,
)


# --- bmm ----------------------------------------------------------------------------------------------------


def _bmm_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    m, n, k = params["mnk"]
    (batch,) = params["batch"]
    return Call(
        [_operand([batch, m, k], params, generator, "layout_a"), _operand([batch, k, n], params, generator, "layout_b")]
    )


def _bmm_held_out(rng: random.Random) -> list[Case]:
    cases = []
    for _ in range(4):
        mnk = [rng.randint(1, 1024), rng.randint(1, 1024), rng.randint(1, 1024)]
        cases.append(
            case(
                "bmm",
                mnk=mnk,
                batch=[rng.randint(1, 32)],
                dtype=rng.choice(FLOAT_DTYPES),
                layout_a=rng.choice(["contiguous", "transposed"]),
                reduce_dim=mnk[2],
            )
        )
    return cases


BMM = record(
    "bmm",
    "Batched matrix product: self (B x M x K) times mat2 (B x K x N).",
    [entry("aten::bmm(Tensor self, Tensor mat2) -> Tensor")],
    make_inputs=_bmm_inputs,
    smoke=_mnk_cases("bmm", SMOKE_MNK[:2], FLOAT_DTYPES, LAYOUT_PAIRS[:2], batch=[3]),
    public=_mnk_cases(
        "bmm", [[256, 256, 256], [1024, 1024, 64], [127, 129, 513]], FLOAT_DTYPES, LAYOUT_PAIRS, batch=[16]
    )
    + _mnk_cases("bmm", [[64, 64, 64], [1, 4096, 256]], FLOAT_DTYPES, (), batch=[128]),
    held_out=_bmm_held_out,
    fp64_relative_bound=FP32_RELATIVE_BOUND,
    bytes_moved=_matmul_bytes,
    flops=_matmul_flops,
    judgement_notes=MATMUL_NOTES,
    prompt_notes=PRECISION_NOTE,
)

# --- matmul -------------------------------------------------------------------------------------------------


def _matmul_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    return Call(
        [
            _operand(params["a_shape"], params, generator, "layout_a"),
            _operand(params["b_shape"], params, generator, "layout_b"),
        ]
    )


def _matmul_case(a_shape, b_shape, dtype, **extra) -> Case:
    k = a_shape[-1]
    batch = (
        torch.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
        if len(a_shape) > 1 and len(b_shape) > 1
        else ()
    )
    m = a_shape[-2] if len(a_shape) > 1 else 1
    n = b_shape[-1] if len(b_shape) > 1 else 1
    return case(
        "matmul", a_shape=a_shape, b_shape=b_shape, dtype=dtype, mnk=[m, n, k], batch=list(batch), reduce_dim=k, **extra
    )


MATMUL_SMOKE_SHAPES = (
    ([24], [24]),
    ([16, 24], [24]),
    ([24], [24, 8]),
    ([16, 24], [24, 8]),
    ([3, 16, 24], [24, 8]),
    ([2, 1, 5, 7], [3, 7, 4]),
)
MATMUL_PUBLIC_SHAPES = (
    ([4096], [4096]),
    ([4096, 4096], [4096]),
    ([4096], [4096, 1024]),
    ([1024, 1024], [1024, 1024]),
    ([1000, 999], [999, 1001]),
    ([16, 1024, 256], [256, 512]),
    ([8, 1, 128, 64], [4, 64, 256]),
    ([32, 512, 64], [32, 64, 512]),
)

MATMUL = record(
    "matmul",
    "torch.matmul: dot, matrix-vector, vector-matrix, matrix and broadcast batched products.",
    [entry("aten::matmul(Tensor self, Tensor other) -> Tensor")],
    make_inputs=_matmul_inputs,
    smoke=tuple(_matmul_case(a, b, d) for a, b in MATMUL_SMOKE_SHAPES for d in ("float32", "float16"))
    + (_matmul_case([16, 24], [24, 8], "float32", layout_a="transposed", layout_b="transposed"),),
    public=tuple(_matmul_case(a, b, d) for a, b in MATMUL_PUBLIC_SHAPES for d in FLOAT_DTYPES)
    + (
        _matmul_case([1024, 1024], [1024, 1024], "float32", layout_a="transposed"),
        _matmul_case([1024, 1024], [1024, 1024], "float16", layout_b="transposed"),
    ),
    held_out=lambda rng: [
        _matmul_case([b, m, k], [k, n], rng.choice(FLOAT_DTYPES))
        for b, m, k, n in (
            (rng.randint(1, 8), rng.randint(1, 1024), rng.randint(1, 1024), rng.randint(1, 1024)) for _ in range(4)
        )
    ],
    fp64_relative_bound=FP32_RELATIVE_BOUND,
    bytes_moved=_matmul_bytes,
    flops=_matmul_flops,
    judgement_notes=MATMUL_NOTES,
    prompt_notes=PRECISION_NOTE + " 1-D operands are promoted (and the added dim removed) as torch.matmul does; "
    "batch dims broadcast.",
)


# --- linear -------------------------------------------------------------------------------------------------


def _linear_inputs(case_: Case, generator: torch.Generator) -> Call:
    params = case_.params
    m, n, k = params["mnk"]
    x = _operand([*params.get("lead", []), m, k], params, generator, "layout_a")
    weight = _operand([n, k], params, generator, "layout_b")
    bias = make_tensor([n], params["dtype"], generator) if params["bias"] else None
    return Call([x, weight, bias])


def _linear_cases(mnks, dtypes, layouts, lead=()) -> tuple[Case, ...]:
    cases = [
        case("linear", mnk=mnk, dtype=d, bias=b, lead=list(lead), batch=list(lead), reduce_dim=mnk[2])
        for mnk in mnks
        for d in dtypes
        for b in (True, False)
    ]
    for layout_a, layout_b in layouts:
        cases.append(
            case(
                "linear",
                mnk=mnks[0],
                dtype="float32",
                bias=True,
                lead=list(lead),
                batch=list(lead),
                layout_a=layout_a,
                layout_b=layout_b,
                reduce_dim=mnks[0][2],
            )
        )
    return tuple(cases)


LINEAR = record(
    "linear",
    "input @ weight^T + bias (weight is N x K; bias optional; input has any leading dims).",
    [entry("aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor")],
    make_inputs=_linear_inputs,
    smoke=_linear_cases(SMOKE_MNK[:2], ("float32", "float16"), LAYOUT_PAIRS[:2])
    + _linear_cases([[5, 8, 24]], ("float32",), (), lead=[2]),
    public=_linear_cases([[4096, 4096, 4096], [1000, 999, 1001], [8192, 1024, 256]], FLOAT_DTYPES, LAYOUT_PAIRS)
    + _linear_cases([[512, 4096, 1024]], FLOAT_DTYPES, (), lead=[8]),
    held_out=lambda rng: [
        case(
            "linear",
            mnk=mnk,
            dtype=rng.choice(FLOAT_DTYPES),
            bias=rng.random() < 0.5,
            lead=[],
            batch=[],
            reduce_dim=mnk[2],
        )
        for mnk in (_draw_mnk(rng) for _ in range(4))
    ],
    fp64_relative_bound=FP32_RELATIVE_BOUND,
    bytes_moved=_matmul_bytes,
    flops=_matmul_flops,
    judgement_notes=MATMUL_NOTES,
    prompt_notes=PRECISION_NOTE,
)

OPERATORS: list[OperatorSpec] = [BMM, LINEAR, MATMUL, MM]

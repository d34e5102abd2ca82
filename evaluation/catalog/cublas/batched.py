"""Batched cuBLAS routines: strided-batched and pointer-array GEMM and GEMV, pointer-array TRSM.

Pointer arrays (``Aarray``, ``Barray``, ``Carray``, ``xarray``, ``yarray``): the original passed int64 CUDA
tensors holding the data pointers of separately allocated matrices. A table of raw addresses cannot survive
the judge building inputs on the CPU and placing them on the device, and a CPU reference cannot follow
device pointers, so our wrappers receive the *Python list of those tensors* (the ``T* const[]`` of the C
API, one tensor per batch entry). A kernel that wants a pointer table builds it itself.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import torch

from evaluation.catalog.cublas.blas_memory import (
    apply_operation,
    batched_matrix_view,
    gemm_update,
    matrix_buffer,
    parse_operation,
    read_matrix,
    read_vector,
    stored_shape,
    strided_batch_buffer,
    strided_vector_batch,
    to_scalar,
    vector_buffer,
    wide_dtype,
    write_vector,
)
from evaluation.catalog.cublas.level2 import TRIANGULAR_DEPARTURE, gemv_lengths
from evaluation.catalog.cublas.level3 import (
    ALPHA_BETA_3,
    ALPHA_BETA_6,
    GEMM_NOTES,
    GEMM_SHAPES_5,
    GEMM_SHAPES_9,
    SMOKE_GEMM_SHAPES,
    TRANS_NT,
    TRSM_NOTES,
    draw_gemm_point,
    fp32_bound,
    gemm_bytes,
    gemm_flops,
    gemm_on,
    gemm_points,
    gemm_reduce,
    gemm_timed,
    trsm_inputs,
    trsm_solve,
)
from evaluation.catalog.cublas.routine import Routine, blas_record, cases, itemsize, multiply_add_flops
from evaluation.catalog.spec import Call, Case, OperatorSpec

POINTER_ARRAY_NOTES = (
    "Pointer-array arguments ({names}) are Python lists of batchCount device tensors, one per batch entry, "
    "each holding one column-major operand at its own data pointer (the C API's array of device pointers; "
    "the original KGB wrapper received an int64 tensor of those pointers). Update the listed output tensors "
    "in place; if a kernel wants a pointer table it may build one with torch.tensor([t.data_ptr() for t in "
    "array], dtype=torch.int64, device=...)."
)
POINTER_ARRAY_DEPARTURE = (
    "Pointer arrays are passed as Python lists of tensors instead of the original's int64 device tensor of "
    "data pointers (a raw address table cannot follow the judge's CPU-built inputs onto the device, nor be "
    "read by a CPU reference); the math and memory layout per batch entry are unchanged."
)
STRIDED_NOTES = (
    "Batch entry b of a strided operand starts stride*b elements after its data pointer (strideA, "
    "strideB, strideC, stridex, stridey); batchCount entries."
)
TRANS_STRING_NOTE = (
    "The original gave the cuBLAS baseline trans as ints 0/1 and the candidate 'N'/'T' strings; "
    "both sides get the same strings here."
)


def _complex(dtype: str) -> bool:
    return dtype.startswith("complex")


def _draw_batch(rng: random.Random) -> int:
    return rng.randint(1, 9)


def _held_out(
    routine: Routine,
    dtype: str,
    draw: Callable[[random.Random], dict[str, Any]],
    reduce_dim: Callable[[dict[str, Any]], int],
    timed: Callable[[dict[str, Any]], bool],
):
    def held_out(rng: random.Random) -> tuple[Case, ...]:
        return cases(routine, [{**draw(rng), "dtype": dtype} for _ in range(6)], reduce_dim=reduce_dim, timed=timed)

    return held_out


def _batch(case: Case) -> int:
    return case.params["batchCount"]


def _record(
    routine: Routine,
    *,
    dtype: str,
    description: str,
    make_inputs,
    reference,
    smoke,
    public,
    draw,
    reduce_dim,
    timed,
    bytes_moved,
    flops,
    notes: str,
    departures: str,
    bound: float | None = None,
    judgement_notes: str = "",
) -> OperatorSpec:
    return blas_record(
        routine=routine,
        description=description,
        make_inputs=make_inputs,
        reference=reference,
        smoke=cases(routine, [{**p, "dtype": dtype} for p in smoke], reduce_dim=reduce_dim, timed=False),
        public=cases(routine, [{**p, "dtype": dtype} for p in public], reduce_dim=reduce_dim, timed=timed),
        held_out=_held_out(routine, dtype, draw, reduce_dim, timed),
        bytes_moved=bytes_moved,
        flops=flops,
        prompt_notes=notes,
        departures=departures,
        fp64_relative_bound=bound,
        judgement_notes=judgement_notes,
    )


def _list_judgement(name: str) -> str:
    return (
        f"allclose (protocol tolerance, reduce_dim per case) on every tensor of the list {name} (each whole "
        f"buffer, padding included) after the call; the return value is ignored."
    )


# --- strided-batched GEMM ---------------------------------------------------------------------------------

GEMM_STRIDED = (
    "transa",
    "transb",
    "m",
    "n",
    "k",
    "alpha",
    "A",
    "lda",
    "strideA",
    "B",
    "ldb",
    "strideB",
    "beta",
    "C",
    "ldc",
    "strideC",
    "batchCount",
)


def with_strides(points: list[dict[str, Any]], batches, gap: int = 0) -> list[dict[str, Any]]:
    """GEMM points with batchCount and strides (tight as in the original, or ``gap`` elements apart)."""
    out = []
    for point in points:
        opa, opb = parse_operation(point["transa"]), parse_operation(point["transb"])
        a_cols = stored_shape(opa, point["m"], point["k"])[1]
        b_cols = stored_shape(opb, point["k"], point["n"])[1]
        for batch in batches:
            out.append(
                {
                    **point,
                    "strideA": point["lda"] * a_cols + gap,
                    "strideB": point["ldb"] * b_cols + gap,
                    "strideC": point["ldc"] * point["n"] + gap,
                    "batchCount": batch,
                }
            )
    return out


def strided_gemm_record(
    name: str, dtype: str, *, public: list[dict[str, Any]], smoke: list[dict[str, Any]], departures: str
) -> OperatorSpec:
    routine = Routine(name, GEMM_STRIDED, ("C",), "C")

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        opa, opb = parse_operation(p["transa"]), parse_operation(p["transb"])
        batch = p["batchCount"]
        return routine.call(
            dict(
                p,
                alpha=to_scalar(p["alpha"]),
                beta=to_scalar(p["beta"]),
                A=strided_batch_buffer(
                    batch, *stored_shape(opa, p["m"], p["k"]), p["lda"], p["strideA"], dtype, generator
                ),
                B=strided_batch_buffer(
                    batch, *stored_shape(opb, p["k"], p["n"]), p["ldb"], p["strideB"], dtype, generator
                ),
                C=strided_batch_buffer(batch, p["m"], p["n"], p["ldc"], p["strideC"], dtype, generator),
            )
        )

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        opa, opb = parse_operation(a["transa"]), parse_operation(a["transb"])
        m, n, k, batch = a["m"], a["n"], a["k"], a["batchCount"]
        wide = wide_dtype(a["C"].dtype)
        left = apply_operation(
            batched_matrix_view(a["A"], batch, *stored_shape(opa, m, k), a["lda"], a["strideA"]).to(wide, copy=True),
            opa,
        )
        right = apply_operation(
            batched_matrix_view(a["B"], batch, *stored_shape(opb, k, n), a["ldb"], a["strideB"]).to(wide, copy=True),
            opb,
        )
        out = batched_matrix_view(a["C"], batch, m, n, a["ldc"], a["strideC"])
        out.copy_(gemm_update(a["alpha"], left @ right, a["beta"], out.to(wide, copy=True)).to(out.dtype))
        return a["C"]

    def draw(rng: random.Random) -> dict[str, Any]:
        point = draw_gemm_point(rng, dtype, ("N", "T", "C") if _complex(dtype) else ("N", "T"), limit=300)
        return with_strides([point], (_draw_batch(rng),), gap=rng.randint(0, 33))[0]

    half = " fp16 in and out: accumulate in fp32 (or better) and round once." if dtype == "float16" else ""
    return _record(
        routine,
        dtype=dtype,
        description=f"Strided-batched GEMM C_b = alpha*op(A_b)*op(B_b) + beta*C_b, {dtype}.",
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        draw=draw,
        reduce_dim=gemm_reduce,
        timed=gemm_timed,
        bytes_moved=gemm_bytes(dtype, _batch),
        flops=gemm_flops(dtype, _batch),
        notes=f"Per batch entry: {GEMM_NOTES} {STRIDED_NOTES}{half}",
        departures=departures,
        bound=fp32_bound(dtype),
    )


# --- pointer-array GEMM -----------------------------------------------------------------------------------

GEMM_BATCHED = (
    "transa",
    "transb",
    "m",
    "n",
    "k",
    "alpha",
    "Aarray",
    "lda",
    "Barray",
    "ldb",
    "beta",
    "Carray",
    "ldc",
    "batchCount",
)


def pointer_gemm_record(
    name: str, dtype: str, *, public: list[dict[str, Any]], smoke: list[dict[str, Any]], departures: str
) -> OperatorSpec:
    routine = Routine(name, GEMM_BATCHED, ("Carray",), "Carray")

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        opa, opb = parse_operation(p["transa"]), parse_operation(p["transb"])
        batch = range(p["batchCount"])
        return routine.call(
            dict(
                p,
                alpha=to_scalar(p["alpha"]),
                beta=to_scalar(p["beta"]),
                Aarray=[matrix_buffer(*stored_shape(opa, p["m"], p["k"]), p["lda"], dtype, generator) for _ in batch],
                Barray=[matrix_buffer(*stored_shape(opb, p["k"], p["n"]), p["ldb"], dtype, generator) for _ in batch],
                Carray=[matrix_buffer(p["m"], p["n"], p["ldc"], dtype, generator) for _ in batch],
            )
        )

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        for b in range(a["batchCount"]):
            gemm_on(a, a["Aarray"][b], a["Barray"][b], a["Carray"][b])
        return a["Carray"]

    def draw(rng: random.Random) -> dict[str, Any]:
        point = draw_gemm_point(rng, dtype, ("N", "T", "C") if _complex(dtype) else ("N", "T"), limit=300)
        return {**point, "batchCount": _draw_batch(rng)}

    half = " fp16 in and out: accumulate in fp32 (or better) and round once." if dtype == "float16" else ""
    return _record(
        routine,
        dtype=dtype,
        description=f"Pointer-array batched GEMM C_b = alpha*op(A_b)*op(B_b) + beta*C_b, {dtype}.",
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        draw=draw,
        reduce_dim=gemm_reduce,
        timed=gemm_timed,
        bytes_moved=gemm_bytes(dtype, _batch),
        flops=gemm_flops(dtype, _batch),
        notes=f"Per batch entry: {GEMM_NOTES} {POINTER_ARRAY_NOTES.format(names='Aarray, Barray, Carray')}{half}",
        departures=f"{POINTER_ARRAY_DEPARTURE} {departures}".strip(),
        bound=fp32_bound(dtype),
        judgement_notes=_list_judgement("Carray"),
    )


def batched_points(points: list[dict[str, Any]], batches) -> list[dict[str, Any]]:
    return [{**point, "batchCount": batch} for point in points for batch in batches]


# --- GEMV: strided-batched and pointer-array --------------------------------------------------------------

GEMV_STRIDED = (
    "trans",
    "m",
    "n",
    "alpha",
    "A",
    "lda",
    "strideA",
    "x",
    "incx",
    "stridex",
    "beta",
    "y",
    "incy",
    "stridey",
    "batchCount",
)
GEMV_BATCHED = ("trans", "m", "n", "alpha", "Aarray", "lda", "xarray", "incx", "beta", "yarray", "incy", "batchCount")
GEMV_SHAPES_9 = ((1, 1), (16, 16), (32, 64), (64, 32), (128, 64), (256, 128), (17, 33), (128, 128), (256, 256))
GEMV_SHAPES_5 = ((16, 16), (64, 128), (128, 256), (256, 256), (17, 33))
GEMV_NOTES = (
    "Per batch entry: y = alpha*op(A)*x + beta*y; A is m x n (lead dim lda); x has n elements for 'N' "
    "and m for 'T'/'C', y the other."
)


def _gemv_reduce(point: dict[str, Any]) -> int:
    return point["n"] if parse_operation(point["trans"]) == "N" else point["m"]


def _gemv_timed(point: dict[str, Any]) -> bool:
    return point["m"] >= 128 and point["n"] >= 64


def _gemv_bytes(dtype: str) -> Callable[[Case], int]:
    def count(case: Case) -> int:
        p = case.params
        return p["batchCount"] * (p["m"] * p["n"] + 2 * p["m"] + 2 * p["n"]) * itemsize(dtype)

    return count


def _gemv_flops(dtype: str) -> Callable[[Case], int]:
    def count(case: Case) -> int:
        p = case.params
        return p["batchCount"] * p["m"] * p["n"] * multiply_add_flops(dtype)

    return count


def gemv_points(
    shapes, alpha_beta, transes, batches, incs, dtype: str, *, strided: bool, pad: int = 0, gap: int = 0
) -> list[dict[str, Any]]:
    points = []
    for m, n in shapes:
        for alpha, beta in alpha_beta:
            for trans in transes:
                for batch in batches:
                    for incx, incy in incs:
                        x_len, y_len = gemv_lengths(trans, m, n)
                        point = {
                            "trans": trans,
                            "m": m,
                            "n": n,
                            "alpha": _scalar(alpha, dtype),
                            "beta": _scalar(beta, dtype),
                            "lda": m + pad,
                            "incx": incx,
                            "incy": incy,
                            "batchCount": batch,
                        }
                        if strided:
                            point.update(
                                strideA=(m + pad) * n + gap, stridex=x_len * incx + gap, stridey=y_len * incy + gap
                            )
                        points.append(point)
    return points


def _scalar(value: Any, dtype: str) -> Any:
    if _complex(dtype) and not isinstance(value, (list, tuple)):
        return [float(value), 0.0]
    return value


def _draw_gemv(rng: random.Random, dtype: str, *, strided: bool) -> dict[str, Any]:
    def scalar() -> Any:
        real = round(rng.uniform(-2, 2), 3)
        return [real, round(rng.uniform(-2, 2), 3)] if _complex(dtype) else real

    trans = rng.choice(("N", "T", "C") if _complex(dtype) else ("N", "T"))
    shape = (rng.randint(1, 600), rng.randint(1, 600))
    return gemv_points(
        [shape],
        [(scalar(), scalar())],
        (trans,),
        (_draw_batch(rng),),
        ((rng.randint(1, 3), rng.randint(1, 3)),),
        dtype,
        strided=strided,
        pad=rng.randint(0, 7),
        gap=rng.randint(0, 9),
    )[0]


def strided_gemv_record(
    name: str, dtype: str, *, public: list[dict[str, Any]], smoke: list[dict[str, Any]], departures: str
) -> OperatorSpec:
    routine = Routine(name, GEMV_STRIDED, ("y",), "y")

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        x_len, y_len = gemv_lengths(p["trans"], p["m"], p["n"])
        batch = p["batchCount"]
        return routine.call(
            dict(
                p,
                alpha=to_scalar(p["alpha"]),
                beta=to_scalar(p["beta"]),
                A=strided_batch_buffer(batch, p["m"], p["n"], p["lda"], p["strideA"], dtype, generator),
                x=strided_vector_batch(batch, x_len, p["incx"], p["stridex"], dtype, generator),
                y=strided_vector_batch(batch, y_len, p["incy"], p["stridey"], dtype, generator),
            )
        )

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        x_len, y_len = gemv_lengths(a["trans"], a["m"], a["n"])
        batch = a["batchCount"]
        wide = wide_dtype(a["y"].dtype)
        matrix = apply_operation(
            batched_matrix_view(a["A"], batch, a["m"], a["n"], a["lda"], a["strideA"]).to(wide, copy=True),
            parse_operation(a["trans"]),
        )
        x = (
            a["x"]
            .as_strided((batch, x_len, 1), (a["stridex"], a["incx"], 1), a["x"].storage_offset())
            .to(wide, copy=True)
        )
        y = a["y"].as_strided((batch, y_len, 1), (a["stridey"], a["incy"], 1), a["y"].storage_offset())
        y.copy_(gemm_update(a["alpha"], matrix @ x, a["beta"], y.to(wide, copy=True)).to(y.dtype))
        return a["y"]

    return _record(
        routine,
        dtype=dtype,
        description=f"Strided-batched GEMV y_b = alpha*op(A_b)*x_b + beta*y_b, {dtype}.",
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        draw=lambda rng: _draw_gemv(rng, dtype, strided=True),
        reduce_dim=_gemv_reduce,
        timed=_gemv_timed,
        bytes_moved=_gemv_bytes(dtype),
        flops=_gemv_flops(dtype),
        notes=f"{GEMV_NOTES} {STRIDED_NOTES}",
        departures=departures,
    )


def pointer_gemv_record(
    name: str, dtype: str, *, public: list[dict[str, Any]], smoke: list[dict[str, Any]], departures: str = ""
) -> OperatorSpec:
    routine = Routine(name, GEMV_BATCHED, ("yarray",), "yarray")

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        x_len, y_len = gemv_lengths(p["trans"], p["m"], p["n"])
        batch = range(p["batchCount"])
        return routine.call(
            dict(
                p,
                alpha=to_scalar(p["alpha"]),
                beta=to_scalar(p["beta"]),
                Aarray=[matrix_buffer(p["m"], p["n"], p["lda"], dtype, generator) for _ in batch],
                xarray=[vector_buffer(x_len, p["incx"], dtype, generator) for _ in batch],
                yarray=[vector_buffer(y_len, p["incy"], dtype, generator) for _ in batch],
            )
        )

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        x_len, y_len = gemv_lengths(a["trans"], a["m"], a["n"])
        operation = parse_operation(a["trans"])
        for b in range(a["batchCount"]):
            matrix = apply_operation(read_matrix(a["Aarray"][b], a["m"], a["n"], a["lda"]), operation)
            x = read_vector(a["xarray"][b], x_len, a["incx"])
            y = read_vector(a["yarray"][b], y_len, a["incy"])
            write_vector(a["yarray"][b], y_len, a["incy"], gemm_update(a["alpha"], matrix @ x, a["beta"], y))
        return a["yarray"]

    return _record(
        routine,
        dtype=dtype,
        description=f"Pointer-array batched GEMV y_b = alpha*op(A_b)*x_b + beta*y_b, {dtype}.",
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        draw=lambda rng: _draw_gemv(rng, dtype, strided=False),
        reduce_dim=_gemv_reduce,
        timed=_gemv_timed,
        bytes_moved=_gemv_bytes(dtype),
        flops=_gemv_flops(dtype),
        notes=f"{GEMV_NOTES} {POINTER_ARRAY_NOTES.format(names='Aarray, xarray, yarray')}",
        departures=f"{POINTER_ARRAY_DEPARTURE} {departures}".strip(),
        judgement_notes=_list_judgement("yarray"),
    )


# --- pointer-array TRSM -----------------------------------------------------------------------------------

TRSM_BATCHED = ("side", "uplo", "trans", "diag", "m", "n", "alpha", "Aarray", "lda", "Barray", "ldb", "batchCount")


def pointer_trsm_record(name: str, dtype: str) -> OperatorSpec:
    routine = Routine(name, TRSM_BATCHED, ("Barray",), "Barray")

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        pairs = [trsm_inputs(p, dtype, generator) for _ in range(p["batchCount"])]
        return routine.call(
            dict(p, alpha=to_scalar(p["alpha"]), Aarray=[pair[0] for pair in pairs], Barray=[pair[1] for pair in pairs])
        )

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        for b in range(a["batchCount"]):
            trsm_solve(a, a["Aarray"][b], a["Barray"][b])
        return a["Barray"]

    def draw(rng: random.Random) -> dict[str, Any]:
        m, n = rng.randint(1, 200), rng.randint(1, 200)
        return {
            "side": 0,
            "uplo": rng.randint(0, 1),
            "trans": rng.randint(0, 1),
            "diag": rng.randint(0, 1),
            "m": m,
            "n": n,
            "alpha": _scalar(round(rng.uniform(-2, 2), 3), dtype),
            "lda": m + rng.randint(0, 5),
            "ldb": m + rng.randint(0, 5),
            "batchCount": _draw_batch(rng),
        }

    public = [
        {
            "side": 0,
            "uplo": 1,
            "trans": 0,
            "diag": 0,
            "m": m,
            "n": n,
            "alpha": _scalar(alpha, dtype),
            "lda": m,
            "ldb": m,
            "batchCount": batch,
        }
        for m in (4, 16, 32, 64)
        for n in (4, 16, 32)
        for alpha in (1.0, 0.5, -1.0)
        for batch in (1, 2, 4)
    ]
    smoke = [
        {
            "side": 0,
            "uplo": u,
            "trans": t,
            "diag": d,
            "m": m,
            "n": n,
            "alpha": _scalar(-0.5, dtype),
            "lda": m + 1,
            "ldb": m + 2,
            "batchCount": 2,
        }
        for (u, t, d) in ((1, 0, 0), (0, 1, 0), (1, 1, 1), (0, 0, 1))
        for (m, n) in ((4, 4), (17, 9))
    ]
    return _record(
        routine,
        dtype=dtype,
        description=f"Pointer-array batched triangular solve, {dtype}.",
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        draw=draw,
        reduce_dim=lambda p: p["m"],
        timed=lambda p: p["m"] >= 64 and p["n"] >= 32,
        bytes_moved=lambda c: (
            c.params["batchCount"]
            * (c.params["m"] * (c.params["m"] + 1) // 2 + 2 * c.params["m"] * c.params["n"])
            * itemsize(dtype)
        ),
        flops=lambda c: c.params["batchCount"] * c.params["m"] ** 2 * c.params["n"] * (4 if _complex(dtype) else 1),
        notes=f"Per batch entry: {TRSM_NOTES} {POINTER_ARRAY_NOTES.format(names='Aarray, Barray')}",
        departures=f"{POINTER_ARRAY_DEPARTURE} {TRIANGULAR_DEPARTURE} The public grid keeps the original's flags "
        f"(left, upper, 'N', non-unit); smoke and held-out cases vary uplo, trans and diag and pad "
        f"lda/ldb.",
        judgement_notes=_list_judgement("Barray"),
    )


# --- the records ------------------------------------------------------------------------------------------

_Z_ALPHA_BETA = (
    ([1.0, 0.0], [0.0, 0.0]),
    ([0.0, 0.0], [1.0, 0.0]),
    ([1.0, 0.5], [0.0, 0.0]),
    ([0.5, 0.3], [0.5, -0.2]),
    ([-1.0, 0.0], [1.0, 0.0]),
    ([0.001, 0.001], [0.999, -0.999]),
)
_SMOKE_TRANS = (("N", "N"), ("T", "N"), ("N", "T"), ("T", "T"))
_SMOKE_TRANS_C = (("N", "N"), ("C", "T"), ("T", "C"))
_STRIDED_SMOKE_NOTE = "Smoke and held-out cases also use padded leading dimensions and gaps between batch entries."


def _strided_gemm(name: str, dtype: str, shapes, alpha_beta, batches, smoke_trans=_SMOKE_TRANS) -> OperatorSpec:
    public = with_strides(gemm_points(shapes, alpha_beta, TRANS_NT, dtype), batches)
    smoke_scalars = ([0.5, 0.3], [0.5, -0.2]) if _complex(dtype) else (-0.999, 0.5)
    smoke = with_strides(gemm_points(SMOKE_GEMM_SHAPES[1:], (smoke_scalars,), smoke_trans, dtype, pad=1), (2,), gap=5)
    smoke += with_strides(gemm_points(SMOKE_GEMM_SHAPES[:1], (alpha_beta[0],), (("N", "N"),), dtype), (3,))
    return strided_gemm_record(
        name, dtype, public=public, smoke=smoke, departures=f"{TRANS_STRING_NOTE} {_STRIDED_SMOKE_NOTE}"
    )


def _pointer_gemm(name: str, dtype: str) -> OperatorSpec:
    public = batched_points(gemm_points(GEMM_SHAPES_5, ALPHA_BETA_3, TRANS_NT, dtype), (1, 2, 4))
    smoke = batched_points(gemm_points(SMOKE_GEMM_SHAPES, ((0.5, 0.5),), _SMOKE_TRANS[:3], dtype, pad=1), (2,))
    return pointer_gemm_record(
        name,
        dtype,
        public=public,
        smoke=smoke,
        departures="Smoke and held-out cases also use padded leading dimensions.",
    )


def _strided_gemv(name: str, dtype: str, alpha_beta) -> OperatorSpec:
    transes = ("N", "T", "C") if _complex(dtype) else ("N", "T")
    public = gemv_points(GEMV_SHAPES_9, alpha_beta, ("N", "T"), (1, 2, 4, 8), ((1, 1),), dtype, strided=True)
    smoke_scalars = ([0.5, 0.3], [0.5, -0.2]) if _complex(dtype) else (-0.999, 0.5)
    smoke = gemv_points(
        ((5, 7), (32, 17)), (smoke_scalars,), transes, (2,), ((1, 1), (2, 3)), dtype, strided=True, pad=2, gap=3
    )
    return strided_gemv_record(
        name,
        dtype,
        public=public,
        smoke=smoke,
        departures=f"{TRANS_STRING_NOTE} Smoke and held-out cases also use padded lda, "
        f"incx/incy > 1 and gaps between batch entries"
        f"{' and trans = C' if _complex(dtype) else ''}.",
    )


def _pointer_gemv(
    name: str, dtype: str, public: list[dict[str, Any]] | None = None, departures: str = ""
) -> OperatorSpec:
    transes = ("N", "T", "C") if _complex(dtype) else ("N", "T")
    public = public or gemv_points(GEMV_SHAPES_5, ALPHA_BETA_3, ("N", "T"), (1, 2, 4), ((1, 1),), dtype, strided=False)
    smoke = gemv_points(((5, 7), (32, 17)), ((0.5, 0.5),), transes, (2,), ((1, 1), (2, 3)), dtype, strided=False, pad=2)
    return pointer_gemv_record(
        name,
        dtype,
        public=public,
        smoke=smoke,
        departures=departures or "Smoke and held-out cases also use padded lda and incx/incy > 1.",
    )


def _dgemv_swapped_points() -> list[dict[str, Any]]:
    """The original test's swapped call: row-major A (m, n) passed as column-major A^T (n x m, lda = n)."""
    points = []
    for m, n in GEMV_SHAPES_5:
        for alpha, beta in ALPHA_BETA_3:
            for label in ("N", "T"):
                for batch in (1, 2, 4):
                    points.append(
                        {
                            "trans": "T" if label == "N" else "N",
                            "m": n,
                            "n": m,
                            "alpha": alpha,
                            "beta": beta,
                            "lda": n,
                            "incx": 1,
                            "incy": 1,
                            "batchCount": batch,
                        }
                    )
    return points


_SGEMV_SHAPES = (
    (1, 1),
    (1, 32),
    (32, 1),
    (16, 16),
    (32, 64),
    (64, 128),
    (128, 64),
    (128, 128),
    (128, 256),
    (256, 128),
    (256, 256),
    (17, 33),
    (33, 17),
    (71, 497),
    (497, 71),
    (1024, 4096),
    (4096, 1024),
    (5333, 5333),
)
_SGEMV_POINTS = gemv_points(_SGEMV_SHAPES, ALPHA_BETA_3, ("N", "T"), (1, 4), ((1, 1), (3, 2)), "float32", strided=False)

OPERATORS: list[OperatorSpec] = [
    _strided_gemm("cublasCgemmStridedBatched", "complex64", GEMM_SHAPES_5, ALPHA_BETA_3, (2, 4), _SMOKE_TRANS_C),
    _strided_gemm("cublasCgemmStridedBatched_64", "complex64", GEMM_SHAPES_5, ALPHA_BETA_3, (2, 4), _SMOKE_TRANS_C),
    _pointer_gemv("cublasCgemvBatched_64", "complex64"),
    _strided_gemv("cublasCgemvStridedBatched", "complex64", _Z_ALPHA_BETA),
    _pointer_gemm("cublasDgemmBatched", "float64"),
    _strided_gemm("cublasDgemmStridedBatched", "float64", GEMM_SHAPES_9, ALPHA_BETA_6, (1, 2, 4, 8)),
    _strided_gemm("cublasDgemmStridedBatched_64", "float64", GEMM_SHAPES_5, ALPHA_BETA_3, (1, 2, 4)),
    _pointer_gemv(
        "cublasDgemvBatched",
        "float64",
        public=_dgemv_swapped_points(),
        departures="Public cases keep the original's swapped call (row-major A given as column-major "
        "A^T: trans flipped, m and n exchanged, lda = n). Smoke and held-out cases also use "
        "padded lda and incx/incy > 1.",
    ),
    pointer_trsm_record("cublasDtrsmBatched", "float64"),
    _pointer_gemm("cublasHgemmBatched", "float16"),
    _strided_gemm("cublasHgemmStridedBatched", "float16", GEMM_SHAPES_9, ALPHA_BETA_6, (1, 2, 4, 8)),
    _pointer_gemm("cublasSgemmBatched_64", "float32"),
    _strided_gemm("cublasSgemmStridedBatched", "float32", GEMM_SHAPES_9, ALPHA_BETA_6, (1, 2, 4, 8)),
    _pointer_gemv(
        "cublasSgemvBatched",
        "float32",
        public=_SGEMV_POINTS,
        departures=f"The original's 11,664 points (18 shapes x 9 (alpha, beta) x 2 trans x 4 batch x 3 "
        f"incx x 3 incy) are cut to {len(_SGEMV_POINTS)}: all 18 shapes x 3 (alpha, beta) x 2 "
        f"trans x batch (1, 4) x (incx, incy) in ((1, 1), (3, 2)). Smoke and held-out cases "
        f"also use padded lda.",
    ),
    _strided_gemv("cublasSgemvStridedBatched", "float32", ALPHA_BETA_6),
    pointer_trsm_record("cublasZtrsmBatched", "complex128"),
    _pointer_gemm("cublasZgemmBatched", "complex128"),
    _strided_gemm(
        "cublasZgemmStridedBatched", "complex128", GEMM_SHAPES_9[:-1], _Z_ALPHA_BETA, (1, 2, 4, 8), _SMOKE_TRANS_C
    ),
    _pointer_gemv("cublasZgemvBatched", "complex128"),
    _strided_gemv("cublasZgemvStridedBatched", "complex128", _Z_ALPHA_BETA),
    _strided_gemv("cublasDgemvStridedBatched", "float64", ALPHA_BETA_6),
]

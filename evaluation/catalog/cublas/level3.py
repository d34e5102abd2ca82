"""cuBLAS level-3 and BLAS-like routines (matrix-matrix): gemm, gemmEx, symm, syrk, syrkEx, trsm, geam, dgmm."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import torch

from evaluation.catalog.cublas.blas_memory import (
    apply_operation,
    gemm_update,
    is_left,
    is_unit,
    is_upper,
    matrix_buffer,
    parse_operation,
    read_matrix,
    read_vector,
    stored_shape,
    to_scalar,
    triangle_mask,
    triangular_fill,
    vector_buffer,
    write_matrix,
)
from evaluation.catalog.cublas.level2 import TRIANGULAR_DEPARTURE, symmetric_from_triangle, triangular_operator
from evaluation.catalog.cublas.routine import Routine, blas_record, cases, itemsize, multiply_add_flops
from evaluation.catalog.spec import Call, Case, OperatorSpec

# fp32/complex64 GEMM-like outputs against float64 (EXPLOITS 16): true fp32 stays near 1e-6, TF32 near 1e-3.
FP32_RELATIVE_BOUND = 1e-5
GEMM_SHAPES_9 = (
    (1, 1, 1),
    (16, 16, 16),
    (32, 64, 16),
    (64, 32, 48),
    (128, 256, 64),
    (256, 128, 128),
    (17, 33, 65),
    (128, 128, 128),
    (256, 256, 256),
)
GEMM_SHAPES_5 = ((1, 1, 1), (16, 16, 16), (64, 32, 48), (128, 256, 64), (17, 33, 65))
ALPHA_BETA_3 = ((1.0, 0.0), (0.5, 0.5), (-1.0, 1.0))
ALPHA_BETA_6 = ((1.0, 0.0), (0.0, 1.0), (0.5, 0.5), (-1.0, 1.0), (2.0, -0.5), (0.001, 0.999))
ALPHA_BETA_8 = ALPHA_BETA_6 + ((-0.999, 0.5), (100.001, -1.0))
TRANS_NT = (("N", "N"), ("N", "T"), ("T", "N"), ("T", "T"))
SMOKE_GEMM_SHAPES = ((1, 1, 1), (5, 7, 3), (17, 32, 20))


def _complex(dtype: str) -> bool:
    return dtype.startswith("complex")


def _scalar(value: Any, dtype: str) -> Any:
    if _complex(dtype) and not isinstance(value, (list, tuple)):
        return [float(value), 0.0]
    return value


def _draw_scalar(rng: random.Random, dtype: str) -> Any:
    real = round(rng.uniform(-2, 2), 3)
    return [real, round(rng.uniform(-2, 2), 3)] if _complex(dtype) else real


def _record(
    routine: Routine,
    *,
    dtype: str,
    description: str,
    make_inputs: Callable[[Case, torch.Generator], Call],
    reference: Callable[[Case, Call], Any],
    smoke: list[dict[str, Any]],
    public: list[dict[str, Any]],
    draw: Callable[[random.Random], dict[str, Any]],
    reduce_dim: Callable[[dict[str, Any]], int],
    timed: Callable[[dict[str, Any]], bool],
    bytes_moved: Callable[[Case], int],
    flops: Callable[[Case], int],
    notes: str,
    departures: str = "",
    bound: float | None = None,
) -> OperatorSpec:
    def held_out(rng: random.Random) -> tuple[Case, ...]:
        return cases(routine, [{**draw(rng), "dtype": dtype} for _ in range(6)], reduce_dim=reduce_dim, timed=timed)

    return blas_record(
        routine=routine,
        description=description,
        make_inputs=make_inputs,
        reference=reference,
        smoke=cases(routine, [{**p, "dtype": dtype} for p in smoke], reduce_dim=reduce_dim, timed=False),
        public=cases(routine, [{**p, "dtype": dtype} for p in public], reduce_dim=reduce_dim, timed=timed),
        held_out=held_out,
        bytes_moved=bytes_moved,
        flops=flops,
        prompt_notes=notes,
        departures=departures,
        fp64_relative_bound=bound,
    )


def fp32_bound(dtype: str) -> float | None:
    return FP32_RELATIVE_BOUND if dtype in ("float32", "complex64") else None


# --- gemm -------------------------------------------------------------------------------------------------

GEMM = ("transa", "transb", "m", "n", "k", "alpha", "A", "lda", "B", "ldb", "beta", "C", "ldc")
GEMM_EX = (
    "transa",
    "transb",
    "m",
    "n",
    "k",
    "alpha",
    "A",
    "Atype",
    "lda",
    "B",
    "Btype",
    "ldb",
    "beta",
    "C",
    "Ctype",
    "ldc",
)
CUDA_R_32F, CUDA_C_32F = 0, 8


def gemm_points(shapes, alpha_beta, transes, dtype: str, pad: int = 0) -> list[dict[str, Any]]:
    points = []
    for m, n, k in shapes:
        for alpha, beta in alpha_beta:
            for ta, tb in transes:
                a_rows = stored_shape(parse_operation(ta), m, k)[0]
                b_rows = stored_shape(parse_operation(tb), k, n)[0]
                points.append(
                    {
                        "transa": ta,
                        "transb": tb,
                        "m": m,
                        "n": n,
                        "k": k,
                        "alpha": _scalar(alpha, dtype),
                        "beta": _scalar(beta, dtype),
                        "lda": a_rows + pad,
                        "ldb": b_rows + pad,
                        "ldc": m + pad,
                    }
                )
    return points


def draw_gemm_point(rng: random.Random, dtype: str, transes: tuple[str, ...], *, limit: int = 700) -> dict[str, Any]:
    m, n, k = rng.randint(1, limit), rng.randint(1, limit), rng.randint(1, limit)
    ta, tb = rng.choice(transes), rng.choice(transes)
    return {
        "transa": ta,
        "transb": tb,
        "m": m,
        "n": n,
        "k": k,
        "alpha": _draw_scalar(rng, dtype),
        "beta": _draw_scalar(rng, dtype),
        "lda": stored_shape(parse_operation(ta), m, k)[0] + rng.randint(0, 7),
        "ldb": stored_shape(parse_operation(tb), k, n)[0] + rng.randint(0, 7),
        "ldc": m + rng.randint(0, 7),
    }


def gemm_timed(point: dict[str, Any]) -> bool:
    return point["m"] >= 128 and point["n"] >= 128 and point["k"] >= 64


def gemm_reduce(point: dict[str, Any]) -> int:
    return point["k"]


def gemm_bytes(dtype: str, batch: Callable[[Case], int] = lambda case: 1) -> Callable[[Case], int]:
    def count(case: Case) -> int:
        p = case.params
        return batch(case) * (p["m"] * p["k"] + p["k"] * p["n"] + 2 * p["m"] * p["n"]) * itemsize(dtype)

    return count


def gemm_flops(dtype: str, batch: Callable[[Case], int] = lambda case: 1) -> Callable[[Case], int]:
    def count(case: Case) -> int:
        p = case.params
        return batch(case) * p["m"] * p["n"] * p["k"] * multiply_add_flops(dtype)

    return count


def gemm_on(a: dict[str, Any], A: torch.Tensor, B: torch.Tensor, C: torch.Tensor) -> None:
    """C = alpha*op(A)*op(B) + beta*C for one (non-batched) problem, arguments bound by name in ``a``."""
    opa, opb = parse_operation(a["transa"]), parse_operation(a["transb"])
    m, n, k = a["m"], a["n"], a["k"]
    left = apply_operation(read_matrix(A, *stored_shape(opa, m, k), a["lda"]), opa)
    right = apply_operation(read_matrix(B, *stored_shape(opb, k, n), a["ldb"]), opb)
    old = read_matrix(C, m, n, a["ldc"])
    write_matrix(C, m, n, a["ldc"], gemm_update(a["alpha"], left @ right, a["beta"], old))


GEMM_NOTES = (
    "C = alpha*op(A)*op(B) + beta*C; C is m x n (lead dim ldc), op(A) m x k, op(B) k x n; A is stored "
    "m x k for 'N' and k x m for 'T'/'C' (lead dim lda), likewise B."
)


def gemm_record(
    name: str,
    dtype: str,
    *,
    public: list[dict[str, Any]],
    smoke: list[dict[str, Any]],
    transes: tuple[str, ...],
    departures: str = "",
    typed: bool = False,
) -> OperatorSpec:
    routine = Routine(name, GEMM_EX if typed else GEMM, ("C",), "C")
    type_code = CUDA_C_32F if _complex(dtype) else CUDA_R_32F

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        opa, opb = parse_operation(p["transa"]), parse_operation(p["transb"])
        values = dict(
            p,
            alpha=to_scalar(p["alpha"]),
            beta=to_scalar(p["beta"]),
            A=matrix_buffer(*stored_shape(opa, p["m"], p["k"]), p["lda"], dtype, generator),
            B=matrix_buffer(*stored_shape(opb, p["k"], p["n"]), p["ldb"], dtype, generator),
            C=matrix_buffer(p["m"], p["n"], p["ldc"], dtype, generator),
            Atype=type_code,
            Btype=type_code,
            Ctype=type_code,
        )
        return routine.call(values)

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        gemm_on(a, a["A"], a["B"], a["C"])
        return a["C"]

    typed_note = " Atype/Btype/Ctype are cudaDataType ints (0 = CUDA_R_32F: all fp32)." if typed else ""
    return _record(
        routine,
        dtype=dtype,
        description=f"General matrix multiply C = alpha*op(A)*op(B) + beta*C, {dtype}.",
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        draw=lambda rng: draw_gemm_point(rng, dtype, transes),
        reduce_dim=gemm_reduce,
        timed=gemm_timed,
        bytes_moved=gemm_bytes(dtype),
        flops=gemm_flops(dtype),
        notes=GEMM_NOTES + typed_note,
        departures=departures,
        bound=fp32_bound(dtype),
    )


# --- symm (complex symmetric) -----------------------------------------------------------------------------

SYMM = ("side", "uplo", "m", "n", "alpha", "A", "lda", "B", "ldb", "beta", "C", "ldc")


def symm_record(name: str, dtype: str) -> OperatorSpec:
    routine = Routine(name, SYMM, ("C",), "C")

    def order(p: dict[str, Any]) -> int:
        return p["m"] if is_left(p["side"]) else p["n"]

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        size = order(p)
        return routine.call(
            dict(
                p,
                alpha=to_scalar(p["alpha"]),
                beta=to_scalar(p["beta"]),
                A=matrix_buffer(size, size, p["lda"], dtype, generator),
                B=matrix_buffer(p["m"], p["n"], p["ldb"], dtype, generator),
                C=matrix_buffer(p["m"], p["n"], p["ldc"], dtype, generator),
            )
        )

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        m, n = a["m"], a["n"]
        size = m if is_left(a["side"]) else n
        symmetric = symmetric_from_triangle(read_matrix(a["A"], size, size, a["lda"]), is_upper(a["uplo"]))
        other = read_matrix(a["B"], m, n, a["ldb"])
        product_ = symmetric @ other if is_left(a["side"]) else other @ symmetric
        write_matrix(
            a["C"], m, n, a["ldc"], gemm_update(a["alpha"], product_, a["beta"], read_matrix(a["C"], m, n, a["ldc"]))
        )
        return a["C"]

    def draw(rng: random.Random) -> dict[str, Any]:
        m, n = rng.randint(1, 500), rng.randint(1, 500)
        side = rng.randint(0, 1)
        size = m if side == 0 else n
        return {
            "side": side,
            "uplo": rng.randint(0, 1),
            "m": m,
            "n": n,
            "alpha": _draw_scalar(rng, dtype),
            "beta": _draw_scalar(rng, dtype),
            "lda": size + rng.randint(0, 5),
            "ldb": m + rng.randint(0, 5),
            "ldc": m + rng.randint(0, 5),
        }

    public = [
        {
            "side": s,
            "uplo": 1,
            "m": n,
            "n": n,
            "alpha": _scalar(a, dtype),
            "beta": _scalar(b, dtype),
            "lda": n,
            "ldb": n,
            "ldc": n,
        }
        for n in (1, 32, 64, 128, 160)
        for a in (1.0, 0.0, -1.0)
        for b in (0.0, 0.5)
        for s in (0, 1)
    ]
    smoke = [
        {
            "side": s,
            "uplo": u,
            "m": m,
            "n": n,
            "alpha": [0.5, -1.0],
            "beta": [0.5, 0.25],
            "lda": (m if s == 0 else n) + 2,
            "ldb": m + 1,
            "ldc": m + 3,
        }
        for s in (0, 1)
        for u in (0, 1)
        for (m, n) in ((1, 1), (17, 9))
    ]
    return _record(
        routine,
        dtype=dtype,
        description=f"C = alpha*A*B + beta*C (left) or alpha*B*A + beta*C (right), A complex symmetric, {dtype}.",
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        draw=draw,
        reduce_dim=order,
        timed=lambda p: p["n"] >= 128,
        bytes_moved=lambda c: (order(c.params) ** 2 // 2 + 3 * c.params["m"] * c.params["n"]) * itemsize(dtype),
        flops=lambda c: c.params["m"] * c.params["n"] * order(c.params) * multiply_add_flops(dtype),
        notes="side = 0 (left): C = alpha*A*B + beta*C with A m x m; side = 1 (right): C = alpha*B*A + beta*C "
        "with A n x n. A is symmetric (A = A^T, no conjugation) and only its uplo triangle is read: the "
        "other triangle holds unrelated values. B and C are m x n.",
        departures="The original's A was fully symmetric (R + R^T) with uplo = 1, so reading the wrong triangle "
        "went unnoticed; ours holds unrelated values outside the uplo triangle (cuBLAS never reads "
        "them). Smoke and held-out cases also use uplo = 0, m != n and padded leading dimensions.",
        bound=fp32_bound(dtype),
    )


# --- syrk / syrkEx ----------------------------------------------------------------------------------------

SYRK = ("uplo", "trans", "n", "k", "alpha", "A", "lda", "beta", "C", "ldc")
SYRK_EX = ("uplo", "trans", "n", "k", "alpha", "A", "Atype", "lda", "beta", "C", "Ctype", "ldc")


def syrk_record(
    name: str,
    dtype: str,
    *,
    public: list[dict[str, Any]],
    smoke: list[dict[str, Any]],
    departures: str,
    typed: bool = False,
) -> OperatorSpec:
    routine = Routine(name, SYRK_EX if typed else SYRK, ("C",), "C")

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        operation = parse_operation(p["trans"])
        return routine.call(
            dict(
                p,
                alpha=to_scalar(p["alpha"]),
                beta=to_scalar(p["beta"]),
                A=matrix_buffer(*stored_shape(operation, p["n"], p["k"]), p["lda"], dtype, generator),
                C=matrix_buffer(p["n"], p["n"], p["ldc"], dtype, generator),
                Atype=CUDA_C_32F,
                Ctype=CUDA_C_32F,
            )
        )

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        n, k = a["n"], a["k"]
        operation = parse_operation(a["trans"])
        if operation == "C":
            raise ValueError("syrk is symmetric: trans must be 'N' or 'T' (cuBLAS rejects 'C')")
        factor = apply_operation(read_matrix(a["A"], *stored_shape(operation, n, k), a["lda"]), operation)
        old = read_matrix(a["C"], n, n, a["ldc"])
        updated = gemm_update(a["alpha"], factor @ factor.transpose(0, 1), a["beta"], old)
        keep = ~triangle_mask(n, is_upper(a["uplo"]), old.device)
        write_matrix(a["C"], n, n, a["ldc"], updated, keep=keep)
        return a["C"]

    def draw(rng: random.Random) -> dict[str, Any]:
        n, k, trans = rng.randint(1, 700), rng.randint(1, 700), rng.randint(0, 1)
        return {
            "uplo": rng.randint(0, 1),
            "trans": trans,
            "n": n,
            "k": k,
            "alpha": _draw_scalar(rng, dtype),
            "beta": _draw_scalar(rng, dtype),
            "lda": (n if trans == 0 else k) + rng.randint(0, 7),
            "ldc": n + rng.randint(0, 7),
        }

    typed_note = " Atype/Ctype are cudaDataType ints (8 = CUDA_C_32F)." if typed else ""
    return _record(
        routine,
        dtype=dtype,
        description=f"Symmetric rank-k update of one triangle of C, {dtype}.",
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        draw=draw,
        reduce_dim=lambda p: p["k"],
        timed=lambda p: p["n"] >= 1024,
        bytes_moved=lambda c: (c.params["n"] * c.params["k"] + c.params["n"] * (c.params["n"] + 1)) * itemsize(dtype),
        flops=lambda c: c.params["n"] * (c.params["n"] + 1) // 2 * c.params["k"] * multiply_add_flops(dtype),
        notes="On the uplo triangle of the n x n matrix C (diagonal included): C = alpha*op(A)*op(A)^T + beta*C "
        "(no conjugation), the other triangle untouched. trans (int) 0 = 'N': A is n x k; 1 = 'T': A is "
        "k x n." + typed_note,
        departures=departures,
        bound=fp32_bound(dtype),
    )


def syrk_points(ns, ks, uplos, transes, alpha_beta, dtype: str, pad: int = 0) -> list[dict[str, Any]]:
    return [
        {
            "uplo": u,
            "trans": t,
            "n": n,
            "k": k(n) if callable(k) else k,
            "alpha": _scalar(a, dtype),
            "beta": _scalar(b, dtype),
            "lda": (n if t == 0 else (k(n) if callable(k) else k)) + pad,
            "ldc": n + pad,
        }
        for n in ns
        for k in ks
        for u in uplos
        for t in transes
        for (a, b) in alpha_beta
    ]


# --- trsm -------------------------------------------------------------------------------------------------

TRSM = ("side", "uplo", "trans", "diag", "m", "n", "alpha", "A", "lda", "B", "ldb")


def trsm_solve(a: dict[str, Any], A: torch.Tensor, B: torch.Tensor) -> None:
    """B = alpha * op(A)^-1 * B (left) or alpha * B * op(A)^-1 (right), reading only A's uplo triangle."""
    m, n = a["m"], a["n"]
    left = is_left(a["side"])
    size = m if left else n
    matrix, upper = triangular_operator(A, size, a["lda"], a["uplo"], a["trans"])
    rhs = a["alpha"] * read_matrix(B, m, n, a["ldb"])
    solution = torch.linalg.solve_triangular(matrix, rhs, upper=upper, left=left, unitriangular=is_unit(a["diag"]))
    write_matrix(B, m, n, a["ldb"], solution)


def trsm_inputs(p: dict[str, Any], dtype: str, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    size = p["m"] if p["side"] == 0 else p["n"]
    matrix = matrix_buffer(size, size, p["lda"], dtype, generator)
    triangular_fill(matrix, size, p["lda"], p["uplo"] == 1, generator)
    return matrix, matrix_buffer(p["m"], p["n"], p["ldb"], dtype, generator)


TRSM_NOTES = (
    "Solve op(A)*X = alpha*B (side = 0, left; A m x m) or X*op(A) = alpha*B (side = 1, right; A n x n) "
    "and store X in B (m x n, lead dim ldb). Only A's uplo triangle is read (the other holds unrelated "
    "values); diag = 1: unit diagonal, the stored diagonal is not read. side/uplo/trans/diag are ints."
)


def trsm_record(name: str, dtype: str) -> OperatorSpec:
    routine = Routine(name, TRSM, ("B",), "B")

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        matrix, rhs = trsm_inputs(p, dtype, generator)
        return routine.call(dict(p, A=matrix, B=rhs))

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        trsm_solve(a, a["A"], a["B"])
        return a["B"]

    def draw(rng: random.Random) -> dict[str, Any]:
        m, n = rng.randint(1, 300), rng.randint(1, 300)
        return {
            "side": 0,
            "uplo": rng.randint(0, 1),
            "trans": rng.randint(0, 1),
            "diag": rng.randint(0, 1),
            "m": m,
            "n": n,
            "alpha": round(rng.uniform(-2, 2), 3),
            "lda": m + rng.randint(0, 7),
            "ldb": m + rng.randint(0, 7),
        }

    public = [
        {"side": 0, "uplo": u, "trans": t, "diag": d, "m": m, "n": n, "alpha": 1.0, "lda": m, "ldb": m}
        for m in (1, 16, 48, 64)
        for n in (1, 8, 16)
        for t in (0, 1)
        for u in (0, 1)
        for d in (0, 1)
    ]
    smoke = [
        {"side": 0, "uplo": u, "trans": t, "diag": d, "m": m, "n": n, "alpha": alpha, "lda": m + pad, "ldb": m + pad}
        for u in (0, 1)
        for t in (0, 1)
        for (d, m, n, alpha, pad) in ((0, 17, 5, 1.0, 0), (1, 32, 8, -0.5, 2))
    ]
    return _record(
        routine,
        dtype=dtype,
        description="Triangular solve with multiple right-hand sides, float32.",
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        draw=draw,
        reduce_dim=lambda p: p["m"],
        timed=lambda p: p["m"] >= 48 and p["n"] >= 8,
        bytes_moved=lambda c: (
            (c.params["m"] * (c.params["m"] + 1) // 2 + 2 * c.params["m"] * c.params["n"]) * itemsize(dtype)
        ),
        flops=lambda c: c.params["m"] * c.params["m"] * c.params["n"],
        notes=TRSM_NOTES,
        departures=TRIANGULAR_DEPARTURE + " Held-out cases also use alpha != 1 and padded lda/ldb.",
        bound=fp32_bound(dtype),
    )


# --- geam / dgmm ------------------------------------------------------------------------------------------

GEAM = ("transa", "transb", "m", "n", "alpha", "A", "lda", "beta", "B", "ldb", "C", "ldc")


def geam_record(name: str, dtype: str) -> OperatorSpec:
    routine = Routine(name, GEAM, ("C",), "C")

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        opa, opb = parse_operation(p["transa"]), parse_operation(p["transb"])
        return routine.call(
            dict(
                p,
                A=matrix_buffer(*stored_shape(opa, p["m"], p["n"]), p["lda"], dtype, generator),
                B=matrix_buffer(*stored_shape(opb, p["m"], p["n"]), p["ldb"], dtype, generator),
                C=matrix_buffer(p["m"], p["n"], p["ldc"], dtype, generator),
            )
        )

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        m, n = a["m"], a["n"]
        opa, opb = parse_operation(a["transa"]), parse_operation(a["transb"])
        result = a["alpha"] * apply_operation(read_matrix(a["A"], *stored_shape(opa, m, n), a["lda"]), opa)
        if a["beta"] != 0:
            result = result + a["beta"] * apply_operation(read_matrix(a["B"], *stored_shape(opb, m, n), a["ldb"]), opb)
        write_matrix(a["C"], m, n, a["ldc"], result)
        return a["C"]

    def point(ta: int, tb: int, m: int, n: int, alpha: float, beta: float, pad: int = 0) -> dict[str, Any]:
        return {
            "transa": ta,
            "transb": tb,
            "m": m,
            "n": n,
            "alpha": alpha,
            "beta": beta,
            "lda": (m if ta == 0 else n) + pad,
            "ldb": (m if tb == 0 else n) + pad,
            "ldc": m + pad,
        }

    def draw(rng: random.Random) -> dict[str, Any]:
        return point(
            rng.randint(0, 1),
            rng.randint(0, 1),
            rng.randint(1, 2000),
            rng.randint(1, 2000),
            round(rng.uniform(-2, 2), 3),
            round(rng.uniform(-2, 2), 3),
            rng.randint(0, 7),
        )

    public = [
        point(ta, tb, m, n, a, b)
        for m in (1, 32, 1024)
        for n in (1, 71, 1024)
        for (a, b) in ALPHA_BETA_3
        for ta in (0, 1)
        for tb in (0, 1)
    ]
    smoke = [
        point(ta, tb, m, n, a, b, pad)
        for ta in (0, 1)
        for tb in (0, 1)
        for (m, n, a, b, pad) in ((5, 7, 0.5, 0.5, 0), (17, 32, -1.0, 1.0, 3), (9, 4, 2.0, 0.0, 1))
    ]
    return _record(
        routine,
        dtype=dtype,
        description="Matrix add/transpose C = alpha*op(A) + beta*op(B), float32.",
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        draw=draw,
        reduce_dim=lambda p: 1,
        timed=lambda p: p["m"] >= 128 and p["n"] >= 128,
        bytes_moved=lambda c: 3 * c.params["m"] * c.params["n"] * itemsize(dtype),
        flops=lambda c: 3 * c.params["m"] * c.params["n"],
        notes="C = alpha*op(A) + beta*op(B), all m x n after op; transa/transb are ints here (0 = 'N', 1 = 'T'); "
        "A is stored m x n for 0 and n x m for 1 (lead dim lda), likewise B. C's old values are not read; "
        "when beta == 0, B is not read.",
        departures="Smoke and held-out cases also use padded leading dimensions.",
    )


DGMM = ("mode", "m", "n", "A", "lda", "x", "incx", "C", "ldc")


def dgmm_record(name: str, dtype: str) -> OperatorSpec:
    routine = Routine(name, DGMM, ("C",), "C")

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        length = p["m"] if p["mode"] == 0 else p["n"]
        return routine.call(
            dict(
                p,
                A=matrix_buffer(p["m"], p["n"], p["lda"], dtype, generator),
                x=vector_buffer(length, p["incx"], dtype, generator),
                C=matrix_buffer(p["m"], p["n"], p["ldc"], dtype, generator),
            )
        )

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        m, n = a["m"], a["n"]
        matrix = read_matrix(a["A"], m, n, a["lda"])
        left = is_left(a["mode"])
        scale = read_vector(a["x"], m if left else n, a["incx"])
        result = matrix * (scale.reshape(m, 1) if left else scale.reshape(1, n))
        write_matrix(a["C"], m, n, a["ldc"], result)
        return a["C"]

    def point(mode: int, m: int, n: int, inc: int, pad: int = 0) -> dict[str, Any]:
        return {"mode": mode, "m": m, "n": n, "lda": m + pad, "incx": inc, "ldc": m + pad}

    def draw(rng: random.Random) -> dict[str, Any]:
        return point(
            rng.randint(0, 1), rng.randint(1, 3000), rng.randint(1, 3000), rng.randint(1, 4), rng.randint(0, 7)
        )

    public = [point(mode, n, n, inc) for n in (1, 32, 71, 1024, 4096, 5333) for inc in (1, 2, 3) for mode in (0, 1)]
    smoke = [
        point(mode, m, n, inc, pad)
        for mode in (0, 1)
        for (m, n, inc, pad) in ((1, 1, 1, 0), (17, 9, 2, 3), (32, 32, 3, 0))
    ]
    return _record(
        routine,
        dtype=dtype,
        description="Diagonal scaling C = diag(x)*A (left) or A*diag(x) (right), float32.",
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        draw=draw,
        reduce_dim=lambda p: 1,
        timed=lambda p: p["n"] >= 1024,
        bytes_moved=lambda c: 2 * c.params["m"] * c.params["n"] * itemsize(dtype),
        flops=lambda c: c.params["m"] * c.params["n"],
        notes="mode (int) 0 = left: C(i, j) = x[i*incx] * A(i, j), x has m elements; 1 = right: C(i, j) = "
        "A(i, j) * x[j*incx], x has n elements. A and C are m x n; C's old values are not read.",
        departures="Each original case made two calls (left, then right); ours are two cases (mode axis). Smoke "
        "and held-out cases also use m != n and padded leading dimensions.",
    )


_CGEMM_SHAPES = (
    (1, 1, 1),
    (16, 16, 16),
    (17, 33, 65),
    (64, 32, 48),
    (128, 256, 64),
    (256, 256, 256),
    (1024, 1024, 256),
    (4096, 1024, 64),
    (1024, 4096, 32),
    (5333, 71, 33),
    (71, 5333, 17),
    (5333, 5333, 71),
)
_CGEMM_ALPHA_BETA = (([1.0, 0.0], [0.0, 0.0]), ([0.5, -0.5], [0.5, 0.5]), ([-1.0, 0.0], [1.0, 0.0]))
_TRANS_NTC = tuple((a, b) for a in "NTC" for b in "NTC")
_CGEMM_POINTS = gemm_points(_CGEMM_SHAPES, _CGEMM_ALPHA_BETA, _TRANS_NTC, "complex64")
_CSYRK_POINTS = syrk_points(
    (1, 17, 32, 33, 71, 160, 497, 1024, 4096),
    (1, 17, 71, 497),
    (0, 1),
    (0, 1),
    (([1.0, 0.0], [0.0, 0.0]), ([0.5, -0.5], [-1.0, 0.25])),
    "complex64",
)

OPERATORS: list[OperatorSpec] = [
    gemm_record(
        "cublasCgemm_v2",
        "complex64",
        transes=("N", "T", "C"),
        public=_CGEMM_POINTS,
        smoke=gemm_points(
            SMOKE_GEMM_SHAPES[1:],
            (([0.5, -0.5], [0.5, 0.5]),),
            (("N", "N"), ("T", "C"), ("C", "T"), ("C", "N")),
            "complex64",
            pad=2,
        ),
        departures=f"The original's 1,683 points (17 shapes x 11 (alpha, beta) x 9 trans pairs) are cut to "
        f"{len(_CGEMM_POINTS)}: 12 of its shapes (the largest kept) x 3 (alpha, beta) pairs (one with "
        f"imaginary parts) x the 9 trans pairs. Its baseline was plain PyTorch; ours is cuBLAS.",
    ),
    syrk_record(
        "cublasCsyrkEx",
        "complex64",
        typed=True,
        public=_CSYRK_POINTS,
        smoke=syrk_points((1, 17, 32), (9,), (0, 1), (0, 1), (([0.5, -0.5], [-1.0, 0.25]),), "complex64", pad=2),
        departures=f"The original's 13,860 points are cut to {len(_CSYRK_POINTS)} (n up to 4096, 4 of its k "
        f"values, 2 of its 35 (alpha, beta) pairs) and its trans = 2 ('C') third is dropped: cuBLAS "
        f"rejects 'C' for a symmetric rank-k update (CUBLAS_STATUS_INVALID_VALUE, C untouched; the "
        f"original ignored the status and compared an unchanged C), so those cases test nothing.",
    ),
    symm_record("cublasCsymm_v2", "complex64"),
    geam_record("cublasSgeam", "float32"),
    dgmm_record("cublasSdgmm", "float32"),
    gemm_record(
        "cublasSgemmEx",
        "float32",
        transes=("N", "T"),
        typed=True,
        public=gemm_points(GEMM_SHAPES_9, ALPHA_BETA_3, TRANS_NT, "float32"),
        smoke=gemm_points(SMOKE_GEMM_SHAPES, ((0.5, 0.5),), TRANS_NT, "float32", pad=1),
        departures="Smoke and held-out cases also use padded leading dimensions.",
    ),
    gemm_record(
        "cublasSgemm_v2",
        "float32",
        transes=("N", "T"),
        public=gemm_points(GEMM_SHAPES_9 + ((71, 71, 71), (33, 71, 497)), ALPHA_BETA_8, TRANS_NT, "float32"),
        smoke=gemm_points(SMOKE_GEMM_SHAPES, ((-0.999, 0.5),), TRANS_NT, "float32", pad=1),
        departures="Smoke and held-out cases also use padded leading dimensions.",
    ),
    syrk_record(
        "cublasSsyrk_v2",
        "float32",
        public=syrk_points(
            (1, 32, 71, 1024, 4096, 5333),
            (lambda n: max(1, n // 2),),
            (0,),
            (0, 1),
            [(a, 0.25) for a in (1.0, 0.0, -0.999, 0.5, 100.001)],
            "float32",
        ),
        smoke=syrk_points((1, 17, 32), (9,), (0, 1), (0, 1), ((0.5, 0.25),), "float32", pad=2),
        departures="Smoke and held-out cases also use uplo = 1, k unrelated to n and padded leading dimensions.",
    ),
    trsm_record("cublasStrsm_v2", "float32"),
]

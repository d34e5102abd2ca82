"""cuBLAS level-1 routines (vector-vector): axpy, scal, copy, swap, dot, asum."""

from __future__ import annotations

import random
from typing import Any

import torch

from evaluation.catalog.cublas.blas_memory import read_vector, vector_buffer, write_vector
from evaluation.catalog.cublas.routine import Routine, blas_record, cases, itemsize, multiply_add_flops, product
from evaluation.catalog.inputs import random_values
from evaluation.catalog.spec import Call, Case, OperatorSpec

SAXPY_SIZES = (1, 32, 71, 160, 497, 1024, 4113, 4096, 5333)
SAXPY_ALPHAS = (1.0, 0.0, 0.001, -0.999, 100.001, -111.999, 0.5, -0.5)
DOT_SIZES = (1, 17, 32, 33, 71, 160, 497, 1024, 4113, 4096, 5333)
SHORT_SIZES = (1, 32, 71, 1024, 4096, 5333)
SMOKE_SIZES = (1, 17, 64)


def _is_large(point: dict[str, Any]) -> bool:
    return point["n"] >= 1024


def _no_reduction(point: dict[str, Any]) -> int:
    return 1


def _reduce_n(point: dict[str, Any]) -> int:
    return point["n"]


def _draw_n(rng: random.Random) -> int:
    return rng.choice((rng.randint(2, 300), rng.randint(300, 9000)))


# --- routines ---------------------------------------------------------------------------------------------


def _axpy(kind: str, name: str, dtype: str) -> Routine:
    layouts = {
        "axpy": (("n", "alpha", "x", "incx", "y", "incy"), ("y",), "y"),
        "scal": (("n", "alpha", "x", "incx"), ("x",), "x"),
        "copy": (("n", "x", "incx", "y", "incy"), ("y",), "y"),
        "swap": (("n", "x", "incx", "y", "incy"), ("x", "y"), "x"),
        "dot": (("n", "x", "incx", "y", "incy", "result"), ("result",), "result"),
        "dotc": (("n", "x", "incx", "y", "incy", "result"), ("result",), "result"),
        "asum": (("n", "x", "incx", "result"), ("result",), "result"),
    }
    params, mutates, returns = layouts[kind]
    return Routine(name, params, mutates, returns)


def level1_record(
    kind: str,
    name: str,
    dtype: str,
    *,
    description: str,
    public_points: list[dict[str, Any]],
    smoke_points: list[dict[str, Any]],
    departures: str = "",
) -> OperatorSpec:
    routine = _axpy(kind, name, dtype)
    reduce_dim = _reduce_n if kind in ("dot", "dotc", "asum") else _no_reduction
    has_y = "y" in routine.params
    has_alpha = "alpha" in routine.params

    def make_inputs(case: Case, generator: torch.Generator) -> Call:
        p = case.params
        values: dict[str, Any] = {
            "n": p["n"],
            "incx": p["incx"],
            "x": vector_buffer(p["n"], p["incx"], dtype, generator),
        }
        if has_y:
            values["incy"] = p["incy"]
            values["y"] = vector_buffer(p["n"], p["incy"], dtype, generator)
        if has_alpha:
            values["alpha"] = p["alpha"]
        if "result" in routine.params:
            # cuBLAS overwrites *result; a random start catches kernels that accumulate into it.
            values["result"] = random_values((1,), getattr(torch, p["dtype"]), generator)
        return routine.call(values)

    def reference(case: Case, call: Call) -> Any:
        a = routine.bind(call)
        n, incx = a["n"], a["incx"]
        x = read_vector(a["x"], n, incx)
        if kind == "scal":
            write_vector(a["x"], n, incx, a["alpha"] * x)
            return a["x"]
        if kind == "asum":
            a["result"].copy_(x.abs().sum().reshape(1).to(a["result"].dtype))
            return a["result"]
        incy = a["incy"]
        y = read_vector(a["y"], n, incy)
        if kind == "axpy":
            write_vector(a["y"], n, incy, y + a["alpha"] * x)
        elif kind == "copy":
            write_vector(a["y"], n, incy, x)
        elif kind == "swap":
            write_vector(a["y"], n, incy, x)
            write_vector(a["x"], n, incx, y)
        else:
            left = x.conj() if kind == "dotc" else x
            a["result"].copy_((left * y).sum().reshape(1).to(a["result"].dtype))
            return a["result"]
        return a[routine.returns]

    def held_out(rng: random.Random) -> list[Case]:
        points = []
        for _ in range(6):
            point: dict[str, Any] = {"n": _draw_n(rng), "incx": rng.randint(1, 4), "dtype": dtype}
            if has_y:
                point["incy"] = rng.randint(1, 4)
            if has_alpha:
                point["alpha"] = _draw_alpha(rng, dtype)
            points.append(point)
        return list(cases(routine, points, reduce_dim=reduce_dim, timed=_is_large))

    def bytes_moved(case: Case) -> int:
        n = case.params["n"]
        vectors = {"axpy": 3, "scal": 2, "copy": 2, "swap": 4, "dot": 2, "dotc": 2, "asum": 1}[kind]
        return (vectors * n + (1 if "result" in routine.params else 0)) * itemsize(dtype)

    def flops(case: Case) -> int:
        n = case.params["n"]
        if kind in ("copy", "swap"):
            return 0
        if kind == "asum":
            return 2 * n
        if kind == "scal":
            return n * (6 if dtype.startswith("complex") else 1)
        return n * multiply_add_flops(dtype)

    notes = {
        "axpy": "y[i*incy] += alpha * x[i*incx] for i < n.",
        "scal": "x[i*incx] *= alpha for i < n.",
        "copy": "y[i*incy] = x[i*incx] for i < n.",
        "swap": "x[i*incx] and y[i*incy] exchange values for i < n (both are compared).",
        "dot": "result[0] = sum_i x[i*incx] * y[i*incy] (no conjugation); result is a 1-element tensor on the "
        "device (device pointer mode), overwritten.",
        "dotc": "result[0] = sum_i conj(x[i*incx]) * y[i*incy]; result is a 1-element tensor on the device "
        "(device pointer mode), overwritten.",
        "asum": "result[0] = sum_i |x[i*incx]|; result is a 1-element tensor on the device (device pointer "
        "mode), overwritten.",
    }[kind]
    judgement_notes = ""
    if kind in ("dot", "dotc", "asum"):
        judgement_notes = (
            "The routine's value is compared through the 1-element `result` tensor it writes "
            "(allclose, reduce_dim = n); whatever the wrapper returns is ignored."
        )
    return blas_record(
        routine=routine,
        description=description,
        make_inputs=make_inputs,
        reference=reference,
        smoke=cases(routine, [{**p, "dtype": dtype} for p in smoke_points], reduce_dim=reduce_dim, timed=False),
        public=cases(routine, [{**p, "dtype": dtype} for p in public_points], reduce_dim=reduce_dim, timed=_is_large),
        held_out=held_out,
        bytes_moved=bytes_moved,
        flops=flops,
        prompt_notes=notes,
        judgement_notes=judgement_notes,
        departures=departures,
    )


def _draw_alpha(rng: random.Random, dtype: str) -> Any:
    real = round(rng.uniform(-3, 3), 3)
    return [real, round(rng.uniform(-3, 3), 3)] if dtype.startswith("complex") else real


REDUCE_N_NOTE = (
    "reduce_dim is n (the reduction length, as our protocol defines it) where the original used "
    "the default 1; the result starts random instead of zero (cuBLAS overwrites it)."
)
INCS3 = (1, 2, 3)

OPERATORS: list[OperatorSpec] = [
    level1_record(
        "copy",
        "cublasCcopy_v2",
        "complex64",
        description="Strided copy of a complex64 vector.",
        public_points=product(n=DOT_SIZES, incx=INCS3, incy=INCS3),
        smoke_points=product(n=SMOKE_SIZES, incx=(1, 3), incy=(2,)),
    ),
    level1_record(
        "dot",
        "cublasCdotu_v2",
        "complex64",
        description="Unconjugated complex64 dot product.",
        public_points=product(n=DOT_SIZES, incx=INCS3, incy=INCS3),
        smoke_points=product(n=SMOKE_SIZES, incx=(1, 3), incy=(2,)),
        departures=REDUCE_N_NOTE,
    ),
    level1_record(
        "asum",
        "cublasDasum_v2",
        "float64",
        description="Sum of absolute values of a float64 vector.",
        public_points=product(n=SHORT_SIZES, incx=INCS3),
        smoke_points=product(n=SMOKE_SIZES, incx=(1, 3)),
        departures=REDUCE_N_NOTE,
    ),
    level1_record(
        "axpy",
        "cublasDaxpy_v2",
        "float64",
        description="y += alpha*x on strided float64 vectors.",
        public_points=product(n=SHORT_SIZES, alpha=(1.0, 0.0, -0.5, 100.001), incx=INCS3, incy=(1, 2)),
        smoke_points=product(n=SMOKE_SIZES, alpha=(-0.5,), incx=(1, 3), incy=(2,)),
    ),
    level1_record(
        "copy",
        "cublasDcopy_v2",
        "float64",
        description="Strided copy of a float64 vector.",
        public_points=product(n=(1, 32, 71, 497, 1024, 4096, 5333), incx=INCS3, incy=INCS3),
        smoke_points=product(n=SMOKE_SIZES, incx=(1, 3), incy=(2,)),
    ),
    level1_record(
        "axpy",
        "cublasSaxpy_v2",
        "float32",
        description="y += alpha*x on strided float32 vectors.",
        public_points=product(n=SAXPY_SIZES, alpha=SAXPY_ALPHAS, incx=INCS3, incy=INCS3),
        smoke_points=product(n=SMOKE_SIZES, alpha=(0.5, -111.999), incx=(1, 3), incy=(2,)),
    ),
    level1_record(
        "dot",
        "cublasSdot_v2",
        "float32",
        description="float32 dot product of strided vectors.",
        public_points=product(n=DOT_SIZES, incx=INCS3, incy=INCS3),
        smoke_points=product(n=SMOKE_SIZES, incx=(1, 3), incy=(2,)),
        departures=REDUCE_N_NOTE,
    ),
    level1_record(
        "scal",
        "cublasSscal_v2",
        "float32",
        description="x *= alpha on a strided float32 vector.",
        public_points=product(n=SAXPY_SIZES, alpha=SAXPY_ALPHAS, incx=INCS3),
        smoke_points=product(n=SMOKE_SIZES, alpha=(0.0, -0.999), incx=(1, 3)),
        departures="The original's 9 sizes and 8 alphas are not listed in our notes; we use "
        "Saxpy's 9 sizes and 8 alphas (216 cases, as the original).",
    ),
    level1_record(
        "dotc",
        "cublasZdotc_v2",
        "complex128",
        description="Conjugated complex128 dot product.",
        public_points=[{"n": n, "incx": inc, "incy": inc} for n in SHORT_SIZES for inc in (1, 2)],
        smoke_points=product(n=SMOKE_SIZES, incx=(1, 3), incy=(2,)),
        departures="The original's alpha axis (5 values) is never used by dotc: its 60 cases are 5 "
        "copies of 12; we keep the 12. " + REDUCE_N_NOTE,
    ),
    level1_record(
        "swap",
        "cublasZswap_v2",
        "complex128",
        description="Exchange two strided complex128 vectors.",
        public_points=product(n=SHORT_SIZES, incx=INCS3, incy=(1, 2)),
        smoke_points=product(n=SMOKE_SIZES, incx=(1, 3), incy=(2,)),
    ),
]

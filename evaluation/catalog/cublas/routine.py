"""What every cuBLAS record shares: the entry point from the KGB wrapper's parameter list, cases, notes.

A routine is described once by its parameter names in the original wrapper's order; the signature, the
positions of the arguments it updates, and the binding of a Call's arguments to names all come from that.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from evaluation.catalog.cublas import cublas_baseline
from evaluation.catalog.spec import Call, Case, EntryPoint, OperatorSpec

BASELINE_NAME = "cuBLAS (C API via ctypes)"

COLUMN_MAJOR_NOTES = (
    "cuBLAS semantics on raw memory. Matrices are column-major: element (i, j) (0-based) of a matrix "
    "argument with leading dimension ld is at flat element offset i + j*ld from the tensor's data pointer "
    "(ld >= rows; the padding rows between columns belong to the caller and must stay untouched). Vector "
    "element i is at offset i*inc (inc > 0; gaps untouched). The tensors' declared shapes and strides mean "
    "nothing: go by m, n, k, ld and inc only. Operations trans/transa/transb: 'N' = X, 'T' = X^T, "
    "'C' = X^H (given as the string, or as the cuBLAS int 0/1/2 where this routine's signature note says "
    "so). Fill mode uplo: 0 = lower, 1 = upper (only that triangle is read or written); side: 0 = left, "
    "1 = right; diag: 0 = non-unit, 1 = unit (the stored diagonal is then not read). Scalars alpha/beta "
    "are Python numbers (complex for C/Z routines). When beta == 0 the output's old values are not read. "
    "Update the output arguments in place, exactly as cuBLAS does; the return value is ignored. fp32 "
    "routines must be computed in true fp32 (tl.dot(..., input_precision='ieee'); TF32 fails)."
)


@dataclass(frozen=True)
class Routine:
    """A cuBLAS routine as the KGB wrapper exposes it."""

    name: str
    params: tuple[str, ...]
    mutates: tuple[str, ...]
    returns: str

    @property
    def signature(self) -> str:
        return f"{self.name}({', '.join(self.params)}) -> {self.returns}"

    def entry_point(self) -> EntryPoint:
        return EntryPoint(
            self.name,
            self.signature,
            mutates=tuple(self.params.index(arg) for arg in self.mutates),
            compare_return=False,
            # BLAS outputs are read-modify-write, and their padding/gaps are compared untouched.
            mutated_are_inputs=True,
        )

    def call(self, values: Mapping[str, Any]) -> Call:
        return Call(args=[values[param] for param in self.params])

    def bind(self, call: Call) -> dict[str, Any]:
        return dict(zip(self.params, call.args, strict=True))


def case(routine: Routine, params: Mapping[str, Any], *, reduce_dim: int = 1, timed: bool = False) -> Case:
    return Case(entry_point=routine.name, params=dict(params), reduce_dim=max(1, int(reduce_dim)), timed=timed)


def cases(
    routine: Routine,
    points: Iterable[Mapping[str, Any]],
    *,
    reduce_dim: Callable[[Mapping[str, Any]], int],
    timed: Callable[[Mapping[str, Any]], bool] | bool,
) -> tuple[Case, ...]:
    """Cases from parameter points; ``timed`` is False for every smoke case (pass ``False``)."""
    return tuple(
        case(routine, point, reduce_dim=reduce_dim(point), timed=timed(point) if callable(timed) else timed)
        for point in points
    )


def product(**axes: Sequence[Any]) -> list[dict[str, Any]]:
    """The Cartesian product of named axes, in order (the original's @parametrize stacks)."""
    points: list[dict[str, Any]] = [{}]
    for name, values in axes.items():
        points = [{**point, name: value} for point in points for value in values]
    return points


def blas_record(
    *,
    routine: Routine,
    description: str,
    make_inputs: Callable[[Case, torch.Generator], Call],
    reference: Callable[[Case, Call], Any],
    smoke: tuple[Case, ...],
    public: tuple[Case, ...],
    held_out: Callable[[random.Random], Sequence[Case]],
    bytes_moved: Callable[[Case], int],
    flops: Callable[[Case], int],
    prompt_notes: str,
    judgement_notes: str = "",
    fp64_relative_bound: float | None = None,
    departures: str = "",
) -> OperatorSpec:
    return OperatorSpec(
        operator_id=f"cublas::{routine.name}",
        source="cublas",
        description=description,
        entry_points=(routine.entry_point(),),
        make_inputs=make_inputs,
        reference=reference,
        smoke=smoke,
        public=public,
        held_out=held_out,
        judgement="allclose",
        judgement_notes=judgement_notes
        or f"allclose (protocol tolerance, reduce_dim per case) on the whole buffers of "
        f"{', '.join(routine.mutates)} after the call, padding and gaps included; the return value is ignored.",
        fp64_relative_bound=fp64_relative_bound,
        bytes_moved=bytes_moved,
        flops=flops,
        prompt_notes=f"{prompt_notes} {COLUMN_MAJOR_NOTES}",
        baseline=cublas_baseline.baseline_for(routine.name, routine.params),
        baseline_name=BASELINE_NAME,
        departures=departures,
    )


def itemsize(dtype_name: str) -> int:
    return torch.empty((), dtype=getattr(torch, dtype_name)).element_size()


def multiply_add_flops(dtype_name: str) -> int:
    """Flops of one multiply-add: 2 real, 8 complex."""
    return 8 if dtype_name.startswith("complex") else 2

"""The shape of one operator record: the contract between the catalog, the judge, the loader and the pages.

An operator is *data*: its entry points, how to build inputs for a case, how to compute the reference,
which outputs are compared and how, and its case grids per tier. Everything here imports only the standard
library and torch, so the judge can read records on a bare accelerator host with no Django.

How the judge uses a record (see evaluation/judge):
  1. ``spec.cases(tier, rng)`` lists the cases of a tier (``held_out`` cases are drawn from ``rng``, a
     per-run secret generator, so nobody can see them in advance).
  2. For each case and each checked call, ``spec.make_inputs(case, generator)`` builds fresh CPU inputs
     (the judge moves them to the device, keeping sizes, strides and aliasing).
  3. The reference runs on a private copy: ``spec.reference(case, call)``.
  4. The candidate's entry point ``case.entry_point`` is called with ``call.args`` / ``call.kwargs``.
  5. ``spec.outputs_of(case, call, returned)`` picks what is compared (return value and/or mutated args),
     and ``spec.judgement`` says how.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import torch

Tier = Literal["smoke", "public", "held_out"]
TIERS: tuple[Tier, ...] = ("smoke", "public", "held_out")
Source = Literal["aten", "vllm", "cublas"]

# How an operator's outputs are judged (PROTOCOL section 5; the catalog issue for the special kinds).
#   allclose     assert_close with atol = 1e-4 * reduce_dim and rtol by dtype; exact dtype and shape.
#   statistical  random ops: ``stat_check`` inspects the candidate's outputs (moments, support, ...).
#   metadata     only shape, stride, dtype and device are compared (empty_strided and friends).
Judgement = Literal["allclose", "statistical", "metadata"]

# Relative tolerance by dtype, PROTOCOL section 5. Integers and bool are exact.
RTOL_BY_DTYPE: dict[torch.dtype, float] = {
    torch.float16: 1e-3,
    torch.bfloat16: 1.6e-2,
    torch.float32: 1e-5,
    torch.float64: 1e-5,
    torch.complex32: 1e-3,
    torch.complex64: 1.3e-6,
    torch.complex128: 1e-6,
}


def tolerance_for(dtype: torch.dtype, reduce_dim: int) -> tuple[float, float]:
    """(atol, rtol) of the protocol's rule; (0, 0) for integer and bool outputs."""
    if dtype.is_floating_point or dtype.is_complex:
        return 1e-4 * max(1, reduce_dim), RTOL_BY_DTYPE.get(dtype, 1e-5)
    return 0.0, 0.0


@dataclass(frozen=True)
class EntryPoint:
    """One function a kernel file must define.

    ``name`` follows KernelGenBench: ``<op>`` for the default overload, ``<op>_<overload>`` otherwise
    (``add_Tensor``, ``cos_out``). ``signature`` is what the prompt shows, from the ATen schema (or the
    original vLLM / cuBLAS wrapper). ``mutates`` names the arguments the call writes (positional index or
    keyword name): they are compared after the call and are allowed to change. ``compare_return`` says
    whether the return value is compared too (in-place ops return ``self``, already compared).
    """

    name: str
    signature: str
    aten_overload: str = ""
    mutates: tuple[int | str, ...] = ()
    compare_return: bool = True
    # Arguments the call may write but that are not compared (workspaces such as paged_attention_v2's
    # exp_sum / max_logits / tmp_out): exempt from the "inputs unchanged" check, never judged.
    scratch: tuple[int | str, ...] = ()
    # True when the mutated arguments are read as well as written (BLAS y += alpha*x, C = alpha*AB + beta*C,
    # padding and gaps that must stay untouched): the judge must not poison them before the call.
    # False: they are pure outputs whose old contents do not matter, so poisoning them is fair.
    mutated_are_inputs: bool = False

    @property
    def returns_view(self) -> bool:
        """Whether the schema returns an alias of an argument (``-> Tensor(a)``: as_strided, expand, t):
        the right answer is the argument's own memory, so no launch need compute anything."""
        returned = self.signature.rpartition("->")[2]
        return re.search(r"Tensor\([a-z]\)", returned) is not None


@dataclass(frozen=True)
class Case:
    """One parameter point of an operator's grid.

    ``params`` is JSON-serialisable (shapes as lists, dtypes by name such as ``"float16"``, layouts by
    name, scalars) so it can be stored with a run and shown on pages. ``reduce_dim`` feeds the tolerance.
    """

    entry_point: str
    params: Mapping[str, Any]
    reduce_dim: int = 1
    timed: bool = True
    allow_nan: bool = False

    @property
    def case_id(self) -> str:
        return f"{self.entry_point}[{json.dumps(dict(self.params), sort_keys=True, separators=(',', ':'))}]"

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "entry_point": self.entry_point,
            "params": dict(self.params),
            "reduce_dim": self.reduce_dim,
            "timed": self.timed,
            "allow_nan": self.allow_nan,
        }


@dataclass
class Call:
    """The arguments of one call. Tensors are built on the CPU; the judge places them on the device."""

    args: list[Any]
    kwargs: dict[str, Any] = field(default_factory=dict)

    def get(self, key: int | str) -> Any:
        return self.args[key] if isinstance(key, int) else self.kwargs[key]


MakeInputs = Callable[[Case, torch.Generator], Call]
Reference = Callable[[Case, Call], Any]
StatCheck = Callable[[Case, Call, tuple[torch.Tensor, ...]], "str | None"]
HeldOutDraw = Callable[[random.Random], Sequence[Case]]


@dataclass(frozen=True)
class OperatorSpec:
    """The complete declarative record of one benchmark operator."""

    operator_id: str  # "aten::cos", "vllm13::rms_norm", "cublas::cublasSgemm_v2"
    source: Source
    description: str
    entry_points: tuple[EntryPoint, ...]
    make_inputs: MakeInputs
    reference: Reference
    smoke: tuple[Case, ...]
    public: tuple[Case, ...]
    held_out: HeldOutDraw
    judgement: Judgement = "allclose"
    judgement_notes: str = ""  # how the op is judged, in words, when it is not plain allclose
    stat_check: StatCheck | None = None
    # A statistical record whose answer is not random (only an order inside it is free: moe_align's ids
    # within a segment): the judge also calls it on another draw of its inputs (the twin replay).
    answer_is_deterministic: bool = False
    # float64 second opinion (EXPLOITS 16): bound on ||out - ref64|| / ||ref64|| for fp32 outputs, or None.
    fp64_relative_bound: float | None = None
    bytes_moved: Callable[[Case], int] | None = None  # None: the judge counts input + output bytes
    flops: Callable[[Case], int] | None = None  # None: one op per output element
    # Extra words for the prompt: semantics a generator must know beyond the signature.
    prompt_notes: str = ""
    # What the candidate is timed against when it is not the reference itself: the vendor's own kernel
    # (cuBLAS through its C API, vLLM's custom op). Returns None when the worker lacks it, and the judge
    # then times the reference and records that it did.
    baseline: Callable[[Case, Call], Callable[[], Any] | None] | None = None
    baseline_name: str = ""  # "cuBLAS 12 (C API)", "vllm._custom_ops"
    # Set when the operator cannot be made well-defined on current hardware (kept, counted as such).
    unavailable_reason: str = ""
    # How and why our cases depart from the original benchmark's tests, if they do.
    departures: str = ""
    # (atol, rtol) replacing the protocol's rule for every compared output, where the original compares
    # otherwise (torch.equal -> (0.0, 0.0)). None: the protocol's rule (tolerance_for by dtype, reduce_dim).
    tolerance_override: tuple[float, float] | None = None
    # Per compared output, in outputs_of order: (atol, rtol) for that output only, None for "no override".
    # For ops whose outputs are judged differently, e.g. ((1.0, 0.0), None): int8 codes within 1, scales
    # by the protocol. Missing trailing entries mean None.
    output_tolerances: tuple[tuple[float, float] | None, ...] = ()
    # Per output dtype (by name), a relative tolerance replacing the protocol's R[dtype], the protocol's atol
    # kept. For outputs rounded to the dtype twice after an fp32 reduction whose order no two correct kernels
    # share (RMSNorm: x * rsqrt(mean) rounded, then times the weight rounded again): one flipped rounding of
    # the intermediate becomes up to 2 ulps of the result, and fp16's R (1e-3) is about 1 ulp.
    rtol_by_dtype: tuple[tuple[str, float], ...] = ()
    # Where the exact answer hinges on how an intermediate rounds (the floor of a quotient at an exact
    # multiple, a comparison with a scalar the reference rounds to the dtype first), the case tests
    # bit-compatibility with one implementation, not correctness. ``exact_formula(case, call)`` computes the
    # operation's mathematical definition on the call's values widened to float64 (Python scalars as given);
    # a value equal to its correctly rounded result passes as well as the reference's. ``exact_formula_why``
    # says why the record needs it (shown on the operator page). Real bugs stay caught: away from such ties
    # both answers agree.
    exact_formula: Callable[[Case, Call], Any] | None = None
    exact_formula_why: str = ""
    # A record whose reference computes half inputs in float32 and rounds once (aten._build.half_in_float32)
    # although the ATen op is composite: each step is an op of its own that rounds its result to the half
    # dtype, on CUDA as on the CPU, so eager's answer (the original's reference) rounds every step in half.
    # ``eager_alternative(case, call)`` is that unwidened ATen reference; half outputs matching it pass as
    # well as those matching the widened one (checks.unless_well_posed).
    eager_alternative: Callable[[Case, Call], Any] | None = None

    def tolerance(self, case: Case, index: int, dtype: torch.dtype) -> tuple[float, float]:
        """(atol, rtol) for compared output ``index`` of ``case``: per-output, then record-wide, then protocol."""
        if index < len(self.output_tolerances) and self.output_tolerances[index] is not None:
            return self.output_tolerances[index]
        if self.tolerance_override is not None:
            return self.tolerance_override
        atol, rtol = tolerance_for(dtype, case.reduce_dim)
        for name, relative in self.rtol_by_dtype:
            if str(dtype).removeprefix("torch.") == name:
                return atol, relative
        return atol, rtol

    @property
    def name(self) -> str:
        return self.operator_id.split("::", 1)[1]

    def entry_point(self, name: str) -> EntryPoint:
        for entry in self.entry_points:
            if entry.name == name:
                return entry
        raise KeyError(f"{self.operator_id} has no entry point {name!r}")

    def cases(self, tier: Tier, rng: random.Random | None = None) -> tuple[Case, ...]:
        if tier == "smoke":
            return self.smoke
        if tier == "public":
            return self.public
        if rng is None:
            raise ValueError("held-out cases are drawn from a per-run secret generator; pass rng")
        return tuple(self.held_out(rng))

    def outputs_of(self, case: Case, call: Call, returned: Any) -> tuple[Any, ...]:
        """What is compared after a call: the flattened return value, then every mutated argument."""
        entry = self.entry_point(case.entry_point)
        compared: list[Any] = []
        if entry.compare_return:
            compared.extend(returned if isinstance(returned, (tuple, list)) else (returned,))
        compared.extend(call.get(key) for key in entry.mutates)
        return tuple(compared)

    def definition_hash(self) -> str:
        """Changes whenever the record changes: data and the source of its functions.

        The loader bumps the operator's version when this changes, so older runs show as stale.
        """
        parts: list[str] = [
            self.operator_id,
            self.source,
            self.description,
            json.dumps([entry.__dict__ for entry in self.entry_points], sort_keys=True, default=str),
            json.dumps([case.to_json() for case in self.smoke + self.public], sort_keys=True),
            self.judgement,
            str(self.fp64_relative_bound),
            self.unavailable_reason,
            str(self.tolerance_override),
            str(self.output_tolerances),
            *([str(self.rtol_by_dtype)] if self.rtol_by_dtype else []),  # older records keep their hashes
            *([self.exact_formula_why] if self.exact_formula else []),
        ]
        functions = (
            self.make_inputs,
            self.reference,
            self.held_out,
            self.stat_check,
            self.bytes_moved,
            self.flops,
            self.exact_formula,
            self.eager_alternative,
        )
        for function in functions:
            if function is not None:
                try:
                    parts.append(inspect.getsource(function))
                except (OSError, TypeError):
                    parts.append(getattr(function, "__qualname__", repr(function)))
        return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def grid(
    entry_point: str,
    *,
    reduce_dim: int | Callable[[dict[str, Any]], int] = 1,
    timed: bool = True,
    **axes: Iterable[Any],
) -> tuple[Case, ...]:
    """The Cartesian product of ``axes`` as cases of ``entry_point`` (the original benchmark's grids)."""
    names = list(axes)
    cases = []
    for values in itertools.product(*(list(axes[name]) for name in names)):
        params = dict(zip(names, values, strict=True))
        rd = reduce_dim(params) if callable(reduce_dim) else reduce_dim
        cases.append(Case(entry_point=entry_point, params=params, reduce_dim=rd, timed=timed))
    return tuple(cases)


def dtype_of(name: str) -> torch.dtype:
    """``"float16"`` -> ``torch.float16``; params store dtypes by name to stay JSON-serialisable."""
    dtype = getattr(torch, name, None)
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"unknown dtype {name!r}")
    return dtype

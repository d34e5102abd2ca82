"""Shared pieces of the vLLM 0.13 records: seeded tensor builders, exact quantisation helpers, case lists.

Every builder draws from the judge's generator only (the case's inputs depend on the run's secret seed), and
every numeric helper works on any device, so references run on the CPU and on a GPU alike.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch

from evaluation.catalog.inputs import draw_generator
from evaluation.catalog.spec import Call, Case, EntryPoint, HeldOutDraw, MakeInputs, OperatorSpec, Reference

FLOAT16_DTYPES = ("float16", "bfloat16")
FLOAT_DTYPES = ("float16", "bfloat16", "float32")
FP8_MAX = 448.0  # largest finite float8_e4m3fn
# vLLM's floor on dynamic fp8 scales: 1 / (448 * 512).
FP8_MIN_SCALING_FACTOR = 1.0 / (FP8_MAX * 512.0)
EXACT = (0.0, 0.0)


# The bulk draws below go to the judge's generation device when it has one (catalog.inputs.generate_on: its
# GPU), seeded from the caller's generator, and come back on the CPU. Drawn on the host they were most of a
# large case's input building (1.3 s for copy_blocks' 2 x 128M values here), inside the judge's GPU hold.


def randn(shape: Sequence[int], dtype: torch.dtype, generator: torch.Generator, *, std: float = 1.0) -> torch.Tensor:
    """Normal values (the original tests' ``torch.randn``), drawn in fp32 and rounded once to ``dtype``."""
    draw, device = draw_generator(generator)
    return (torch.randn(tuple(shape), generator=draw, dtype=torch.float32, device=device) * std).to(dtype).cpu()


def rand(shape: Sequence[int], dtype: torch.dtype, generator: torch.Generator) -> torch.Tensor:
    draw, device = draw_generator(generator)
    return torch.rand(tuple(shape), generator=draw, dtype=torch.float32, device=device).to(dtype).cpu()


def randint(
    low: int, high: int, shape: Sequence[int], generator: torch.Generator, dtype: torch.dtype = torch.int64
) -> torch.Tensor:
    draw, device = draw_generator(generator)
    return torch.randint(low, high, tuple(shape), generator=draw, dtype=torch.int64, device=device).to(dtype).cpu()


def randperm(n: int, generator: torch.Generator, dtype: torch.dtype = torch.int64) -> torch.Tensor:
    return torch.randperm(n, generator=generator).to(dtype)


def to_e4m3(values: torch.Tensor) -> torch.Tensor:
    """fp32 -> float8_e4m3fn with saturation to +-448 and round-to-nearest-even (``__NV_SATFINITE``)."""
    return values.float().clamp(-FP8_MAX, FP8_MAX).to(torch.float8_e4m3fn)


def to_int8_rne(values: torch.Tensor) -> torch.Tensor:
    """fp32 -> int8 with round-half-to-even and saturation (``cvt.rni.sat.s8.f32``)."""
    return torch.round(values.float()).clamp(-128, 127).to(torch.int8)


def pack_nibbles(values: torch.Tensor, dim: int) -> torch.Tensor:
    """Pack groups of 8 consecutive 4-bit values along ``dim`` into int32 words, LSB first."""
    values = values.to(torch.int64).movedim(dim, -1)
    shifts = torch.arange(0, 32, 4, device=values.device)
    words = (values.reshape(*values.shape[:-1], -1, 8) << shifts).sum(-1)
    words = torch.where(words >= 2**31, words - 2**32, words)  # reinterpret as signed int32
    return words.to(torch.int32).movedim(-1, dim)


def unpack_nibbles(words: torch.Tensor, dim: int) -> torch.Tensor:
    """Inverse of ``pack_nibbles``: int32 words -> 8 values (0..15) each along ``dim``, as int64."""
    words = words.to(torch.int64).movedim(dim, -1) & 0xFFFFFFFF
    shifts = torch.arange(0, 32, 4, device=words.device)
    values = (words.unsqueeze(-1) >> shifts) & 0xF
    return values.reshape(*words.shape[:-1], -1).movedim(-1, dim)


def pack_bits(values: torch.Tensor, bits: int, dim: int) -> torch.Tensor:
    """Pack 32/bits consecutive ``bits``-wide values along ``dim`` into int32 words, LSB first."""
    per_word = 32 // bits
    values = values.to(torch.int64).movedim(dim, -1)
    shifts = torch.arange(0, 32, bits, device=values.device)
    words = (values.reshape(*values.shape[:-1], -1, per_word) << shifts).sum(-1)
    words = torch.where(words >= 2**31, words - 2**32, words)
    return words.to(torch.int32).movedim(-1, dim)


def unpack_bits(words: torch.Tensor, bits: int, dim: int) -> torch.Tensor:
    words = words.to(torch.int64).movedim(dim, -1) & 0xFFFFFFFF
    shifts = torch.arange(0, 32, bits, device=words.device)
    values = (words.unsqueeze(-1) >> shifts) & ((1 << bits) - 1)
    return values.reshape(*words.shape[:-1], -1).movedim(-1, dim)


def cases(
    entry_point: str,
    configs: Iterable[Mapping[str, Any]],
    *,
    timed: Callable[[Mapping[str, Any]], bool],
    reduce_dim: Callable[[Mapping[str, Any]], int] | None = None,
) -> tuple[Case, ...]:
    """Cases from explicit parameter dicts; ``timed`` is the original's per-op gate for timing."""
    built = []
    for params in configs:
        params = dict(params)
        built.append(
            Case(entry_point, params, reduce_dim=reduce_dim(params) if reduce_dim else 1, timed=bool(timed(params)))
        )
    return tuple(built)


def product(**axes: Iterable[Any]) -> list[dict[str, Any]]:
    """Cartesian product of named axes as parameter dicts (tuples become lists, to stay JSON-like)."""
    import itertools

    names = list(axes)
    rows = []
    for values in itertools.product(*(list(axes[name]) for name in names)):
        rows.append(
            {
                name: list(value) if isinstance(value, tuple) else value
                for name, value in zip(names, values, strict=True)
            }
        )
    return rows


def vllm_baseline(op_name: str) -> Callable[[Case, Call], Callable[[], Any] | None]:
    """A thunk calling ``vllm._custom_ops.<op_name>`` when vLLM is importable on the worker, else None."""

    def baseline(case: Case, call: Call) -> Callable[[], Any] | None:
        try:
            import vllm._custom_ops as vllm_ops  # noqa: PLC0415 - optional, absent on most workers
        except Exception:  # noqa: BLE001 - any import failure means "no baseline here"
            return None
        function = getattr(vllm_ops, op_name, None)
        if function is None:
            return None
        return lambda: function(*call.args, **call.kwargs)

    return baseline


def record(
    name: str,
    *,
    description: str,
    signature: str,
    make_inputs: MakeInputs,
    reference: Reference,
    smoke: Sequence[Case],
    public: Sequence[Case],
    held_out: HeldOutDraw,
    mutates: tuple[int | str, ...] = (),
    compare_return: bool = True,
    scratch: tuple[int | str, ...] = (),
    **extra: Any,
) -> OperatorSpec:
    """An OperatorSpec of source "vllm" with one entry point named after the op."""
    return OperatorSpec(
        operator_id=f"vllm13::{name}",
        source="vllm",
        description=description,
        entry_points=(EntryPoint(name, signature, mutates=mutates, compare_return=compare_return, scratch=scratch),),
        make_inputs=make_inputs,
        reference=reference,
        smoke=tuple(smoke),
        public=tuple(public),
        held_out=held_out,
        baseline=extra.pop("baseline", vllm_baseline(name)),
        baseline_name=extra.pop("baseline_name", ""),
        **extra,
    )


def no_cases(rng: random.Random) -> list[Case]:
    """Held-out draw of an unavailable operator."""
    return []


def unavailable_inputs(case: Case, generator: torch.Generator) -> Call:
    raise RuntimeError(f"{case.entry_point} is unavailable in this catalog; it has no cases")


def unavailable_reference(case: Case, call: Call) -> Any:
    raise RuntimeError(f"{case.entry_point} is unavailable in this catalog; it has no reference")


def pick_dtype(rng: random.Random, dtypes: Sequence[str] = FLOAT16_DTYPES) -> str:
    return rng.choice(list(dtypes))

"""Input builders shared by operator records: tensors of a given shape, dtype and memory layout.

Values are drawn away from zero by default (EXPLOITS 4: a constant or zero output must not pass a loose
tolerance), always from the generator the judge passes in, so a case's inputs depend on the run's secret seed.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Literal

import torch

from evaluation.catalog.spec import dtype_of

Layout = Literal["contiguous", "transposed", "strided", "broadcast"]
LAYOUTS: tuple[Layout, ...] = ("contiguous", "transposed", "strided", "broadcast")


# Where bulk random values are drawn (None: the CPU). The judge sets it to its GPU: drawing 25M float64
# values there and copying them back is ten times faster than on the host. Tensors still come back on the
# CPU, so records that mix these with their own CPU tensors are unaffected.
_generation_device: torch.device | None = None


@contextmanager
def generate_on(device: torch.device | None) -> Iterator[None]:
    global _generation_device
    previous, _generation_device = _generation_device, device
    try:
        yield
    finally:
        _generation_device = previous


def draw_generator(generator: torch.Generator) -> tuple[torch.Generator, torch.device]:
    """The generator to draw from: the caller's on the CPU, else one on the generation device seeded from it
    (so values still follow from the judge's secret seed, and differ between devices only)."""
    if _generation_device is None:
        return generator, torch.device("cpu")
    seed = int(torch.randint(0, 2**62, (1,), generator=generator))
    return torch.Generator(device=_generation_device).manual_seed(seed), _generation_device


def random_permutations(shape: Sequence[int], dim: int, generator: torch.Generator) -> torch.Tensor:
    """Along ``dim``, every line of an int64 tensor of ``shape`` is a random permutation of 0..shape[dim]-1
    (drawn and sorted on the generation device when there is one; returned on the CPU)."""
    draw, device = draw_generator(generator)
    return torch.rand(tuple(shape), generator=draw, device=device).argsort(dim=dim).cpu()


def random_values(
    shape: Sequence[int],
    dtype: torch.dtype,
    generator: torch.Generator,
    *,
    low: float = -2.0,
    high: float = 2.0,
    away_from_zero: float = 0.0,
) -> torch.Tensor:
    """Uniform values in [low, high) (integers: in [low, high)); |x| >= away_from_zero for floats."""
    shape = tuple(shape)
    draw, device = draw_generator(generator)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=draw, device=device).bool().cpu()
    if not (dtype.is_floating_point or dtype.is_complex):
        return (
            torch.randint(int(low), int(high), shape, generator=draw, dtype=torch.int64, device=device).to(dtype).cpu()
        )
    if dtype.is_complex:
        real_dtype = torch.float32 if dtype == torch.complex64 else torch.float64
        real = random_values(shape, real_dtype, generator, low=low, high=high, away_from_zero=away_from_zero)
        imag = random_values(shape, real_dtype, generator, low=low, high=high, away_from_zero=away_from_zero)
        return torch.complex(real, imag).to(dtype)
    values = torch.rand(shape, generator=draw, dtype=torch.float64, device=device) * (high - low) + low
    if away_from_zero > 0:
        small = values.abs() < away_from_zero
        values = torch.where(small, torch.copysign(values.abs() + away_from_zero, values), values)
    return values.to(dtype).cpu()


def make_tensor(
    shape: Sequence[int],
    dtype: torch.dtype | str,
    generator: torch.Generator,
    *,
    layout: Layout = "contiguous",
    low: float = -2.0,
    high: float = 2.0,
    away_from_zero: float = 0.0,
) -> torch.Tensor:
    """A tensor of ``shape`` whose memory layout is ``layout``.

    transposed: the last two dimensions are swapped in memory (a ``.t()`` view of a contiguous tensor);
    strided:    every other element along the last dimension (a view into a buffer twice as wide);
    broadcast:  the first non-trivial dimension has stride 0 (an ``expand`` of a size-1 dimension).
    Tensors with fewer than two dimensions fall back to the nearest layout that exists for them.
    """
    dtype = dtype_of(dtype) if isinstance(dtype, str) else dtype
    shape = tuple(int(size) for size in shape)
    kwargs = {"low": low, "high": high, "away_from_zero": away_from_zero}
    if layout == "transposed" and len(shape) >= 2:
        swapped = shape[:-2] + (shape[-1], shape[-2])
        return random_values(swapped, dtype, generator, **kwargs).transpose(-1, -2)
    if layout == "strided" and len(shape) >= 1:
        wide = shape[:-1] + (shape[-1] * 2,)
        return random_values(wide, dtype, generator, **kwargs)[..., ::2]
    if layout == "broadcast" and len(shape) >= 1:
        dim = next((index for index, size in enumerate(shape) if size > 1), None)
        if dim is not None:
            narrow = shape[:dim] + (1,) + shape[dim + 1 :]
            return random_values(narrow, dtype, generator, **kwargs).expand(shape)
    return random_values(shape, dtype, generator, **kwargs)

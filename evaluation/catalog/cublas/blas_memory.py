"""Column-major storage views shared by every cuBLAS reference (VLLM_CUBLAS.md, "BLAS memory rule").

cuBLAS never sees a tensor's shape: it gets a pointer and reads element (i, j) of a matrix at ``i + j*ld``
and element i of a vector at ``i*inc``. The references here do the same on the raw storage of the buffers
they are handed (``as_strided`` from the tensor's own storage offset), so a buffer's declared shape and
strides never matter and everything outside the referenced elements stays untouched. Work is done in
float64 / complex128 and rounded once into the buffer's dtype: exact fp32 (no TF32) on any device.
"""

from __future__ import annotations

from typing import Any

import torch

from evaluation.catalog.inputs import random_values
from evaluation.catalog.spec import dtype_of

# cuBLAS enum values (cublas_api.h); the KGB wrappers take 'N'/'T'/'C' strings or these ints for trans and
# the raw ints for fill mode, side and diag.
_OPERATIONS = {"N": "N", "n": "N", 0: "N", "T": "T", "t": "T", 1: "T", "C": "C", "c": "C", 2: "C"}
FILL_LOWER, FILL_UPPER = 0, 1
SIDE_LEFT, SIDE_RIGHT = 0, 1
DIAG_NON_UNIT, DIAG_UNIT = 0, 1


def parse_operation(value: Any) -> str:
    """'N', 'T' or 'C' from a string or cublasOperation_t int; ValueError otherwise."""
    try:
        return _OPERATIONS[value]
    except (KeyError, TypeError):
        raise ValueError(f"invalid cuBLAS operation {value!r}") from None


def parse_flag(value: Any, names: dict[str, int]) -> int:
    """A fill/side/diag enum given as int or as one of ``names`` (e.g. {'L': 0, 'U': 1})."""
    if isinstance(value, str):
        return names[value.upper()[:1]]
    return int(value)


def is_upper(uplo: Any) -> bool:
    return parse_flag(uplo, {"L": FILL_LOWER, "U": FILL_UPPER}) == FILL_UPPER


def is_left(side: Any) -> bool:
    return parse_flag(side, {"L": SIDE_LEFT, "R": SIDE_RIGHT}) == SIDE_LEFT


def is_unit(diag: Any) -> bool:
    return parse_flag(diag, {"N": DIAG_NON_UNIT, "U": DIAG_UNIT}) == DIAG_UNIT


def wide_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype the references compute in: float64 for real, complex128 for complex."""
    return torch.complex128 if dtype.is_complex else torch.float64


def to_scalar(value: Any) -> float | complex:
    """A scalar from case params: [re, im] lists are complex (params must stay JSON)."""
    if isinstance(value, (list, tuple)):
        return complex(value[0], value[1])
    return value


# --- views on raw storage -------------------------------------------------------------------------------


def matrix_view(buffer: torch.Tensor, rows: int, cols: int, ld: int, offset: int = 0) -> torch.Tensor:
    """The rows x cols column-major matrix at ``buffer``'s data pointer (+ ``offset`` elements), lead dim ld."""
    return buffer.as_strided((rows, cols), (1, ld), buffer.storage_offset() + offset)


def batched_matrix_view(buffer: torch.Tensor, batch: int, rows: int, cols: int, ld: int, stride: int) -> torch.Tensor:
    """Matrix b of a strided batch starts ``b*stride`` elements after the data pointer."""
    return buffer.as_strided((batch, rows, cols), (stride, 1, ld), buffer.storage_offset())


def vector_view(buffer: torch.Tensor, n: int, inc: int) -> torch.Tensor:
    """Elements 0..n-1 of a BLAS vector in memory order (stride |inc|).

    For inc < 0 BLAS starts at the far end: element i lives at (n-1-i)*|inc|, so the logical vector is this
    view flipped; ``read_vector``/``write_vector`` take care of it.
    """
    return buffer.as_strided((max(n, 0),), (abs(inc),), buffer.storage_offset())


def read_vector(buffer: torch.Tensor, n: int, inc: int) -> torch.Tensor:
    # A copy, never a view: a reference must not see its own writes (swap reads x, then writes it).
    values = vector_view(buffer, n, inc).to(wide_dtype(buffer.dtype), copy=True)
    return values.flip(0) if inc < 0 else values


def write_vector(buffer: torch.Tensor, n: int, inc: int, values: torch.Tensor) -> None:
    values = values.flip(0) if inc < 0 else values
    vector_view(buffer, n, inc).copy_(values.to(buffer.dtype))


def read_matrix(buffer: torch.Tensor, rows: int, cols: int, ld: int) -> torch.Tensor:
    return matrix_view(buffer, rows, cols, ld).to(wide_dtype(buffer.dtype), copy=True)


def write_matrix(
    buffer: torch.Tensor, rows: int, cols: int, ld: int, values: torch.Tensor, keep: torch.Tensor | None = None
) -> None:
    """Store ``values``; where the boolean ``keep`` mask is True the old element stays (other triangle)."""
    view = matrix_view(buffer, rows, cols, ld)
    if keep is not None:
        values = torch.where(keep, view.to(values.dtype), values)
    view.copy_(values.to(buffer.dtype))


def apply_operation(matrix: torch.Tensor, operation: str) -> torch.Tensor:
    """op(X) for 'N', 'T', 'C' on the last two dimensions."""
    if operation == "N":
        return matrix
    transposed = matrix.transpose(-1, -2)
    return transposed.conj() if operation == "C" else transposed


def stored_shape(operation: str, rows: int, cols: int) -> tuple[int, int]:
    """Shape of the stored matrix whose op() is rows x cols."""
    return (rows, cols) if operation == "N" else (cols, rows)


def triangle_mask(n: int, upper: bool, device: torch.device) -> torch.Tensor:
    """True on the referenced triangle (diagonal included) of an n x n matrix."""
    ones = torch.ones((n, n), dtype=torch.bool, device=device)
    return ones.triu() if upper else ones.tril()


def gemm_update(alpha: Any, product: torch.Tensor, beta: Any, old: torch.Tensor) -> torch.Tensor:
    """alpha*product + beta*old with BLAS's rule that beta == 0 means C is not read (NaNs do not leak)."""
    result = alpha * product
    if beta != 0:
        result = result + beta * old
    return result


# --- buffers for make_inputs ----------------------------------------------------------------------------


def vector_buffer(n: int, inc: int, dtype: str | torch.dtype, generator: torch.Generator) -> torch.Tensor:
    """A flat buffer of n*|inc| elements (the original's size): gaps and tail must stay untouched."""
    return random_values((max(1, n * abs(inc)),), _dtype(dtype), generator)


def matrix_buffer(rows: int, cols: int, ld: int, dtype: str | torch.dtype, generator: torch.Generator) -> torch.Tensor:
    """A contiguous (cols, ld) tensor: column-major rows x cols with lead dim ld, padding rows included.

    Its declared shape is deliberately not the math shape (the original passed row-major tensors that
    cuBLAS reinterprets): a kernel must go by m, n, ld.
    """
    return random_values((max(1, cols), max(1, ld)), _dtype(dtype), generator)


def strided_batch_buffer(
    batch: int, rows: int, cols: int, ld: int, stride: int, dtype: str | torch.dtype, generator: torch.Generator
) -> torch.Tensor:
    """Room for ``batch`` matrices ``stride`` elements apart (shape (batch, cols, ld) when they tile)."""
    dtype = _dtype(dtype)
    if stride == ld * cols and batch > 0:
        return random_values((batch, max(1, cols), max(1, ld)), dtype, generator)
    return random_values((max(1, (batch - 1) * stride + ld * cols),), dtype, generator)


def strided_vector_batch(
    batch: int, n: int, inc: int, stride: int, dtype: str | torch.dtype, generator: torch.Generator
) -> torch.Tensor:
    return random_values((max(1, (batch - 1) * stride + n * inc),), _dtype(dtype), generator)


def triangular_fill(buffer: torch.Tensor, n: int, ld: int, upper: bool, generator: torch.Generator) -> None:
    """Make the referenced triangle well conditioned: |diag| in [2, 3), off-diagonal in (-1/n, 1/n).

    Rows are then strictly diagonally dominant, so solves are stable in fp32. The other triangle keeps
    the buffer's random values: cuBLAS never reads it, and neither may a kernel.
    """
    view = matrix_view(buffer, n, n, ld)
    real = torch.float64
    off = (torch.rand((n, n), generator=generator, dtype=real) * 2 - 1) / max(1, n)
    magnitude = 2 + torch.rand((n,), generator=generator, dtype=real)
    sign = torch.where(torch.rand((n,), generator=generator, dtype=real) < 0.5, -1.0, 1.0)
    values = off + torch.diag(magnitude * sign)
    if buffer.dtype.is_complex:
        imag = (torch.rand((n, n), generator=generator, dtype=real) * 2 - 1) / max(1, n)
        values = torch.complex(values, imag.triu(1) + imag.tril(-1))
    mask = triangle_mask(n, upper, view.device)
    view.copy_(torch.where(mask, values.to(view.dtype), view))


def _dtype(dtype: str | torch.dtype) -> torch.dtype:
    return dtype_of(dtype) if isinstance(dtype, str) else dtype

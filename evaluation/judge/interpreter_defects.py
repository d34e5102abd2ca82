"""Known defects of the Triton CPU interpreter (``TRITON_INTERPRET=1``, Triton 3.6), named in a verdict's
reason when they are the likely cause of a failure on the interpreter chip. The verdict stays what it is:
the kernel did fail there; the reason says that on a GPU it may well not. Three are mended in the sandbox
instead (``MENDED``: rounding to bfloat16 and to float8, float arguments; ``untrusted/interpreter_mends.py``),
so they are never a failure's likely cause there and never named.

"Likely" is decided from what the judge saw, never from the kernel's source: the chip, the dtypes of the
failing case's tensors, the error the interpreter raised, and whether cases of other dtypes passed. Each
entry says why the interpreter does this, as read in ``triton/runtime/interpreter.py``;
``tests/evaluation/judge/test_interpreter_defects.py`` reproduces every one with a small kernel, so a Triton
release that fixes one fails that test (then drop the entry).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import torch

PREFIX = "likely a known defect of the Triton CPU interpreter: "


@dataclass(frozen=True)
class InterpreterDefect:
    name: str
    says: str  # what the reason says after PREFIX
    why: str  # the cause in the interpreter's code
    error: re.Pattern[str] | None = None  # an error text only this defect produces (failed_runtime)
    needs_dtype: str | None = None  # the failing case must hold a tensor of this dtype (prefix match)

    @property
    def note(self) -> str:
        return PREFIX + self.says


UNSIGNED_INVERT = InterpreterDefect(
    name="unsigned_invert",
    says="`~x` on an unsigned integer tensor raises there (x ^ 255 for uint8 gives the same bits and works)",
    why="InterpreterBuilder.get_all_ones_value builds the all-ones mask as np.full(1, -1, dtype=uint*), which "
    "numpy refuses with an OverflowError; compiled Triton emits xor with all ones",
    error=re.compile(r"InterpreterError.*Python integer -1 out of bounds for uint(8|16|32|64)", re.S),
)
BF16_CONSTANT = InterpreterDefect(
    name="bf16_constant",
    says="a bfloat16 constant (a Python number in bfloat16 arithmetic, tl.full(..., tl.bfloat16)) cannot be "
    "built there (compute in float32 and convert at the store)",
    why="semantic.scalar_constant asks the builder for get_bf16, which InterpreterBuilder lacks (it has "
    "get_fp16 and get_fp32): AttributeError",
    error=re.compile(r"InterpreterError.*'InterpreterBuilder' object has no attribute 'get_bf16'", re.S),
)
FLOAT_ARGUMENT_METHOD = InterpreterDefect(
    name="float_argument_method",
    says="a float kernel argument stays a Python float there, so tensor methods on it (s.to(...)) raise; "
    "compiled, it is a float32 scalar",
    why="the interpreter passes float scalar arguments through as Python floats instead of wrapping them as "
    "fp32 tensors (integer arguments are wrapped); mended in the sandbox (untrusted/interpreter_mends.py), "
    "which also makes a float16 tensor times a float argument compute in float32 there, as on a GPU",
    error=re.compile(r"InterpreterError.*'float' object has no attribute", re.S),
)
BF16_ATOMIC = InterpreterDefect(
    name="bf16_atomic",
    says="atomic operations on bfloat16 are unsupported there",
    why="the interpreter's C++ atomic_rmw handles fp16, fp32, fp64 and integers only and raises "
    "ValueError('Unsupported data type') for the uint16 arrays it holds bfloat16 in",
    error=re.compile(r"InterpreterError.*ValueError\('Unsupported data type'\)", re.S),
    needs_dtype="bfloat16",
)
BF16_ROUNDING = InterpreterDefect(
    name="bf16_rounding",
    says="float32 to bfloat16 conversion (.to(tl.bfloat16)) truncates there instead of rounding to nearest "
    "even as GPUs and torch do",
    why="InterpreterBuilder.cast_impl converts float32 to bfloat16 with _convert_float(..., rounding_mode=None), "
    "which drops the low mantissa bits; mended in the sandbox (untrusted/interpreter_mends.py): a kernel that "
    "rounded intermediates to bfloat16 failed on some draws only, several ulps off at the output",
    needs_dtype="bfloat16",
)
BF16_BITS = InterpreterDefect(
    name="bf16_bits",
    says="bfloat16 values are held as their 16-bit patterns there, and arithmetic, comparisons, reductions and "
    "tl.dot on them compute on those integers (upcast with .to(tl.float32) first)",
    why="_get_np_dtype maps tl.bfloat16 to np.uint16 (numpy has no bfloat16) and binary_op applies numpy's "
    "integer ops to the bits; only conversions to and from float32 decode them",
    needs_dtype="bfloat16",
)
FP8_ROUNDING = InterpreterDefect(
    name="fp8_rounding",
    says="float32 to float8_e4m3fn conversion rounds wrongly there: a tie goes away from zero instead of to "
    "even, and a value that rounds up to the next power of two loses its carry and lands a whole binade low "
    "(-127 becomes -64); GPUs and torch round to nearest even",
    why="InterpreterBuilder.create_fp_to_fp's _convert_float adds the cut-off bit to the truncated mantissa "
    "(round half up, not to even) and masks the sum to the mantissa's width, dropping the carry into the "
    "exponent; mended in the sandbox (untrusted/interpreter_mends.py): honest float8 quantisers failed on "
    "most draws, not all",
    needs_dtype="float8_e4m3fn",
)

# Those decided by the error text, most specific first.
BY_ERROR: tuple[InterpreterDefect, ...] = (UNSIGNED_INVERT, BF16_CONSTANT, BF16_ATOMIC)
# Those decided by wrong values.
BY_VALUES: tuple[InterpreterDefect, ...] = (BF16_BITS,)
# Those a reason may name.
ALL: tuple[InterpreterDefect, ...] = BY_ERROR + BY_VALUES
# Those the sandbox mends on the interpreter chip: wrong values there are the kernel's own, never named.
MENDED: tuple[InterpreterDefect, ...] = (BF16_ROUNDING, FP8_ROUNDING, FLOAT_ARGUMENT_METHOD)


def tensor_dtypes(*trees: object) -> frozenset[str]:
    """The dtypes ("bfloat16", "uint8", ...) of the tensors in nested lists, tuples and dicts."""
    found: set[str] = set()
    stack = list(trees)
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            found.add(str(item.dtype).removeprefix("torch."))
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return frozenset(found)


def _holds(dtypes: Iterable[str], wanted: str | None) -> bool:
    return wanted is None or any(dtype.startswith(wanted) for dtype in dtypes)


def for_error(error: str, *, dtypes: Iterable[str]) -> InterpreterDefect | None:
    """The defect an interpreter error names (``dtypes``: the failing case's tensors'), or None."""
    dtypes = frozenset(dtypes)
    for defect in BY_ERROR:
        if defect.error is not None and defect.error.search(error) and _holds(dtypes, defect.needs_dtype):
            return defect
    return None


def for_mismatch(*, dtypes: Iterable[str], other_dtypes_passed: bool) -> InterpreterDefect | None:
    """The defect that likely made a case's outputs wrong, or None. ``dtypes``: the failing case's tensors';
    ``other_dtypes_passed``: a case without bfloat16 passed before it (the kernel is right elsewhere)."""
    if _holds(frozenset(dtypes), "bfloat16") and other_dtypes_passed:
        return BF16_BITS
    return None

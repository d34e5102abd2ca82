"""Float conversions and float arguments the CPU interpreter gets wrong, done under it as a GPU does them.

Triton 3.6's interpreter converts float32 to bfloat16 by dropping the low 16 bits (``InterpreterBuilder.
cast_impl`` calls ``_convert_float`` with no rounding mode), where a GPU's ``cvt.rn.bf16.f32`` and torch
round to nearest even. Its float8 conversions round a tie away from zero and drop the carry of a mantissa
that rounds up into the exponent (-127 becomes -64 in e4m3), where Triton on a Hopper GPU emits
``cvt.rn.satfinite.e4m3x2.f32`` / ``e5m2x2`` (round to nearest even, a finite value past the largest
saturating to it, NaN kept; ``ElementwiseOpToLLVM.cpp``'s ``Fp32_to_Fp8E4M3Nv``). A kernel that rounds an
intermediate to bfloat16 to reproduce eager's staged rounding (a difference stored in the input's dtype,
then squared), or that quantises to float8, is then wrong on some draws and not others: on the interpreter
chip it would fail for the interpreter's arithmetic, not its own, and nothing in its outputs says which.

So on the interpreter chip the sandbox does these conversions itself, in numpy on the bits: a torch
conversion here would run under the dispatch audit, inside the kernel's launch, and count as the kernel
computing outside Triton. bfloat16 as torch's ``round_to_nearest_even`` (c10/util/BFloat16.h): add 0x7FFF
plus the lowest kept bit, keep the high half, a NaN stays a quiet NaN. float8 (e4m3fn, e5m2) by the nearest
of the format's finite values, ties to the even code, after saturating to the largest.

It converts bfloat16 to and from anything but float32 (an integer, a bool, float16) as if the 16-bit
pattern were an integer value (a bool True becomes the smallest subnormal): the sandbox goes through
float32.

A Python float argument of a launch stays a Python float in the interpreter (only ints are wrapped), where
a GPU receives a float32 scalar (``mangle_type`` says "fp32"): methods on it (``s.to(tl.float16)``) raise
there, and ``x * s`` with ``x`` in float16 computes in float16 instead of float32. The sandbox wraps it as
a float32 scalar tensor, as the interpreter wraps an int.

The mended conversions are the round-to-nearest-even ones, whose right answer is the same on every GPU; a
kernel asking for round-toward-zero (``fp_downcast_rounding="rtz"``) gets the interpreter's own. Its other
defects are named in a failure's reason instead (``judge/interpreter_defects.py``), with a reproduction
each in ``tests/evaluation/judge/interpreter_repro.py``, which also shows these still present in the
unmended interpreter (drop a mend once Triton fixes it).

Runs in the sandbox, so the kernel can undo it; that only brings the wrong conversions back onto its own
outputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def float32_to_bfloat16_bits(values: np.ndarray) -> np.ndarray:
    """The bfloat16 bit patterns (uint16) nearest to float32 ``values``, ties to even; NaN stays NaN."""
    values = np.asarray(values, dtype=np.float32)
    bits = values.view(np.uint32)
    # Wraps only for a NaN's bits (0x7FFF_FFFF + ...), which the next line replaces.
    rounded = ((bits + (np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))) >> np.uint32(16)).astype(
        np.uint16
    )
    quiet_nan = ((bits >> np.uint32(16)) | np.uint32(0x0040)).astype(np.uint16)
    return np.where(np.isnan(values), quiet_nan, rounded)


def _float8_values(exponent_bits: int, mantissa_bits: int, largest_code: int) -> np.ndarray:
    """The non-negative finite values of a float8 format by code (0 .. largest_code), ascending."""
    codes = np.arange(largest_code + 1)
    exponent, mantissa = codes >> mantissa_bits, codes & ((1 << mantissa_bits) - 1)
    bias = (1 << (exponent_bits - 1)) - 1
    normal = (mantissa + (1 << mantissa_bits)) * np.exp2(exponent - bias - mantissa_bits)
    subnormal = mantissa * np.exp2(1 - bias - mantissa_bits)
    return np.where(exponent == 0, subnormal, normal)


# e4m3fn: 0x7E = 448 is the largest (0x7F is NaN, no infinity); e5m2: 0x7B = 57344 (0x7C is infinity).
FLOAT8_VALUES = {"e4m3fn": _float8_values(4, 3, 0x7E), "e5m2": _float8_values(5, 2, 0x7B)}
FLOAT8_NAN = 0x7F


def float32_to_float8_bits(values: np.ndarray, form: str) -> np.ndarray:
    """The float8 codes (uint8) of ``values`` in ``form`` ("e4m3fn", "e5m2"): nearest, ties to the even
    code, saturated to the largest finite value (infinities too), NaN kept, the sign of zero kept."""
    table = FLOAT8_VALUES[form]
    values = np.asarray(values, dtype=np.float32)
    magnitude = np.minimum(np.abs(values.astype(np.float64)), table[-1])
    above = np.clip(np.searchsorted(table, np.nan_to_num(magnitude), side="left"), 1, len(table) - 1)
    below = above - 1
    to_above, to_below = table[above] - magnitude, magnitude - table[below]
    pick_above = (to_above < to_below) | ((to_above == to_below) & (above % 2 == 0))
    code = np.where(pick_above, above, below)
    code = np.where(magnitude == 0, 0, code).astype(np.uint8)
    code = code | (np.signbit(values).astype(np.uint8) << np.uint8(7))
    return np.where(np.isnan(values), np.uint8(FLOAT8_NAN), code).astype(np.uint8)


def install() -> None:
    """Route the interpreter's round-to-nearest-even conversions to bfloat16 and to float8 (from float32,
    float16, bfloat16) through the functions above, and bfloat16 to or from any other dtype through float32;
    every other conversion as before. Pass float launch arguments as float32 scalars."""
    import triton.language as tl
    from triton._C.libtriton import ir
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    cast_impl, fp_to_fp = builder.cast_impl, builder.create_fp_to_fp
    float8_forms = {tl.float8e4nv: "e4m3fn", tl.float8e5: "e5m2"}

    def as_float32(src: Any) -> np.ndarray | None:
        """The source's values as float32 (exact), or None for a source dtype not mended."""
        dtype = src.dtype.scalar
        if dtype == tl.float32:
            return src.data
        if dtype == tl.float16:
            return src.data.astype(np.float32)
        if dtype == tl.bfloat16:  # held as uint16 bit patterns: the high half of a float32
            return (src.data.astype(np.uint32) << np.uint32(16)).view(np.float32)
        return None

    def mended(src: Any, dst_type: Any) -> Any | None:
        """The conversion done right, or None where it is not one of the mended ones."""
        target = dst_type.scalar
        if target == tl.bfloat16 and src.dtype.scalar == tl.float32:
            return interpreter.TensorHandle(float32_to_bfloat16_bits(src.data), target)
        if target in float8_forms:
            values = as_float32(src)
            if values is not None:
                return interpreter.TensorHandle(float32_to_float8_bits(values, float8_forms[target]), target)
        return None

    def mended_cast(self: Any, src: Any, dst_type: Any) -> Any:
        done = mended(src, dst_type)
        if done is not None:
            return done
        source, target = src.dtype.scalar, dst_type.scalar
        # The interpreter converts bfloat16 only to and from float32: to or from anything else (an integer,
        # a bool, float16, float64) it converts the 16-bit patterns as integers. Go through float32, as
        # compiled Triton does for float16; from float64 or an integer past 2**24 that can round twice.
        if source == tl.bfloat16 and target != tl.float32:
            return cast_impl(self, cast_impl(self, src, tl.float32), dst_type)
        if target == tl.bfloat16 and source != tl.float32:
            widened = cast_impl(self, src, tl.float32)
            return interpreter.TensorHandle(float32_to_bfloat16_bits(widened.data), target)
        return cast_impl(self, src, dst_type)

    def mended_fp_to_fp(self: Any, src: Any, dst_type: Any, rounding_mode: Any) -> Any:
        done = None if rounding_mode == ir.ROUNDING_MODE.RTZ else mended(src, dst_type)
        return done if done is not None else fp_to_fp(self, src, dst_type, rounding_mode)

    builder.cast_impl = mended_cast
    # The interpreter binds its other casts to cast_impl by lambdas that look it up on self, so they follow.
    builder.create_fp_to_fp = mended_fp_to_fp

    implicit_cvt = interpreter._implicit_cvt

    def float_arguments_as_float32(argument: Any) -> Any:
        if isinstance(argument, float):
            handle = interpreter.TensorHandle(np.array([argument], dtype=np.float32), tl.float32)
            return tl.tensor(handle, tl.float32)
        return implicit_cvt(argument)

    # Looked up as a module global at each launch (and for a tuple's items), so the launch path follows.
    interpreter._implicit_cvt = float_arguments_as_float32

"""Run under ``TRITON_INTERPRET=1``: reproduce each known interpreter defect with a small Triton kernel, hand
what was observed (the error, or the wrong values) to ``evaluation.judge.interpreter_defects``, and print one
JSON object: defect name -> {"reproduced": bool, "named": the defect the module names, or null, "seen": ...}.
Each kernel is also run the way that works on the interpreter (the workaround), which must be right."""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

assert os.environ.get("TRITON_INTERPRET") == "1", "run with TRITON_INTERPRET=1"
sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from evaluation.judge import interpreter_defects as defects  # noqa: E402

N = 256


@triton.jit
def invert(x_ptr, out_ptr, n, WORKAROUND: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = x ^ 255 if WORKAROUND else ~x
    tl.store(out_ptr + offsets, y, mask=mask)


@triton.jit
def add_constant(x_ptr, out_ptr, n, WORKAROUND: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = (x.to(tl.float32) + 1.0).to(out_ptr.dtype.element_ty) if WORKAROUND else x + 1.0
    tl.store(out_ptr + offsets, y, mask=mask)


@triton.jit
def scale_by(x_ptr, out_ptr, n, scale, WORKAROUND: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = x * scale if WORKAROUND else x * scale.to(tl.float32)
    tl.store(out_ptr + offsets, y, mask=mask)


@triton.jit
def scale_into_float32(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * scale, mask=mask)


@triton.jit
def accumulate(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.atomic_add(out_ptr + offsets * 0, tl.load(x_ptr + offsets, mask=mask), mask=mask)


@triton.jit
def narrow(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask).to(tl.bfloat16), mask=mask)


@triton.jit
def narrow_by(x_ptr, out_ptr, n, ROUNDING: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, x.to(tl.bfloat16, fp_downcast_rounding=ROUNDING), mask=mask)


@triton.jit
def to_fp8(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask).to(tl.float8e4nv), mask=mask)


@triton.jit
def negate(x_ptr, out_ptr, n, WORKAROUND: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = (-(x.to(tl.float32))).to(out_ptr.dtype.element_ty) if WORKAROUND else -x
    tl.store(out_ptr + offsets, y, mask=mask)


@triton.jit
def less(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) < tl.load(y_ptr + offsets, mask=mask), mask=mask)


def raised(launch) -> str | None:
    try:
        launch()
    except Exception:
        return traceback.format_exc()
    return None


def by_error(defect, launch, dtypes, workaround=None) -> dict:
    error = raised(launch)
    named = defects.for_error(error, dtypes=dtypes) if error else None
    result = {"reproduced": error is not None, "named": named.name if named else None, "seen": (error or "")[-300:]}
    if workaround is not None:
        result["workaround_right"] = raised(workaround[0]) is None and workaround[1]()
    return result


def by_values(launch, outputs, expected, dtypes, other_dtypes_passed: bool) -> dict:
    error = raised(launch)
    if error:
        return {"reproduced": False, "named": None, "seen": error[-300:]}
    wrong = sum(int((output != reference).sum()) for output, reference in zip(outputs, expected, strict=True))
    named = defects.for_mismatch(dtypes=dtypes, other_dtypes_passed=other_dtypes_passed)
    return {"reproduced": wrong > 0, "named": named.name if named else None, "seen": f"{wrong} wrong values"}


def main() -> None:
    torch.manual_seed(0)
    found = {}

    x8 = torch.arange(N, dtype=torch.uint8)
    out8 = torch.empty_like(x8)
    found["unsigned_invert"] = by_error(
        defects.UNSIGNED_INVERT,
        lambda: invert[(1,)](x8, out8, N, WORKAROUND=False, BLOCK=N),
        {"uint8"},
        (lambda: invert[(1,)](x8, out8, N, WORKAROUND=True, BLOCK=N), lambda: bool(torch.equal(out8, ~x8))),
    )

    xb = torch.randn(N).to(torch.bfloat16)
    outb = torch.empty_like(xb)
    # (Within one bfloat16 ulp: the interpreter's conversion back truncates, bf16_rounding.)
    found["bf16_constant"] = by_error(
        defects.BF16_CONSTANT,
        lambda: add_constant[(1,)](xb, outb, N, WORKAROUND=False, BLOCK=N),
        {"bfloat16"},
        (
            lambda: add_constant[(1,)](xb, outb, N, WORKAROUND=True, BLOCK=N),
            lambda: bool(torch.allclose(outb.float(), xb.float() + 1, rtol=2**-7, atol=0)),
        ),
    )

    xf = torch.randn(N)
    outf = torch.empty_like(xf)
    found["float_argument_method"] = by_error(
        defects.FLOAT_ARGUMENT_METHOD,
        lambda: scale_by[(1,)](xf, outf, N, 0.5, WORKAROUND=False, BLOCK=N),
        {"float32"},
        (lambda: scale_by[(1,)](xf, outf, N, 0.5, WORKAROUND=True, BLOCK=N), lambda: bool(torch.equal(outf, xf * 0.5))),
    )

    ones = torch.ones(N, dtype=torch.bfloat16)
    total = torch.zeros(1, dtype=torch.bfloat16)
    found["bf16_atomic"] = by_error(
        defects.BF16_ATOMIC, lambda: accumulate[(1,)](ones, total, N, BLOCK=N), {"bfloat16"}
    )

    wide = torch.randn(N) * 10
    narrowed = torch.empty(N, dtype=torch.bfloat16)
    found["bf16_rounding"] = by_values(
        lambda: narrow[(1,)](wide, narrowed, N, BLOCK=N),
        [narrowed],
        [wide.to(torch.bfloat16)],
        {"float32", "bfloat16"},
        other_dtypes_passed=False,
    )

    # -127 rounds up to -128 (the carry is lost: -64), -100 is a tie between -96 and -104 (even: -96).
    to_narrow = torch.tensor([-127.0, -100.0, 0.3, 1.1, 300.0, -448.0] * 6)
    fp8 = torch.empty(to_narrow.shape, dtype=torch.float8_e4m3fn)
    found["fp8_rounding"] = by_values(
        lambda: to_fp8[(1,)](to_narrow, fp8, to_narrow.numel(), BLOCK=64),
        [fp8],
        [to_narrow.to(torch.float8_e4m3fn)],
        {"float32", "float8_e4m3fn"},
        other_dtypes_passed=False,
    )

    negated = torch.empty_like(xb)
    found["bf16_bits"] = by_values(
        lambda: negate[(1,)](xb, negated, N, WORKAROUND=False, BLOCK=N),
        [negated],
        [-xb],
        {"bfloat16"},
        other_dtypes_passed=True,
    )
    negate[(1,)](xb, negated, N, WORKAROUND=True, BLOCK=N)
    found["bf16_bits"]["workaround_right"] = bool(torch.equal(negated, -xb))
    yb = torch.randn(N).to(torch.bfloat16)
    compared = torch.empty(N, dtype=torch.bool)
    found["bf16_bits_compare"] = by_values(
        lambda: less[(1,)](xb, yb, compared, N, BLOCK=N), [compared], [xb < yb], {"bfloat16", "bool"}, True
    )
    # The sandbox's mends, installed last: they change the interpreter for the rest of the process.
    from evaluation.judge.untrusted import interpreter_mends

    interpreter_mends.install()
    found["bf16_rounding"]["mended_right"] = bf16_rounding_mended(wide, narrowed)
    found["fp8_rounding"]["mended_right"] = fp8_rounding_mended()
    found["float_argument_method"]["mended_right"] = float_argument_mended(xf, outf)
    print(json.dumps(found))


def bf16_rounding_mended(wide: torch.Tensor, narrowed: torch.Tensor) -> bool:
    """Every float32 -> bfloat16 conversion rounds to nearest even as torch does, ties, NaN and overflow
    included, and an explicit round toward zero still truncates."""
    tie = 1.0 + 2.0**-8  # halfway between two bfloat16 neighbours: even is 1.0
    special = torch.tensor([tie, -tie, 1.0 + 3 * 2.0**-8, 3.4028235e38, float("inf"), float("nan"), -0.0, 1e-40])
    values = torch.cat([wide, special])
    out = torch.empty(values.shape, dtype=torch.bfloat16)
    narrow[(1,)](values, out, values.numel(), BLOCK=512)
    right = torch.equal(out[:-3], values[:-3].to(torch.bfloat16)) and bool(torch.isnan(out[-3]))
    right = right and torch.equal(out[-2:].view(torch.int16), values[-2:].to(torch.bfloat16).view(torch.int16))
    narrow_by[(1,)](wide, narrowed, N, ROUNDING="rtne", BLOCK=N)
    right = right and torch.equal(narrowed, wide.to(torch.bfloat16))
    narrow_by[(1,)](wide, narrowed, N, ROUNDING="rtz", BLOCK=N)
    toward_zero = (wide.view(torch.int32) >> 16).to(torch.int16).view(torch.bfloat16)
    right = right and torch.equal(narrowed, toward_zero)
    # From a bool, an integer or float64 the interpreter converted the bit patterns as integers.
    for source in (torch.tensor([True, False]), torch.tensor([-3, 7, 300, 100000]), torch.tensor([1.5, -2.7, 1e30])):
        out = torch.empty(source.shape, dtype=torch.bfloat16)
        narrow[(1,)](source, out, source.numel(), BLOCK=8)
        right = right and torch.equal(out, source.to(torch.bfloat16))
    return right


def fp8_rounding_mended() -> bool:
    """float32, float16 and bfloat16 -> float8_e4m3fn round to nearest even as torch does, saturating past
    448 as a Hopper GPU's cvt.rn.satfinite does (torch gives NaN there: compared after clamping)."""
    torch.manual_seed(1)
    values = torch.cat(
        [
            torch.tensor([-127.0, -100.0, 0.3, 1.1, 300.0, -448.0, 470.0, -1e4, 2.0**-10, 3 * 2.0**-10, -0.0]),
            torch.randn(300) * 40,
            torch.randn(300) * 0.01,
        ]
    )
    right = True
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        source = values.to(dtype)
        out = torch.empty(source.shape, dtype=torch.float8_e4m3fn)
        to_fp8[(1,)](source, out, source.numel(), BLOCK=1024)
        expected = source.float().clamp(-448, 448).to(torch.float8_e4m3fn)
        right = right and torch.equal(out.view(torch.uint8), expected.view(torch.uint8))
    return right


def float_argument_mended(xf: torch.Tensor, outf: torch.Tensor) -> bool:
    """A float argument is a float32 scalar: its methods work, and a float16 tensor times it computes in
    float32 (stored to a float32 output: the float16 product rounded would differ)."""
    scale_by[(1,)](xf, outf, N, 0.5, WORKAROUND=False, BLOCK=N)
    right = torch.equal(outf, xf * 0.5)
    halves = torch.randn(N).to(torch.float16)
    product = torch.empty(N)
    scale_into_float32[(1,)](halves, product, N, 1 / 3, BLOCK=N)
    return right and torch.equal(product, halves.float() * torch.tensor(1 / 3, dtype=torch.float32))


if __name__ == "__main__":
    main()

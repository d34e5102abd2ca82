"""Trusted comparison of a candidate's outputs with the reference (PROTOCOL 5, EXPLOITS 4, 5, 16).

Runs only in the judge's own process. ``compare_outputs`` returns None when every output passes, else a
message naming the first output that does not and why.
"""

from __future__ import annotations

from typing import Any

import torch

from evaluation.catalog.spec import Call, Case, OperatorSpec, tolerance_for
from evaluation.judge.wire import Unsupported


def _tensor_message(index: int, out: torch.Tensor, ref: torch.Tensor, case: Case, judgement: str) -> str | None:
    label = f"output {index}"
    if tuple(out.shape) != tuple(ref.shape):
        return f"{label}: shape {list(out.shape)} != expected {list(ref.shape)}"
    if out.dtype != ref.dtype:
        return f"{label}: dtype {out.dtype} != expected {ref.dtype}"
    if judgement == "metadata":
        if ref.numel() > 1 and out.stride() != ref.stride():
            return f"{label}: stride {list(out.stride())} != expected {list(ref.stride())}"
        return None
    out_cpu = out.detach().cpu()
    ref_cpu = ref.detach().cpu()
    if out_cpu.numel() == 0:
        return None
    if not (ref_cpu.dtype.is_floating_point or ref_cpu.dtype.is_complex):
        if not torch.equal(out_cpu, ref_cpu):
            mismatched = int((out_cpu != ref_cpu).sum())
            return f"{label}: {mismatched} of {ref_cpu.numel()} values differ (exact match required)"
        return None
    wide = torch.complex128 if ref_cpu.dtype.is_complex else torch.float64
    out_wide, ref_wide = out_cpu.to(wide), ref_cpu.to(wide)
    out_nan, ref_nan = torch.isnan(out_wide), torch.isnan(ref_wide)
    if case.allow_nan:
        if not torch.equal(out_nan, ref_nan):
            return f"{label}: NaN positions differ from the reference"
    elif bool(out_nan.any()) or bool(ref_nan.any()):
        return f"{label}: {int(out_nan.sum())} NaN value(s) (the case does not allow NaN)"
    atol, rtol = tolerance_for(ref_cpu.dtype, case.reduce_dim)
    finite = ~(out_nan | ref_nan)
    out_f, ref_f = out_wide[finite], ref_wide[finite]
    infinite = torch.isinf(ref_f) | torch.isinf(out_f)
    if bool(infinite.any()) and not torch.equal(out_f[infinite], ref_f[infinite]):
        return f"{label}: infinities differ from the reference"
    out_f, ref_f = out_f[~infinite], ref_f[~infinite]
    error = (out_f - ref_f).abs()
    allowed = atol + rtol * ref_f.abs()
    bad = error > allowed
    if bool(bad.any()):
        worst = int(torch.argmax(error - allowed))
        return (f"{label}: {int(bad.sum())} of {ref_cpu.numel()} values outside atol={atol:g} rtol={rtol:g}; "
                f"worst |{complex(out_f[worst]) if out_f.is_complex() else float(out_f[worst]):.6g} - "
                f"{complex(ref_f[worst]) if ref_f.is_complex() else float(ref_f[worst]):.6g}| = "
                f"{float(error[worst]):.3g}")
    return None


def compare_outputs(spec: OperatorSpec, case: Case, call: Call, outputs: tuple[Any, ...],
                    expected: tuple[Any, ...]) -> str | None:
    """None when ``outputs`` match ``expected`` under the operator's judgement, else the reason."""
    if spec.judgement == "statistical":
        tensors = tuple(item for item in outputs if isinstance(item, torch.Tensor))
        if len(outputs) != len(expected):
            return f"{len(outputs)} output(s), expected {len(expected)}"
        for index, (out, ref) in enumerate(zip(outputs, expected, strict=True)):
            if isinstance(ref, torch.Tensor):
                if not isinstance(out, torch.Tensor):
                    return f"output {index}: expected a tensor, got {type(out).__name__}"
                message = _tensor_message(index, out, ref, case, "metadata")
                if message and "stride" not in message:
                    return message
        return spec.stat_check(case, call, tensors) if spec.stat_check else "no statistical check defined"
    if len(outputs) != len(expected):
        return f"{len(outputs)} output(s), expected {len(expected)}"
    for index, (out, ref) in enumerate(zip(outputs, expected, strict=True)):
        if isinstance(out, Unsupported):
            return f"output {index}: unsupported value of type {out.type_name}"
        if isinstance(ref, torch.Tensor):
            if not isinstance(out, torch.Tensor):
                return f"output {index}: expected a tensor, got {type(out).__name__}"
            message = _tensor_message(index, out, ref, case, spec.judgement)
            if message:
                return message
        elif isinstance(ref, (int, float, complex, bool)):
            if isinstance(out, torch.Tensor) or not isinstance(out, (int, float, complex, bool)):
                return f"output {index}: expected a {type(ref).__name__}, got {type(out).__name__}"
            atol, rtol = tolerance_for(torch.float64 if isinstance(ref, float) else torch.int64, case.reduce_dim)
            if abs(out - ref) > atol + rtol * abs(ref):
                return f"output {index}: {out!r} != expected {ref!r}"
        elif ref is None and out is not None:
            return f"output {index}: expected None"
    return None


def fp64_relative_error(outputs: tuple[Any, ...], expected64: tuple[Any, ...]) -> float | None:
    """max over fp32 outputs of ||out - ref64|| / ||ref64|| (EXPLOITS 16); None when no fp32 output."""
    worst: float | None = None
    for out, ref in zip(outputs, expected64, strict=False):
        if isinstance(out, torch.Tensor) and isinstance(ref, torch.Tensor) and out.dtype == torch.float32:
            ref64 = ref.detach().cpu().to(torch.float64)
            difference = torch.linalg.vector_norm(out.detach().cpu().to(torch.float64) - ref64)
            scale = torch.linalg.vector_norm(ref64)
            value = float(difference / scale) if float(scale) > 0 else float(difference)
            worst = value if worst is None else max(worst, value)
    return worst


def bit_identical(before: Any, after: Any) -> bool:
    """Same shape, dtype and bits (NaN payloads included) for tensors; equality for other values."""
    if isinstance(before, torch.Tensor):
        if not isinstance(after, torch.Tensor) or before.shape != after.shape or before.dtype != after.dtype:
            return False
        if before.numel() == 0:
            return True
        left = before.detach().cpu().contiguous().reshape(-1)
        right = after.detach().cpu().contiguous().reshape(-1)
        if left.dtype == torch.bool:
            return torch.equal(left, right)
        return torch.equal(left.view(torch.uint8), right.view(torch.uint8))
    if isinstance(before, (list, tuple)):
        return isinstance(after, (list, tuple)) and len(before) == len(after) and all(
            bit_identical(x, y) for x, y in zip(before, after, strict=True))
    return True  # scalars are passed by value: the candidate cannot change ours

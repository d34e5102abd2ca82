"""Trusted comparison of a candidate's outputs with the reference (PROTOCOL 5, EXPLOITS 4, 5, 16).

Runs only in the judge's own process. ``compare_outputs`` returns None when every output passes, else a
message naming the first output that does not and why.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import torch

from evaluation.catalog.rounding import FP32_TIE, rounded_range
from evaluation.catalog.spec import Call, Case, OperatorSpec
from evaluation.judge.wire import Unsupported, lazily_read


def flat_tensors(value: Any) -> list[torch.Tensor]:
    """The tensors of a value, walking lists and tuples (cuBLAS pointer arrays, vLLM per-layer caches) and
    dict values (the wire carries dicts), in a fixed order: two trees decoded from one outline (a call and
    its twin, an output and the reference's) pair up element by element. A Triton TensorDescriptor among a
    launch's arguments stands for the tensor it describes. The one tree walk of the judge, both sides of
    the sandbox."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [tensor for item in value for tensor in flat_tensors(item)]
    if isinstance(value, dict):
        return [tensor for item in value.values() for tensor in flat_tensors(item)]
    described = _described_tensor(value)
    return [described] if described is not None else []


def _described_tensor(value: Any) -> torch.Tensor | None:
    """The tensor a Triton TensorDescriptor describes; None for anything else. Only Triton's own class (not
    a subclass, whose ``base`` could be a property of the candidate's) is read, and only once a kernel has
    imported it (sys.modules: the walk never imports Triton)."""
    module = sys.modules.get("triton.tools.tensor_descriptor")
    descriptor = getattr(module, "TensorDescriptor", None)
    if descriptor is None or type(value) is not descriptor:
        return None
    base = value.base
    return base if isinstance(base, torch.Tensor) else None


def tensor_bytes(value: Any) -> int:
    """Bytes of the tensors of a value, each view counted whole (flat_tensors): a view's elements, not its
    storage, so tensors on "meta" count too."""
    return sum(tensor.numel() * tensor.element_size() for tensor in flat_tensors(value))


def map_tensors(value: Any, function: Callable[[torch.Tensor], Any]) -> Any:
    """``value`` with ``function`` applied to every tensor in it, through lists, tuples and dicts."""
    if isinstance(value, torch.Tensor):
        return function(value)
    if isinstance(value, list):
        return [map_tensors(item, function) for item in value]
    if isinstance(value, tuple):
        return tuple(map_tensors(item, function) for item in value)
    if isinstance(value, dict):
        return {key: map_tensors(item, function) for key, item in value.items()}
    return value


def storage_bytes(tensor: torch.Tensor) -> torch.Tensor:
    """The whole storage behind ``tensor`` as a flat uint8 tensor on its device (a view: no copy)."""
    return torch.empty(0, dtype=torch.uint8, device=tensor.device).set_(tensor.untyped_storage())


def with_lazy_bits(source: torch.Tensor, view: torch.Tensor) -> torch.Tensor:
    """``view`` (a view rebuilt on ``source``'s bytes) read as ``source`` reads: a lazily negated or conjugated
    view (resolve_neg's and resolve_conj's inputs) holds raw values in its storage, and a bit says how they
    read. Every copy of a call's tensors and the wire between the judge and the sandbox keep it."""
    return lazily_read(view, negated=source.is_neg(), conjugated=source.is_conj())


def storage_copier(device: torch.device | None = None) -> Callable[[torch.Tensor], torch.Tensor]:
    """``copy(tensor)``: ``tensor`` rebuilt (sizes, strides, offset) on a copy of its storage on ``device``
    (None: the tensor's own). Each distinct storage is copied once per copier, straight device to device,
    so views sharing a storage share its copy: aliases stay aliases. The sources are kept alive as long as
    the copier, so no address is reused (and taken for an earlier storage) while it works."""
    copies: dict[int, tuple[torch.UntypedStorage, torch.UntypedStorage]] = {}

    def copy(tensor: torch.Tensor) -> torch.Tensor:
        storage = tensor.untyped_storage()
        key = storage.data_ptr() if storage.nbytes() else -len(copies) - 1
        if key not in copies:
            target = tensor.device if device is None else device
            copies[key] = (storage, storage_bytes(tensor).to(target, copy=True).untyped_storage())
        copied = copies[key][1]
        view = torch.empty(0, dtype=tensor.dtype, device=copied.device).set_(
            copied, tensor.storage_offset(), tensor.size(), tensor.stride()
        )
        return with_lazy_bits(tensor, view)

    return copy


def _tensor_message(
    label: str,
    out: torch.Tensor,
    ref: torch.Tensor,
    case: Case,
    judgement: str,
    tolerance: tuple[float, float] = (0.0, 0.0),
    explain: bool = True,
) -> str | None:
    if tuple(out.shape) != tuple(ref.shape):
        return f"{label}: shape {list(out.shape)} != expected {list(ref.shape)}"
    if out.dtype != ref.dtype:
        return f"{label}: dtype {out.dtype} != expected {ref.dtype}"
    if judgement == "metadata":
        if ref.numel() > 1 and out.stride() != ref.stride():
            return f"{label}: stride {list(out.stride())} != expected {list(ref.stride())}"
        return None
    # Compare where the reference lives (the GPU on a GPU host: a CPU pass over 8M fp16 values took 1.6 s).
    device = ref.device
    out_t = out.detach().to(device)
    ref_t = ref.detach()
    if out_t.numel() == 0:
        return None
    atol, rtol = tolerance
    if not (ref_t.dtype.is_floating_point or ref_t.dtype.is_complex):
        if atol == 0 and rtol == 0:
            if not torch.equal(out_t, ref_t):
                differ = out_t != ref_t
                first = int(torch.nonzero(differ.reshape(-1))[0])
                return (
                    f"{label}: {int(differ.sum())} of {ref_t.numel()} values differ (exact match required); "
                    f"first at {_index(first, ref_t.shape)}: {_kernel_and_reference(out_t, ref_t, first)}"
                )
            return None
        # A record may allow integer codes within a step (vLLM's int8 quantisation: round-half differences).
        error = (out_t.to(torch.float64) - ref_t.to(torch.float64)).abs()
        bad = error > atol + rtol * ref_t.to(torch.float64).abs()
        if bool(bad.any()):
            worst = int(torch.argmax(error.reshape(-1)))
            return (
                f"{label}: {int(bad.sum())} of {ref_t.numel()} values outside atol={atol:g} rtol={rtol:g}; "
                f"worst at {_index(worst, ref_t.shape)}: {_kernel_and_reference(out_t, ref_t, worst)}"
            )
        return None
    if _all_close(out_t, ref_t, atol, rtol, case.allow_nan):
        return None  # the common case, decided in one fused pass; the slow path below only explains failures
    if not explain:
        return f"{label}: values outside the tolerance"
    return _float_mismatch(label, out_t, ref_t, atol, rtol, case.allow_nan)


def _all_close(out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float, allow_nan: bool) -> bool:
    """Same verdict as ``_float_mismatch`` finding nothing, cheaply: half and 8-bit floats widened to float32
    (exact; torch has no arithmetic on float8 on the CPU), NaN only where allowed and then at the same
    positions, infinities equal (``isclose`` demands both)."""
    if out.dtype.is_floating_point and out.dtype.itemsize < 4:
        out, ref = out.float(), ref.float()
    elif out.dtype == torch.complex32:
        out, ref = out.to(torch.complex64), ref.to(torch.complex64)
    if not allow_nan and (bool(torch.isnan(out).any()) or bool(torch.isnan(ref).any())):
        return False
    return bool(torch.isclose(out, ref, rtol=rtol, atol=atol, equal_nan=allow_nan).all())


def _float_mismatch(
    label: str, out: torch.Tensor, ref: torch.Tensor, atol: float, rtol: float, allow_nan: bool
) -> str | None:
    wide = torch.complex128 if ref.dtype.is_complex else torch.float64
    out_wide, ref_wide = out.to(wide), ref.to(wide)
    out_nan, ref_nan = torch.isnan(out_wide), torch.isnan(ref_wide)
    if allow_nan:
        if not torch.equal(out_nan, ref_nan):
            return f"{label}: NaN positions differ from the reference"
    elif bool(out_nan.any()) or bool(ref_nan.any()):
        return f"{label}: {int(out_nan.sum())} NaN value(s) (the case does not allow NaN)"
    out_flat, ref_flat = out_wide.reshape(-1), ref_wide.reshape(-1)
    infinite = torch.isinf(ref_flat) | torch.isinf(out_flat)
    if bool(infinite.any()) and not torch.equal(out_flat[infinite], ref_flat[infinite]):
        first = int(torch.nonzero(infinite & (out_flat != ref_flat))[0])
        return (
            f"{label}: infinities differ from the reference; first at {_index(first, ref.shape)}: "
            f"{_kernel_and_reference(out_flat, ref_flat, first)}"
        )
    compared = ~(out_nan.reshape(-1) | ref_nan.reshape(-1) | infinite)
    error = torch.where(compared, (out_flat - ref_flat).abs(), torch.zeros((), dtype=torch.float64))
    allowed = atol + rtol * ref_flat.abs()
    bad = compared & (error > allowed)
    if bool(bad.any()):
        excess = torch.where(bad, error - allowed, torch.full((), -1.0, dtype=torch.float64))
        worst = int(torch.argmax(excess))
        return (
            f"{label}: {int(bad.sum())} of {ref.numel()} values outside atol={atol:g} rtol={rtol:g}; "
            f"worst at {_index(worst, ref.shape)}: {_kernel_and_reference(out_flat, ref_flat, worst)}"
            f" (|difference| {float(error[worst]):.3g})"
        )
    return None


def _index(flat: int, shape: torch.Size) -> str:
    """A flat position as the tensor's index, [i, j, ...] (a 0-d tensor: [])."""
    index = []
    for size in reversed(tuple(shape)):
        index.append(flat % size if size else 0)
        flat //= size if size else 1
    return "[" + ", ".join(str(position) for position in reversed(index)) + "]"


def _kernel_and_reference(out: torch.Tensor, ref: torch.Tensor, flat: int) -> str:
    """ "<kernel's value> from the kernel, <reference's> from the reference", with as many digits as it takes
    for the two to read differently."""
    got, want = out.reshape(-1)[flat].item(), ref.reshape(-1)[flat].item()
    for digits in (6, 9, 17):
        shown = [f"{value:.{digits}g}" if isinstance(value, (float, complex)) else repr(value) for value in (got, want)]
        if shown[0] != shown[1]:
            break
    return f"{shown[0]} from the kernel, {shown[1]} from the reference"


# How near (relative) an exact value may be to a tie of the output's grid and still round either way.
TIE_SLACK = FP32_TIE


def _either_side_of_a_tie(out: torch.Tensor, exact: torch.Tensor, dtype: torch.dtype, **close: Any) -> torch.Tensor:
    """Where ``out`` (float64) equals the exact value correctly rounded to ``dtype``, or, for a format
    narrower than float32 (half, float8), its other neighbour where the exact value lies within a few fp32
    roundings of the midpoint between the two (a float8 code of x / s where s = amax / 448 is rounded: an
    honest kernel's code and the reference's sat a step apart at exact ties on the H200)."""
    if torch.finfo(dtype).bits >= 32:
        return torch.isclose(out, exact.to(dtype).to(torch.float64), **close)
    below, above = rounded_range(exact, exact, dtype, TIE_SLACK)
    return torch.isclose(out, below, **close) | torch.isclose(out, above, **close)


def exact_alternative_accepts(
    spec: OperatorSpec, case: Case, outputs: tuple[Any, ...], expected: tuple[Any, ...], exact: Any
) -> int | None:
    """When every value of every output is within tolerance of the reference's or of the correctly rounded
    exact result (``exact``: one float64 tensor, or one per output, None where the output is None; for an
    integer output the exact value before rounding), how many matched only the exact one; None when some
    value matches neither (or an output is not a tensor)."""
    exacts = exact if isinstance(exact, tuple) else (exact,)
    if len(outputs) != len(expected) or len(exacts) != len(expected):
        return None
    accepted = 0
    for index, (out, ref, wanted) in enumerate(zip(outputs, expected, exacts, strict=True)):
        if out is None and ref is None:
            continue
        # The exact value may be a pair (lowest, highest) where the formula's own roundings leave a range
        # open (a code plus a zero point that is itself rounded, a rotation after cancellation, staged half
        # steps): each rounding may go either way.
        lowest, highest = wanted if isinstance(wanted, tuple) and len(wanted) == 2 else (wanted, wanted)
        if not all(isinstance(tensor, torch.Tensor) for tensor in (out, ref, lowest, highest)):
            return None
        if out.shape != ref.shape or out.dtype != ref.dtype or ref.dtype.is_complex:
            return None
        if lowest.shape != ref.shape or highest.shape != ref.shape:
            return None
        atol, rtol = spec.tolerance(case, index, ref.dtype)
        if ref.dtype.is_floating_point and lowest is not highest:
            # A range the formula's roundings leave open (rotary after cancellation): within it, or within
            # the tolerance of either end. A format narrower than float32 (half, a float8 code) holds the
            # range's values rounded: its ends widen to the values they round to.
            wide = [tensor.detach().to(ref.device).to(torch.float64) for tensor in (out, ref)]
            low, high = (bound.detach().to(ref.device).to(torch.float64) for bound in (lowest, highest))
            if torch.finfo(ref.dtype).bits < 32:
                rounded_low, rounded_high = rounded_range(low, high, ref.dtype, TIE_SLACK)
                low, high = torch.minimum(low, rounded_low), torch.maximum(high, rounded_high)
            margin = atol + rtol * torch.maximum(low.abs(), high.abs())
            near_exact = (wide[0] >= low - margin) & (wide[0] <= high + margin)
        elif ref.dtype.is_floating_point:
            wide = [tensor.detach().to(ref.device).to(torch.float64) for tensor in (out, ref)]
            exact64 = lowest.detach().to(ref.device).to(torch.float64)
            near_exact = _either_side_of_a_tie(
                wide[0], exact64, ref.dtype, rtol=rtol, atol=atol, equal_nan=case.allow_nan
            )
        else:
            # An integer output (a quantised code) against the exact value before rounding: either integer
            # next to it passes where it lies within a few fp32 roundings of a tie (fp32 math of the same
            # formula lands on either side), only the nearest one elsewhere (a truncating kernel still fails).
            wide = [tensor.detach().to(ref.device).to(torch.float64) for tensor in (out, ref)]
            low, high = (bound.detach().to(ref.device).to(torch.float64) for bound in (lowest, highest))
            slack_low = 0.5 + TIE_SLACK * low.abs()
            slack_high = 0.5 + TIE_SLACK * high.abs()
            near_exact = (wide[0] >= low - slack_low) & (wide[0] <= high + slack_high)
        near_reference = torch.isclose(wide[0], wide[1], rtol=rtol, atol=atol, equal_nan=case.allow_nan)
        if not bool((near_reference | near_exact).all()):
            return None
        accepted += int((near_exact & ~near_reference).sum())
    return accepted


def compare_outputs(
    spec: OperatorSpec,
    case: Case,
    call: Call,
    outputs: tuple[Any, ...],
    expected: tuple[Any, ...],
    explain: bool = True,
) -> str | None:
    """None when ``outputs`` match ``expected`` under the operator's judgement, else the reason.
    ``explain=False`` skips working out the worst value of a float mismatch (ghost replays, which are
    expected to be wrong, only need to know that they are)."""
    if spec.judgement == "statistical":
        tensors = tuple(item for item in outputs if isinstance(item, torch.Tensor))
        if len(outputs) != len(expected):
            return f"{len(outputs)} output(s), expected {len(expected)}"
        for index, (out, ref) in enumerate(zip(outputs, expected, strict=True)):
            if isinstance(ref, torch.Tensor):
                if not isinstance(out, torch.Tensor):
                    return f"output {index}: expected a tensor, got {type(out).__name__}"
                message = _tensor_message(f"output {index}", out, ref, case, "metadata")
                if message and "stride" not in message:
                    return message
        return spec.stat_check(case, call, tensors) if spec.stat_check else "no statistical check defined"
    if len(outputs) != len(expected):
        return f"{len(outputs)} output(s), expected {len(expected)}"
    for index, (out, ref) in enumerate(zip(outputs, expected, strict=True)):
        message = _value_message(spec, case, index, f"output {index}", out, ref, explain)
        if message:
            return message
    return None


def _value_message(
    spec: OperatorSpec, case: Case, index: int, label: str, out: Any, ref: Any, explain: bool = True
) -> str | None:
    """One compared output (``index`` in outputs_of order picks its tolerance); lists element by element."""
    if isinstance(out, Unsupported):
        return f"{label}: unsupported value of type {out.type_name}"
    if isinstance(ref, torch.Tensor):
        if not isinstance(out, torch.Tensor):
            return f"{label}: expected a tensor, got {type(out).__name__}"
        return _tensor_message(label, out, ref, case, spec.judgement, spec.tolerance(case, index, ref.dtype), explain)
    if isinstance(ref, (list, tuple)):
        # A list of tensors (cuBLAS Carray, vLLM key/value caches per layer): same length, each by the rule.
        if not isinstance(out, (list, tuple)):
            return f"{label}: expected a list of {len(ref)}, got {type(out).__name__}"
        if len(out) != len(ref):
            return f"{label}: list of {len(out)} item(s), expected {len(ref)}"
        for position, (item, reference) in enumerate(zip(out, ref, strict=True)):
            message = _value_message(spec, case, index, f"{label}[{position}]", item, reference, explain)
            if message:
                return message
        return None
    if isinstance(ref, (int, float, complex, bool)):
        if isinstance(out, torch.Tensor) or not isinstance(out, (int, float, complex, bool)):
            return f"{label}: expected a {type(ref).__name__}, got {type(out).__name__}"
        atol, rtol = spec.tolerance(case, index, torch.float64 if isinstance(ref, (float, complex)) else torch.int64)
        if abs(out - ref) > atol + rtol * abs(ref):
            return f"{label}: {out!r} != expected {ref!r}"
        return None
    if ref is None and out is not None:
        return f"{label}: expected None"
    return None


def widen_to_64(tensor: torch.Tensor) -> torch.Tensor:
    """A floating tensor in float64 (complex: complex128), anything else as it is: the fp64 opinion's inputs."""
    if tensor.dtype in (torch.float16, torch.bfloat16, torch.float32):
        return tensor.to(torch.float64)
    if tensor.dtype in (torch.complex32, torch.complex64):
        return tensor.to(torch.complex128)
    return tensor


# The fp64 opinion is a relative norm, and over a handful of values it measures cancellation, not precision:
# one result c - a*b with c close to a*b is tiny while its exact-as-fp32-allows error is half an ulp of a*b.
# Measured on the H200 (scripts/gpu/precision_probe.py, 2026-11-30): the honest reference kernels of three
# fp32 GEMM records went over the 1e-5 bound in 88 of 222,000 draws, at most 3 of 1,500 in any case, only in
# cases with m = n = 1 (one value per tensor; worst 6.3e-5), and once in a judged submission
# (cublasSgemmBatched_64, 6.89e-5). With 16 or more values none did in 2M simulated draws (worst 7.6e-8). A
# precision cheat (TF32) gains nothing on such outputs and is judged on every larger case, so outputs below
# this many values get no opinion.
FP64_OPINION_MIN_VALUES = 64


def fp64_relative_error(
    outputs: tuple[Any, ...], expected64: tuple[Any, ...], min_values: int = FP64_OPINION_MIN_VALUES
) -> float | None:
    """max over float32 and complex64 outputs of ||out - ref64|| / ||ref64|| against the float64 /
    complex128 reference (EXPLOITS 16). An output that is a list (pointer-array BLAS: one tensor per batch
    entry) is one vector: its entries' norms are pooled. None when no output has ``min_values`` values."""
    worst: float | None = None
    for out_value, ref_value in zip(outputs, expected64, strict=False):
        outs, refs = flat_tensors(out_value), flat_tensors(ref_value)
        if len(outs) != len(refs):
            continue  # the comparison has already judged the structure
        pairs = [
            (out, ref) for out, ref in zip(outs, refs, strict=True) if out.dtype in (torch.float32, torch.complex64)
        ]
        if not pairs or sum(out.numel() for out, _ in pairs) < min_values:
            continue
        difference_squared, scale_squared = 0.0, 0.0
        for out, ref in pairs:
            ref64 = widen_to_64(ref.detach())
            out64 = widen_to_64(out.detach()).to(ref64.device)
            difference_squared += float(torch.linalg.vector_norm(out64 - ref64)) ** 2
            scale_squared += float(torch.linalg.vector_norm(ref64)) ** 2
        difference, scale = math.sqrt(difference_squared), math.sqrt(scale_squared)
        value = difference / scale if scale > 0 else difference
        worst = value if worst is None else max(worst, value)
    return worst


def bit_identical(before: Any, after: Any) -> bool:
    """Same shape, dtype and bits (NaN payloads included) for tensors; equality for other values."""
    if isinstance(before, torch.Tensor):
        if not isinstance(after, torch.Tensor) or before.shape != after.shape or before.dtype != after.dtype:
            return False
        if before.numel() == 0:
            return True
        # The values as they read (a lazily negated or conjugated view's bit applied), then their bits.
        left = before.detach().cpu().resolve_conj().resolve_neg().contiguous().reshape(-1)
        right = after.detach().cpu().resolve_conj().resolve_neg().contiguous().reshape(-1)
        if left.dtype == torch.bool:
            return torch.equal(left, right)
        return torch.equal(left.view(torch.uint8), right.view(torch.uint8))
    if isinstance(before, (list, tuple)):
        return (
            isinstance(after, (list, tuple))
            and len(before) == len(after)
            and all(bit_identical(x, y) for x, y in zip(before, after, strict=True))
        )
    return True  # scalars are passed by value: the candidate cannot change ours

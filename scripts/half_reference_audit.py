"""Which ATen references, on this machine's torch, are off the accurate answer for half-precision inputs.

For every ATen record and every half-precision public overload and dtype (one case each, up to about a
million elements), the record's reference on the case's inputs is compared with the same reference on float32
copies of them, rounded once to the half dtype: what CUDA's kernels compute for most ops. A record whose CPU
kernel rounds its intermediates in half shows values beyond the protocol's tolerance of that; on the CPU
interpreter chip its reference then passes kernels that copy that rounding and that the H200 refuses (logit
did). Fix such a record with ``half_in_float32=True`` (``evaluation/catalog/aten/_build.py``) where CUDA's
kernel computes in float32; where CUDA's kernel also rounds in half, keep ATen's.

    .venv/bin/python scripts/half_reference_audit.py
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from evaluation.catalog.registry import all_operators  # noqa: E402
from evaluation.catalog.spec import Call, Case, OperatorSpec  # noqa: E402

HALVES = (torch.float16, torch.bfloat16)
RTOL = {torch.float16: 1e-3, torch.bfloat16: 1.6e-2}
# Random draws differ between any two calls; empty_strided's values are whatever memory held.
SKIPPED = ("bernoulli", "exponential_", "poisson", "rrelu_with_noise", "empty_strided", "new_empty_strided")
MAX_ELEMENTS = 1_100_000


def _map(value: Any, tensor_fn: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return tensor_fn(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_map(item, tensor_fn) for item in value)
    return value


def _widened(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.float() if tensor.dtype in HALVES else tensor.clone()


def values_off(spec: OperatorSpec, case: Case) -> list[tuple[str, int, int]]:
    """(dtype, values beyond tolerance, values) for each half-precision tensor the reference returns."""
    call = spec.make_inputs(case, torch.Generator().manual_seed(1))
    as_given = Call(_map(list(call.args), torch.clone), _map(dict(call.kwargs), torch.clone))
    widened = Call(_map(list(call.args), _widened), _map(dict(call.kwargs), _widened))
    reference = spec.reference(case, as_given)
    try:
        accurate = spec.reference(case, widened)
    except RuntimeError:  # a dtype argument or an out= tensor that must keep the half dtype: not comparable
        return [("not comparable", 0, 0)]
    pairs = zip(
        reference if isinstance(reference, (list, tuple)) else [reference],
        accurate if isinstance(accurate, (list, tuple)) else [accurate],
        strict=False,
    )
    found = []
    for given, wide in pairs:
        if not isinstance(given, torch.Tensor) or given.dtype not in HALVES or not isinstance(wide, torch.Tensor):
            continue
        if given.shape != wide.shape:
            continue
        once, given32 = wide.to(given.dtype).float(), given.float()
        tolerance = 1e-4 * case.reduce_dim + RTOL[given.dtype] * once.abs()
        finite = torch.isfinite(once) & torch.isfinite(given32)
        off = int((((given32 - once).abs() > tolerance) & finite).sum())
        found.append((str(given.dtype).removeprefix("torch."), off, given.numel()))
    return found


def main() -> int:
    flagged, skipped = 0, []
    for operator_id, spec in sorted(all_operators().items()):
        if not operator_id.startswith("aten::") or operator_id.split("::")[1] in SKIPPED:
            continue
        seen: set[tuple[str, str]] = set()
        rows = []
        for case in spec.public:
            key = (case.entry_point, case.params.get("dtype"))
            shape = case.params.get("shape")
            flat = isinstance(shape, list) and not (shape and isinstance(shape[0], list))
            if key[1] not in ("float16", "bfloat16") or key in seen or (flat and math.prod(shape) > MAX_ELEMENTS):
                continue
            seen.add(key)
            found = values_off(spec, case)
            skipped += [f"{operator_id} {case.entry_point}" for row in found if row[0] == "not comparable"]
            rows += [(case.entry_point, *row) for row in found if row[1]]
        if rows:
            flagged += 1
            print(operator_id, rows)
    print(f"not comparable (the reference refuses float32 copies): {', '.join(skipped) or 'none'}")
    print(f"{flagged} ATen records whose reference is off the float32-then-rounded answer for half inputs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Which structures of an ATen operator's public grid its smoke tier lacks (the CPU interpreter judges smoke).

A structure is what a kernel's addressing depends on, not the sizes: the entry point, the rank of each shape
parameter, and for a ``dim`` parameter whether it names the first, a middle or the last dim. A bug that lives
in one structure (a 0-d operand's shortcut, a middle dim taken for the last) fails the public grid on a GPU
and passes CI's smoke tier when the smoke tier has no case of that structure. Prints one line per operator
with gaps, then a count:

    .venv/bin/python scripts/smoke_coverage.py
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.catalog.registry import all_operators  # noqa: E402
from evaluation.catalog.spec import Case  # noqa: E402


def structure(case: Case) -> tuple:
    params, found = case.params, [case.entry_point]
    rank = None
    for key, value in sorted(params.items()):
        if key == "shapes" or (
            key.endswith("shape") and isinstance(value, list) and value and isinstance(value[0], list)
        ):
            found.append((key, tuple(len(shape) for shape in value)))
        elif key.endswith("shape") and isinstance(value, list):
            found.append((key, len(value)))
            rank = len(value) if key == "shape" else rank
    dim = params.get("dim")
    if isinstance(dim, int) and rank:
        position = dim % rank
        found.append(("dim", "first" if position == 0 else "last" if position == rank - 1 else "middle"))
    return tuple(found)


def main() -> int:
    gaps = 0
    aten = {op: spec for op, spec in sorted(all_operators().items()) if op.startswith("aten::")}
    for operator_id, spec in aten.items():
        missing = {structure(case) for case in spec.public} - {structure(case) for case in spec.smoke}
        if missing:
            gaps += 1
            print(f"{operator_id}: {len(missing)} public structure(s) without a smoke case, e.g. {sorted(missing)[:2]}")
    print(f"{gaps} of {len(aten)} ATen operators have public structures their smoke tier lacks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

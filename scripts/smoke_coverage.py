"""Which structures of an ATen operator's public grid its smoke tier still lacks (the CPU interpreter judges smoke).

A structure (``evaluation/catalog/smoke_twins.structure``) is what a kernel's addressing depends on, not the
sizes: the entry point, each size parameter's rank with its dims classed 0, 1 or many, where a ``dim`` points,
and the non-numeric parameters (layouts, modes, flags). The smoke tier is the hand-written cases plus the
derived twins (``scripts/derive_smoke_twins.py``); what is left is a twin that could not be derived (sizes
that must divide or sum to each other, an offset past a shrunk dim), listed here with the reason:

    .venv/bin/python scripts/smoke_coverage.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluation.catalog.registry import all_operators  # noqa: E402
from evaluation.catalog.smoke_twins import TWINS_FILE, structure  # noqa: E402


def main() -> int:
    dropped = json.loads(TWINS_FILE.read_text()).get("dropped", {}) if TWINS_FILE.exists() else {}
    gaps = 0
    aten = {op: spec for op, spec in sorted(all_operators().items()) if op.startswith("aten::")}
    for operator_id, spec in aten.items():
        missing = {structure(case) for case in spec.public} - {structure(case) for case in spec.smoke}
        if missing:
            gaps += 1
            print(f"{operator_id}: {len(missing)} public structure(s) without a smoke case")
            for case_id, reason in dropped.get(operator_id, {}).items():
                print(f"    twin not derived: {case_id}: {reason}")
    print(f"{gaps} of {len(aten)} ATen operators have public structures their smoke tier lacks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

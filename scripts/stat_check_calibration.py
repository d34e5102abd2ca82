"""How often do the random operators' statistical checks refuse honest draws? (CPU, a few minutes)

    .venv/bin/python scripts/stat_check_calibration.py [--draws 1000] [--max-numel 100000] [--ops bernoulli]

For every public case of the random operators (evaluation/catalog/aten/random_ops.py) up to ``--max-numel``
elements, draws ``--draws`` outputs from the reference itself (torch's generators: honest by definition) and
counts how many the record's ``stat_check`` refuses, twice on the same draws: with the 5-sigma lines as they
are (Bennett's bound where the draws are bounded and skewed) and with the normal curve's lines everywhere (as
the checks were before). Each line is meant to refuse an honest draw about once in 270,000 per side, so any
count above 0 in a few thousand draws is a miscalibrated line. The figures that motivated Bennett's bound:
bernoulli.p at p = 0.001 over 96,000 elements, 16 refusals in 4,000 draws by the normal lines, 0 by the
current ones.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from evaluation.catalog.aten import random_ops  # noqa: E402


@contextlib.contextmanager
def normal_lines():
    """The checks with every line the normal curve's (Bennett's bound switched off)."""
    bennett = random_ops.bennett_deviation
    random_ops.bennett_deviation = lambda variance, bound, sigmas=random_ops.SIGMAS: bennett(variance, math.inf, sigmas)
    try:
        yield
    finally:
        random_ops.bennett_deviation = bennett


def refusals(spec, case, draws: int, seed: int) -> tuple[int, int, str]:
    """(refused by the current lines, refused by the normal lines, the first reason the current lines gave)."""
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    current = normal = 0
    first = ""
    for _ in range(draws):
        call = spec.make_inputs(case, generator)
        outputs = spec.outputs_of(case, call, spec.reference(case, call))
        reason = spec.stat_check(case, call, outputs)
        if reason:
            current += 1
            first = first or reason
        with normal_lines():
            normal += spec.stat_check(case, call, outputs) is not None
    return current, normal, first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--max-numel", type=int, default=100_000)
    parser.add_argument("--ops", default="", help="comma-separated record names (default: all random operators)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    wanted = {name for name in args.ops.split(",") if name}
    print(f"{'case':<90} {'draws':>6} {'current':>8} {'normal':>7}")
    totals = [0, 0, 0]
    for spec in random_ops.OPERATORS:
        if wanted and spec.name not in wanted:
            continue
        for case in spec.public:
            if math.prod(case.params["shape"]) > args.max_numel:
                continue
            started = time.perf_counter()
            try:
                current, normal, first = refusals(spec, case, args.draws, args.seed)
            except NotImplementedError as error:  # torch's CPU kernels lack some dtypes (rrelu in float16)
                print(f"{case.case_id[:90]:<90} not on this host: {str(error)[:80]}")
                continue
            totals = [totals[0] + args.draws, totals[1] + current, totals[2] + normal]
            print(
                f"{case.case_id[:90]:<90} {args.draws:>6} {current:>8} {normal:>7}"
                f"  ({time.perf_counter() - started:.1f} s){'  first: ' + first if first else ''}",
                flush=True,
            )
    print(f"{'all':<90} {totals[0]:>6} {totals[1]:>8} {totals[2]:>7}")


if __name__ == "__main__":
    main()

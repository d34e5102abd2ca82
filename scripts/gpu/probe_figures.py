"""What the unwatched check compared, per judgement and timed case, from judge_h200.py's fixture JSON: the
audited window's median, the probe call's kernels (or why its figure did not count) and the caller's latency,
with the floor the check held the caller to. Prints one line per case and a count of refusals by cause.

    python3 scripts/gpu/probe_figures.py OUT/fixtures.json OUT/unwatched2.json ... [--only cos_readback]
"""

from __future__ import annotations

import argparse
import collections
import json
from pathlib import Path

# timing_protocol's floor for a flushed loop on the GPU: fraction x min(window, probe) less the slack.
FRACTION, SLACK_MS = 0.7, 0.002


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", type=Path)
    parser.add_argument("--only", default="", help="substring of the fixture labels to show")
    args = parser.parse_args()
    statuses: collections.Counter = collections.Counter()
    notes: collections.Counter = collections.Counter()
    columns = f"{'window':>8}{'probe':>8}{'caller':>8}{'floor':>8}"
    print(f"{'file':<18}{'fixture':<30}{'status':<10}{'case':<44}{columns}  note")
    for path in args.files:
        if not path.exists():
            continue
        for row in json.loads(path.read_text()).get("fixtures", []):
            if args.only and args.only not in row["kernel"]:
                continue
            statuses[row["status"]] += 1
            for case in row.get("timed_cases") or []:
                window, probe, caller = case.get("audited_ms"), case.get("probe_ms"), case.get("caller_ms")
                device = min(window, probe) if probe else window
                floor = FRACTION * device - SLACK_MS if device else None
                note = case.get("probe_note") or ""
                notes[note or "(figure counted)"] += 1
                print(
                    f"{path.stem:<18}{row['kernel'][:29]:<30}{row['status'][:9]:<10}{case['case_id'][:43]:<44}"
                    f"{_ms(window)}{_ms(probe)}{_ms(caller)}{_ms(floor)}  {note}"
                )
            if row["status"] != "passed":
                print(f"   {row['kernel']}: {row['reason'][:400]}")
    print("verdicts:", dict(statuses))
    print("probe notes over timed cases:", dict(notes))
    return 0


def _ms(value: float | None) -> str:
    return f"{value:8.4f}" if isinstance(value, (int, float)) else f"{'-':>8}"


if __name__ == "__main__":
    raise SystemExit(main())

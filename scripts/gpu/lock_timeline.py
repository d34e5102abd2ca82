"""Where a many-judge run's wall time went, from the device lock's trace (``KGB_DEVICE_LOCK_TRACE``).

    python3 scripts/gpu/lock_timeline.py TRACE [--json OUT]

Prints, over the span from the first to the last traced event: the seconds the GPU was held alone (timed
loops), held shared by at least one judge (correctness) with none alone, and held by nobody, split by
whether anyone was waiting then (a handoff gap) or not (every judge busy on its CPU, or idle); the shared
time a timer spent waiting for shared holds to end (draining); the shared holds' count and lengths; the exclusive
holds' count, total, median and longest; and how many judges on average waited while one held it alone.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
from pathlib import Path
from typing import Any


def read_trace(path: Path) -> list[tuple[float, int, str, str, str]]:
    """(seconds, pid, event, kind, label) rows in time order; the label ("" when none) says what a shared
    hold was for (runner: inputs, checks+inputs, call, time_load, timing_sets, ...)."""
    rows = []
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) in (4, 5):
            rows.append((float(parts[0]), int(parts[1]), parts[2], parts[3], parts[4] if len(parts) == 5 else ""))
    return sorted(rows)


def timeline(rows: list[tuple[float, int, str, str, str]] | list[tuple[float, int, str, str]]) -> dict[str, Any]:
    if not rows:
        return {}
    rows = [(*row, "")[:5] for row in rows]  # type: ignore[assignment]
    shared_holders: dict[int, str] = {}  # pid -> label
    exclusive_holder: int | None = None
    waiting: dict[int, str] = {}
    seconds = {"exclusive": 0.0, "shared": 0.0, "draining": 0.0, "idle_with_waiters": 0.0, "idle_no_waiters": 0.0}
    drain_holders = 0.0
    shared_from: dict[int, float] = {}
    shared_holds: list[float] = []
    by_label: dict[str, dict[str, float]] = {}  # label -> holds, seconds, seconds kept a timer waiting

    def label_entry(label: str) -> dict[str, float]:
        return by_label.setdefault(label or "-", {"holds": 0, "seconds": 0.0, "draining": 0.0})

    waiters_during_exclusive = 0.0
    holds: list[float] = []
    exclusive_from = 0.0
    previous = rows[0][0]
    for moment, pid, event, kind, label in rows:
        span = moment - previous
        if exclusive_holder is not None:
            seconds["exclusive"] += span
            waiters_during_exclusive += span * len(waiting)
        elif shared_holders:
            seconds["shared"] += span
            if "exclusive" in waiting.values():
                # A timer waits for these shared holds to end while the turnstile keeps new ones out.
                seconds["draining"] += span
                drain_holders += span * len(shared_holders)
                for holder_label in shared_holders.values():
                    label_entry(holder_label)["draining"] += span
        elif waiting:
            seconds["idle_with_waiters"] += span
        else:
            seconds["idle_no_waiters"] += span
        previous = moment
        if event == "wait":
            waiting[pid] = kind
        elif event == "hold":
            waiting.pop(pid, None)
            if kind == "exclusive":
                exclusive_holder, exclusive_from = pid, moment
            else:
                shared_holders[pid] = label
                shared_from[pid] = moment
        elif event == "release":
            if kind == "exclusive" and exclusive_holder == pid:
                exclusive_holder = None
                holds.append(moment - exclusive_from)
            else:
                held_label = shared_holders.pop(pid, "")
                if pid in shared_from:
                    length = moment - shared_from.pop(pid)
                    shared_holds.append(length)
                    entry = label_entry(held_label)
                    entry["holds"] += 1
                    entry["seconds"] += length
    span = rows[-1][0] - rows[0][0]
    return {
        "span_s": span,
        **{f"{key}_s": value for key, value in seconds.items()},
        "exclusive_holds": len(holds),
        "exclusive_median_s": statistics.median(holds) if holds else 0.0,
        "exclusive_longest_s": max(holds, default=0.0),
        "mean_waiters_during_exclusive": (
            waiters_during_exclusive / seconds["exclusive"] if seconds["exclusive"] else 0.0
        ),
        "judging_processes": len({row[1] for row in rows}),
        "shared_by_label": by_label,
        "mean_holders_while_draining": drain_holders / seconds["draining"] if seconds["draining"] else 0.0,
        "shared_holds": len(shared_holds),
        "shared_hold_total_s": sum(shared_holds),
        "shared_hold_median_ms": 1000 * statistics.median(shared_holds) if shared_holds else 0.0,
        "shared_hold_p99_ms": 1000
        * (statistics.quantiles(shared_holds, n=100)[-1] if len(shared_holds) > 1 else sum(shared_holds)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    summary = timeline(read_trace(args.trace))
    if not summary:
        print("empty trace", file=sys.stderr)
        return 1
    span = summary["span_s"] or 1.0
    print(
        f"lock timeline over {summary['span_s']:.1f} s, {summary['judging_processes']} processes: "
        + ", ".join(
            f"{key[:-2]} {summary[key]:.1f} s ({100 * summary[key] / span:.0f}%)"
            for key in ("exclusive_s", "shared_s", "idle_with_waiters_s", "idle_no_waiters_s")
        )
        + f"; {summary['exclusive_holds']} exclusive holds, median {summary['exclusive_median_s']:.2f} s, "
        f"longest {summary['exclusive_longest_s']:.2f} s; "
        f"{summary['mean_waiters_during_exclusive']:.1f} judges waiting during them on average; "
        f"draining for a timer {summary['draining_s']:.1f} s ({summary['mean_holders_while_draining']:.1f} "
        f"holders on average); {summary['shared_holds']} shared holds, {summary['shared_hold_total_s']:.0f} s "
        f"in all, median {summary['shared_hold_median_ms']:.1f} ms, 99th percentile "
        f"{summary['shared_hold_p99_ms']:.0f} ms"
    )
    labels = sorted(summary["shared_by_label"].items(), key=lambda item: -item[1]["draining"])
    if labels and any(label != "-" for label, _ in labels):
        print(
            "shared holds by label (holds, seconds held, holder-seconds a timer waited for them): "
            + "; ".join(
                f"{label} {entry['holds']:.0f} / {entry['seconds']:.0f} s / {entry['draining']:.1f} s"
                for label, entry in labels
            )
        )
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

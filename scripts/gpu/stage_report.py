"""Print where each judged kernel's time went, from judge_reference_kernels.py's JSON (``$OUT``): status,
stage seconds, the stage breakdown's largest entries and the timing checks. For reading a device call's
results when a step was slower than expected."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    for path in sys.argv[1:]:
        data = json.loads(Path(path).read_text())
        for row in data["results"]:
            result = row["result"]
            print(f"{row['file']}: {result['status']} in {row['seconds']:.1f} s; {result['reason'][:200]!r}")
            print("   stages:", json.dumps(result.get("stage_seconds", {})))
            breakdown = result.get("environment", {}).get("stage_breakdown", {})
            top = sorted(breakdown.items(), key=lambda item: -item[1])[:14]
            print("   breakdown:", ", ".join(f"{name} {seconds:.2f}" for name, seconds in top))
            timed = [case for case in result["case_results"] if case.get("protocol_timing")]
            print(
                f"   protocol cases {len(timed)}, speedup {result.get('protocol_speedup')}, "
                f"device {result.get('speedup')}"
            )
            for check in result.get("checks", []):
                if check["name"] in ("timing", "protocol_timing", "timing_crosscheck") or check["outcome"] == "failed":
                    print(f"   check {check['name']}: {check['outcome']} {check['detail'][:200]}")


if __name__ == "__main__":
    main()

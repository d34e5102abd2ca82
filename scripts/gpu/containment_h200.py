"""Containment on a GPU host: every hostile kernel of tests/evaluation/kernels/hostile judged on the device
with the static scan on and off, checked as the CPU tests check them (tests/evaluation/judge/
test_judge_containment.py): nothing of the host in the verdict, nothing left running, nothing left in shared
places, two sandboxes at once blind to each other, a sleeping kernel a timeout for its case.

    PYTHONPATH=. python3 scripts/gpu/containment_h200.py [--device cuda]

Prints the host's facts (cgroups, device nodes, what containment the sandbox got), one line per
(kernel, scan) with its verdict and whether every check held, and a last line ``containment: N of M held``.
Exits non-zero unless all held. No Django.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import secrets
import shutil
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evaluation.judge import isolation  # noqa: E402
from evaluation.judge.job import JudgeJob, JudgeResult  # noqa: E402
from evaluation.judge.pool import close_spares  # noqa: E402
from evaluation.judge.runner import JudgeOptions, judge_with  # noqa: E402

HOSTILE = ROOT / "tests" / "evaluation" / "kernels" / "hostile"
GOOD = ROOT / "tests" / "evaluation" / "kernels" / "good" / "cos_plain.py"


def hostile(name: str, **values: object) -> str:
    source = (HOSTILE / name).read_text()
    for key, value in values.items():
        source = source.replace(f"__{key}__", repr(value) if not isinstance(value, (int, float)) else str(value))
    return source


def judge_source(source: str, device: str, scan: bool, floor_s: float | None = None) -> JudgeResult:
    job = JudgeJob(
        operator_id="aten::cos",
        source_code=source,
        chip_slug="containment-check",
        device_type=device,
        tiers=("smoke",),
        time_budget_s=120.0,
        call_limit_floor_s=floor_s,
    )
    return judge_with(job, JudgeOptions(static_scan=scan))


def stdout_of(result: JudgeResult) -> str:
    return result.environment.get("candidate_output", {}).get("stdout", "")


def sandbox_processes() -> list[int]:
    base = isolation.uid_base()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid >= base:
                    found.append(int(entry))
            except OSError:
                pass
    return found


def wait_clean(seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while sandbox_processes() and time.monotonic() < deadline:
        time.sleep(0.05)
    return sandbox_processes()


def host_facts(device: str) -> None:
    print("uname:", " ".join(os.uname()))
    print("containment:", isolation.containment_available() or "available")
    print("/proc/self/cgroup:", Path("/proc/self/cgroup").read_text().strip().replace("\n", " | "))
    print("cgroup v2:", (Path("/sys/fs/cgroup") / "cgroup.controllers").exists())
    nodes = sorted(name for name in os.listdir("/dev") if name.startswith(isolation.GPU_DEVICE_PREFIXES))
    print("device nodes:", nodes)
    print("python:", sys.executable, sys.prefix, sys.base_prefix)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    options = parser.parse_args()
    device = options.device
    host_facts(device)

    good = judge_source(GOOD.read_text(), device, scan=True)
    sandbox = json.dumps(good.environment.get("sandbox"))[:3000]
    print(f"good cos_plain: {good.status} ({good.reason}); sandbox: {sandbox}")
    outcomes: list[tuple[str, bool, str]] = [("good kernel passes", good.status == "passed", good.reason)]

    secret = "kgb-secret-" + secrets.token_hex(12)
    data_dir = ROOT / "var" / f"containment-{secrets.token_hex(4)}"
    (data_dir / "broker").mkdir(parents=True)
    planted = [data_dir / "db.sqlite3", data_dir / "secret_key", data_dir / "broker" / "message.json"]
    for path in planted:
        path.write_text(f"SQLite format 3 {secret}")
        path.chmod(0o644)
    paths = [str(path) for path in planted] + [str(data_dir)]
    try:
        for scan in (True, False):
            label = "scan on " if scan else "scan off"

            def held(name: str, result: JudgeResult, ok: bool, scan: bool = scan, label: str = label) -> None:
                refused = scan and result.status == "rejected" and result.reason.startswith("static scan:")
                verdict = ok and (refused or result.status in ("passed", "timeout")) and result.status != "error"
                outcomes.append((f"{name} [{label}]", verdict, f"{result.status}: {result.reason[:160]}"))

            for name in ("read_host_files.py", "module_through_module.py"):
                result = judge_source(hostile(name, SECRET_PATHS=paths), device, scan)
                held(name, result, secret not in json.dumps(result.to_json()) and "LEAK" not in stdout_of(result))
            result = judge_source(hostile("detached_grandchild.py"), device, scan)
            uid = result.environment.get("sandbox", {}).get("uid")
            held("detached_grandchild.py", result, uid is None or isolation.processes_of_uid(uid) == [])
            marker = "kgb-marker-" + secrets.token_hex(6)
            result = judge_source(hostile("shared_temp_folders.py", MARKER=marker), device, scan)
            held(
                "shared_temp_folders.py",
                result,
                not any(os.path.exists(os.path.join(folder, marker)) for folder in ("/tmp", "/dev/shm", "/var/tmp")),
            )
            result = judge_source(hostile("many_medium_files.py"), device, scan)
            written = int(stdout_of(result).split("WROTE")[1].split()[0]) if "WROTE" in stdout_of(result) else 0
            # On a GPU the full work dir also stops Triton writing its cache: the kernel then fails by its
            # own doing (failed_runtime), which is as contained as passing.
            filled = result.status == "failed_runtime" and "No space left on device" in result.reason
            held(
                "many_medium_files.py",
                result if not filled else JudgeResult(status="passed", reason=result.reason),
                written <= isolation.ContainmentLimits().written_bytes,
            )
            result = judge_source(hostile("network_reach.py"), device, scan)
            held("network_reach.py", result, "LEAK" not in stdout_of(result))
            started = time.monotonic()
            result = judge_source(hostile("sleeper.py"), device, scan, floor_s=5.0)
            elapsed = time.monotonic() - started
            held(
                "sleeper.py",
                result,
                (scan and result.status == "rejected")
                or (result.status == "timeout" and "did not return within 5 s" in result.reason and elapsed < 60),
            )
            victim_marker = "victim-marker-" + secrets.token_hex(10)
            results: dict[str, JudgeResult] = {}
            victim_source = hostile("victim.py", MARKER=victim_marker, VICTIM_SECONDS=4.5)
            victim = threading.Thread(
                target=lambda source=victim_source, into=results: into.setdefault(
                    "victim", judge_source(source, device, False)
                )
            )
            victim.start()
            time.sleep(1.5)
            on_host = any(
                victim_marker in Path(path).read_text(errors="replace")
                for path in glob.glob("/tmp/**/candidate_kernel.py", recursive=True)
            )
            snoop = results["snoop"] = judge_source(
                hostile("sibling_snoop.py", MARKER_REVERSED=victim_marker[::-1]), device, scan
            )
            victim.join()
            held(
                "sibling_snoop.py",
                snoop,
                not on_host
                and results["victim"].status == "passed"
                and victim_marker not in json.dumps(snoop.to_json())
                and "LEAK" not in stdout_of(snoop),
            )
            close_spares()  # the warm spare is a live sandbox by design; nothing else may be left
            outcomes.append((f"no sandbox process left [{label}]", wait_clean() == [], ""))
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)

    for name, ok, detail in outcomes:
        print(f"{'held  ' if ok else 'BROKEN'} {name}: {detail}")
    passed = sum(1 for _, ok, _ in outcomes if ok)
    print(f"containment: {passed} of {len(outcomes)} held")
    return 0 if passed == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())

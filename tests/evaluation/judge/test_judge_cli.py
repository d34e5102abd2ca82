"""The command line: one JSON object or a summary, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import KERNELS

from evaluation.catalog.registry import get_operator
from evaluation.judge.cli import run_cli

ROOT = Path(__file__).resolve().parents[3]


def test_json_for_a_passing_kernel(warm_forkserver, capsys):
    code = run_cli(str(KERNELS / "good/cos_plain.py"), "aten::cos", "cpu-interpreter", as_json=True)

    data = json.loads(capsys.readouterr().out)
    assert code == 0
    smoke = len(get_operator("aten::cos").smoke)  # the hand-written cases and the derived twins
    assert (data["status"], data["cases_total"], data["cases_passed"]) == ("passed", smoke, smoke)
    assert data["speedup"] is None and data["failed_case"] is None
    assert {
        "name": "ghost_replay",
        "outcome": "passed",
        "detail": "with launches disabled every case's output was wrong",
    } in data["checks"]
    assert data["environment"]["chip"] == "cpu-interpreter"


def test_json_for_a_failing_kernel_names_the_case(warm_forkserver, capsys):
    code = run_cli(str(KERNELS / "wrong/wrong_values.py"), "aten::cos", None, as_json=True)

    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["status"] == "failed_correctness"
    assert set(data["failed_case"]) == {"case_id", "tier", "params", "message"}


def test_human_summary(warm_forkserver, capsys):
    code = run_cli(str(KERNELS / "cheats/torch_cos.py"), "aten::cos", None, as_json=False)

    out = capsys.readouterr().out
    assert code == 1
    assert out.splitlines()[0] == "status:  rejected"
    assert out.splitlines()[1] == "reason:  computed outside Triton: aten::cos"
    assert (
        "  noted    static_scan: names only, deciding nothing (what runs is judged): line 26: names torch.cos,"
        " not an allocation, view or metadata name [torch_call]"
    ) in out
    assert "  failed   dispatch_audit: cos[" in out


def test_bad_usage_exits_2(capsys):
    assert run_cli(str(KERNELS / "good/cos_plain.py"), "aten::no_such_op", None, as_json=True) == 2
    assert run_cli("/no/such/file.py", "aten::cos", None, as_json=True) == 2
    assert "unknown operator 'aten::no_such_op'" in capsys.readouterr().err


def test_python_dash_m_entry_point():
    completed = subprocess.run(
        [sys.executable, "-m", "evaluation.judge", "/no/such/file.py", "--operator", "aten::cos", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert completed.returncode == 2
    assert "no such file: /no/such/file.py" in completed.stderr

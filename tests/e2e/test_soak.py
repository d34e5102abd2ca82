"""The soak at CI size: a few runs through every fault, in both configurations, none lost, doubled or stuck."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import POSTGRES_URL, REQUIRE_SERVICES, need

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.mark.parametrize("config", ["embedded", "postgres-redis"])
def test_a_small_soak_loses_doubles_and_strands_nothing(config):
    if config == "postgres-redis":
        need(POSTGRES_URL, "PostgreSQL")
        if shutil.which("redis-server") is None:
            if REQUIRE_SERVICES:
                pytest.fail("redis-server is required here (KGB_REQUIRE_SERVICES=1)")
            pytest.skip("needs redis-server on PATH (apt-get install redis-server)")
    # A fault after every second judged run: six faults in twelve runs, drawn from every kind.
    result = subprocess.run(
        [sys.executable, "scripts/soak.py", "--runs", "12", "--config", config, "--fault-every", "2", "--seed", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert result.stdout.strip().splitlines()[-1] == "12 runs, 0 lost, 0 doubled, 0 stuck", (
        result.stdout[-4000:] + result.stderr[-4000:]
    )
    assert result.returncode == 0

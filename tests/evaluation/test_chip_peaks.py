"""Roofline peaks: a chip's own, else the datasheet's, else a worker's measurement with headroom."""

from __future__ import annotations

import pytest

from evaluation import services
from evaluation.judge.backends import PEAKS, measure_peaks
from evaluation.models import Chip

MEASURED = {"bandwidth_bytes_per_s": 2.0e12, "flops_by_dtype": {"bfloat16": 4.0e14, "float32": 5.0e13}}


@pytest.mark.django_db
def test_a_known_chip_without_peaks_of_its_own_uses_the_datasheet():
    chip = services.chip_ensure(slug="nvidia-h200")
    assert chip.peak_bandwidth_bytes_per_s is None
    bandwidth, flops = services.chip_peaks(chip=chip)
    assert bandwidth == PEAKS["nvidia-h200"][0] and flops["bfloat16"] == PEAKS["nvidia-h200"][1]["bfloat16"]
    assert services.chip_wants_measured_peaks(slug="nvidia-h200") is False  # the worker does not measure it
    assert services.chip_record_measured_peaks(slug="nvidia-h200", measured=MEASURED) is False
    chip.refresh_from_db()
    assert chip.peak_bandwidth_bytes_per_s is None  # the datasheet is the harder bound: kept


@pytest.mark.django_db
def test_an_unknown_chip_gets_its_measured_peaks_with_headroom_once():
    services.chip_ensure(slug="acme-x1", device_type="cuda")
    assert services.chip_peaks(chip=Chip.objects.get(slug="acme-x1")) == (None, {})
    assert services.chip_wants_measured_peaks(slug="acme-x1") is True
    assert services.chip_record_measured_peaks(slug="acme-x1", measured=MEASURED) is True
    assert services.chip_wants_measured_peaks(slug="acme-x1") is False
    chip = Chip.objects.get(slug="acme-x1")
    assert chip.peak_bandwidth_bytes_per_s == pytest.approx(2.5e12)
    assert chip.peak_flops_by_dtype == {"bfloat16": pytest.approx(5.0e14), "float32": pytest.approx(6.25e13)}
    # A second worker's measurement (or an admin's own figures) never overwrites the chip's.
    assert (
        services.chip_record_measured_peaks(slug="acme-x1", measured={**MEASURED, "bandwidth_bytes_per_s": 9e12})
        is False
    )
    assert services.chip_peaks(chip=chip)[0] == pytest.approx(2.5e12)


def test_measuring_peaks_runs_the_same_code_on_any_family():
    """On this host only the CPU family exists (host clocks, tiny sizes); on a GPU host the worker runs it."""
    measured = measure_peaks("cpu", copy_bytes=1 << 20, matmul_n=64, repeats=2)
    assert measured["bandwidth_bytes_per_s"] > 0
    assert set(measured["flops_by_dtype"]) == {"bfloat16", "float16", "float32"}
    assert all(value > 0 for value in measured["flops_by_dtype"].values())

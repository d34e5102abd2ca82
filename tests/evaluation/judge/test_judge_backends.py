"""One backend per device family: what the judge asks of a device, and how a host's chip is found."""

from __future__ import annotations

import types

import pytest
import torch

from evaluation.judge.backends import BACKENDS, HostClockEvent, backend_for, detect_chip
from evaluation.judge.device_lock import DeviceLock


def test_the_cpu_family_is_the_interpreter_with_host_clock_events():
    cpu = backend_for("cpu")
    assert cpu.module() is None and not cpu.is_available() and not cpu.is_initialized()
    assert cpu.event_class() is HostClockEvent
    assert cpu.device_name() == "CPU (Triton interpreter)"
    assert cpu.set_memory_fraction(0.5, torch.device("cpu")) is False
    assert cpu.state() == {}
    cpu.synchronize()  # nothing to wait for, and no error


def test_cuda_is_torch_cuda_and_reads_its_visible_devices(monkeypatch):
    cuda = backend_for("cuda")
    assert cuda.module() is torch.cuda
    assert cuda.event_class() is torch.cuda.Event
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    assert cuda.visible_devices() == "3"
    assert cuda.is_available() is torch.cuda.is_available()


@pytest.mark.parametrize("family, variable", [("npu", "ASCEND_RT_VISIBLE_DEVICES"), ("musa", "MUSA_VISIBLE_DEVICES")])
def test_families_whose_software_is_absent_are_simply_unavailable(family, variable):
    backend = backend_for(family)
    assert backend.visible_devices_env == variable
    if not hasattr(torch, family):  # torch_npu / torch_musa not installed here
        assert backend.module() is None and not backend.is_available() and not backend.is_initialized()


def test_unknown_families_are_refused():
    with pytest.raises(ValueError, match="unknown device family 'tpu'"):
        backend_for("tpu")
    assert set(BACKENDS) == {"cuda", "npu", "musa", "cpu"}


def test_detect_chip_takes_the_first_family_with_a_device(monkeypatch):
    """A stand-in torch.musa (this host has none): detection goes by family, then by the device's name."""
    monkeypatch.delenv("KGB_CHIP", raising=False)
    if torch.cuda.is_available():
        pytest.skip("a CUDA device wins on this host")
    fake = types.SimpleNamespace(
        is_available=lambda: True,
        get_device_name=lambda index: "MTT S4000",
        synchronize=lambda: None,
        Event=HostClockEvent,
        is_initialized=lambda: False,
    )
    monkeypatch.setattr(torch, "musa", fake, raising=False)
    assert detect_chip() == ("mtt-s4000", "musa")
    monkeypatch.setenv("KGB_CHIP", "my-musa-box")
    assert detect_chip() == ("my-musa-box", "musa")
    monkeypatch.delattr(torch, "musa")
    monkeypatch.delenv("KGB_CHIP")
    assert detect_chip() == ("cpu-interpreter", "cpu")


def test_device_locks_are_per_family_and_visible_device(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    monkeypatch.setenv("ASCEND_RT_VISIBLE_DEVICES", "5")
    assert DeviceLock("cuda", str(tmp_path)).paths[1].name == "kgb-device-cuda-2_3.lock"
    assert DeviceLock("npu", str(tmp_path)).paths[1].name == "kgb-device-npu-5.lock"


def test_a_process_that_will_fork_can_know_its_chip_without_touching_the_device(monkeypatch):
    """The worker command detects in a child interpreter and hands the answer down: the Celery parent and
    the pool children it forks (now or later) never initialise CUDA before forking."""
    from evaluation.judge.backends import Backend, detect_chip_isolated

    monkeypatch.delenv("KGB_CHIP", raising=False)
    monkeypatch.delenv("KGB_DEVICE_TYPE", raising=False)
    # With the device's memory (None on the CPU: no GPU here), which sizes the worker's pool.
    assert detect_chip_isolated() == (*detect_chip(), None)
    monkeypatch.setenv("KGB_CHIP", "nvidia-h200")
    monkeypatch.setenv("KGB_DEVICE_TYPE", "cuda")

    def touched(self):
        raise AssertionError(f"{self.family} was queried")

    monkeypatch.setattr(Backend, "is_available", touched)
    monkeypatch.setattr(Backend, "device_name", touched)
    assert detect_chip() == ("nvidia-h200", "cuda")

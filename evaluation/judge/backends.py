"""Device families, which chip this host judges on, and what the trusted side can read about it.

One ``Backend`` per device family hides what differs between them: where torch keeps the family's module
(``torch.cuda`` for NVIDIA and the CUDA-compatible stacks such as ROCm, ``torch.npu`` once ``torch_npu`` is
imported, ``torch.musa`` with ``torch_musa``), how to synchronise, which event class times on the device,
how to cap the process's device memory, the device's name, the variable that picks visible devices, and
the vendor tool that reports clocks. The CPU "family" is the Triton interpreter: no device, host-clock
events (tests of the timing path only), nothing to synchronise.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass
from typing import Any

KNOWN_CHIPS = (
    ("h200", "nvidia-h200"),
    ("h100", "nvidia-h100"),
    ("a100", "nvidia-a100"),
)

# Datasheet peaks for the roofline floor (dense, no sparsity). Bytes/s and FLOP/s by dtype name.
PEAKS: dict[str, tuple[float, dict[str, float]]] = {
    "nvidia-h200": (
        4.8e12,
        {"float32": 67e12, "float16": 989e12, "bfloat16": 989e12, "float64": 67e12, "int8": 1979e12},
    ),
    "nvidia-h100": (
        3.35e12,
        {"float32": 67e12, "float16": 989e12, "bfloat16": 989e12, "float64": 67e12, "int8": 1979e12},
    ),
    "nvidia-a100": (
        2.039e12,
        {"float32": 19.5e12, "float16": 312e12, "bfloat16": 312e12, "float64": 19.5e12, "int8": 624e12},
    ),
}


class HostClockEvent:
    """The CPU family's event: host clock. Used only to test the timing path on the interpreter."""

    def __init__(self, enable_timing: bool = True) -> None:
        self.at = 0.0

    def record(self) -> None:
        self.at = time.perf_counter()

    def synchronize(self) -> None:
        return None

    def elapsed_time(self, end: HostClockEvent) -> float:
        return (end.at - self.at) * 1000.0


@dataclass(frozen=True)
class Backend:
    family: str  # the torch device type: "cuda", "npu", "musa" or "cpu"
    visible_devices_env: str = ""  # which devices a process sees: CUDA_VISIBLE_DEVICES, ...
    plugin: str = ""  # the package that registers torch.<family> (torch_npu, torch_musa); "" when built in
    state_tool: str = ""  # the vendor's query tool for clocks and throttling ("" : none read)

    @property
    def device_type(self) -> str:
        return self.family

    def module(self, import_plugin: bool = True) -> Any:
        """torch.<family>, importing the vendor plugin first where one is needed (unless told not to); None
        for the CPU or when the family's software is not installed."""
        if self.family == "cpu":
            return None
        import torch

        if self.plugin and import_plugin and not hasattr(torch, self.family):
            try:
                importlib.import_module(self.plugin)
            except Exception:  # not installed, or broken: the family is simply unavailable here
                return None
        return getattr(torch, self.family, None)

    def is_available(self) -> bool:
        module = self.module()
        try:
            return bool(module is not None and module.is_available())
        except Exception:
            return False

    def is_initialized(self) -> bool:
        """Whether this process has initialised the device (a fork server must not have: its forks break).
        Never imports a plugin: a family this process has not loaded is not initialised."""
        checker = getattr(self.module(import_plugin=False), "is_initialized", None)
        try:
            return bool(checker()) if checker else False
        except Exception:
            return False

    def init(self) -> None:
        module = self.module()
        if module is not None and hasattr(module, "init"):
            module.init()

    def device_name(self, index: int = 0) -> str:
        module = self.module()
        if module is None:
            return "CPU (Triton interpreter)"
        return str(module.get_device_name(index))

    def total_memory(self, index: int = 0) -> int | None:
        """The device's memory in bytes (None for the CPU or where the family cannot say)."""
        module = self.module()
        try:
            return int(module.get_device_properties(index).total_memory) if module is not None else None
        except Exception:
            return None

    def synchronize(self) -> None:
        """Wait for all work on the current device, every stream."""
        module = self.module()
        if module is not None:
            module.synchronize()

    def event_class(self) -> Any:
        module = self.module()
        return HostClockEvent if module is None else module.Event

    def stream_spin(self) -> Any:
        """A device-side busy wait of N clock cycles on the current stream (CUDA's ``_sleep``), which the
        timing loop uses to keep host launch overhead out of timed windows; None where the family lacks one
        (its timings then include whatever host latency its L2 flush does not hide)."""
        module = self.module()
        return getattr(module, "_sleep", None) if module is not None else None

    def current_stream_reader(self) -> Any:
        """A function returning the current stream (comparable with ==), or None where the family has none."""
        module = self.module()
        return getattr(module, "current_stream", None) if module is not None else None

    def set_host_wait(self, mode: str) -> str:
        """How this process's host thread waits for the device from now on (HOST_WAITS); returns what
        applied, in words, for the evidence. Only CUDA has the choice (its context's scheduling flags);
        other families say so and change nothing."""
        if mode not in HOST_WAITS:
            raise ValueError(f"unknown host wait {mode!r}; known: {', '.join(HOST_WAITS)}")
        if self.family != "cuda":
            return f"not applicable to {self.family}"
        return cuda_set_host_wait(HOST_WAITS[mode], mode)

    def set_memory_fraction(self, fraction: float, device: Any) -> bool:
        """Cap this process's share of device memory; False where the family has no such cap."""
        module = self.module()
        setter = getattr(module, "set_per_process_memory_fraction", None)
        if setter is None:
            return False
        setter(fraction, device)
        return True

    def release_cached_memory(self) -> None:
        """Hand the caching allocator's free blocks back to the device (several judges share one GPU: a
        judge that keeps the cache of its largest case starves the others; 16 at once ran an H200 out)."""
        if self.is_initialized():
            empty = getattr(self.module(), "empty_cache", None)
            if empty is not None:
                empty()

    def release_cached_memory_over(self, limit_bytes: int) -> bool:
        """``release_cached_memory`` only when this process's allocator holds more than ``limit_bytes``
        (emptying the cache costs a device synchronisation: not after every case, only when it has grown)."""
        if not self.is_initialized():
            return False
        reserved = getattr(self.module(), "memory_reserved", None)
        if reserved is None or reserved() <= limit_bytes:
            return False
        self.release_cached_memory()
        return True

    def visible_devices(self) -> str:
        return os.environ.get(self.visible_devices_env, "0") if self.visible_devices_env else "-"

    def state(self) -> dict[str, Any]:
        """Clocks, temperature, power and throttle reasons where the vendor tool exists; else empty."""
        return nvidia_smi_state() if self.state_tool == "nvidia-smi" else {}


# How a host thread waits for its device: CUDA's context scheduling flags. CUDA's own choice ("auto") spins
# a core through every wait whenever a process has fewer contexts than the host has cores, which on a judge
# host is always: 16 judges on the H200's 16 cores, each a trusted process and a sandbox, spun through every
# wait for a device the others were also using, on the cores Triton's compilers were queued for (host CPU
# busy 98 % at the 90th percentile through a 110-kernel submission). "block" sleeps in the driver until the
# device is done (a launch-and-synchronise round trip took the same 18-19 us both ways on an idle H200);
# with it a sandbox still spins inside its timed loops (untrusted/harness_timing.py), where how soon the
# host goes on sets how long the GPU is held alone. Not the judge's default: on a saturated host a woken
# process waits for a core while it holds the GPU, and the submission ran longer (JudgeOptions.host_wait).
HOST_WAITS: dict[str, int] = {"auto": 0, "spin": 1, "yield": 2, "block": 4}
_SCHEDULING_BITS = 0x07  # CU_CTX_SCHED_MASK: the other bits (CU_CTX_MAP_HOST, ...) are the runtime's, kept


def cuda_set_host_wait(flag: int, mode: str) -> str:
    """Set the scheduling bits of every visible device's primary context (the one torch uses), keeping its
    other flags, through the driver (libcuda, loaded by torch already where CUDA is in use). The driver takes
    them on a context that is already active (CUDA 12), as a prewarmed sandbox's is, for the waits that
    follow. Returns ``mode`` or why it could not be set."""
    import ctypes

    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError as error:
        return f"unchanged: no CUDA driver ({error})"
    if driver.cuInit(0) != 0:
        return "unchanged: cuInit failed"
    devices = ctypes.c_int(0)
    driver.cuDeviceGetCount(ctypes.byref(devices))
    for ordinal in range(devices.value):
        device, flags, active = ctypes.c_int(0), ctypes.c_uint(0), ctypes.c_int(0)
        if driver.cuDeviceGet(ctypes.byref(device), ordinal) != 0:
            return f"unchanged: device {ordinal} not found"
        if driver.cuDevicePrimaryCtxGetState(device, ctypes.byref(flags), ctypes.byref(active)) != 0:
            return f"unchanged: device {ordinal}'s context state unreadable"
        wanted = (flags.value & ~_SCHEDULING_BITS) | flag
        if flags.value != wanted:
            status = driver.cuDevicePrimaryCtxSetFlags_v2(device, ctypes.c_uint(wanted))
            if status != 0:
                return f"unchanged: cuDevicePrimaryCtxSetFlags returned {status} on device {ordinal}"
    # The calling thread's current context too, where it has one (cuCtxSetFlags, CUDA 12.1 on): the one
    # whose waits are meant, whichever way this driver applies a primary context's new flags.
    current, flags = ctypes.c_void_p(0), ctypes.c_uint(0)
    if (
        hasattr(driver, "cuCtxSetFlags")
        and driver.cuCtxGetCurrent(ctypes.byref(current)) == 0
        and current.value
        and driver.cuCtxGetFlags(ctypes.byref(flags)) == 0
        and flags.value & _SCHEDULING_BITS != flag
    ):
        status = driver.cuCtxSetFlags(ctypes.c_uint((flags.value & ~_SCHEDULING_BITS) | flag))
        if status != 0:
            return f"unchanged: cuCtxSetFlags returned {status}"
    return mode


BACKENDS: dict[str, Backend] = {
    "cuda": Backend("cuda", "CUDA_VISIBLE_DEVICES", state_tool="nvidia-smi"),
    "npu": Backend("npu", "ASCEND_RT_VISIBLE_DEVICES", plugin="torch_npu"),
    "musa": Backend("musa", "MUSA_VISIBLE_DEVICES", plugin="torch_musa"),
    "cpu": Backend("cpu"),
}
ACCELERATOR_FAMILIES = ("cuda", "npu", "musa")  # the order detect_chip tries them in


def backend_for(device_type: str) -> Backend:
    try:
        return BACKENDS[device_type]
    except KeyError:
        raise ValueError(f"unknown device family {device_type!r}; known: {', '.join(BACKENDS)}") from None


def slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def chip_slug_for(device_name: str) -> str:
    """ "NVIDIA H200" -> "nvidia-h200"; unknown names are slugified as they are."""
    lowered = device_name.lower()
    for marker, slug in KNOWN_CHIPS:
        if "nvidia" in lowered and marker in lowered:
            return slug
    return slugify(device_name)


def detect_chip() -> tuple[str, str]:
    """(chip slug, torch device type) of this host: the first accelerator family with a device, by its name;
    ``cpu-interpreter`` without one. ``KGB_CHIP`` overrides the slug; with ``KGB_DEVICE_TYPE`` too, no device
    is touched at all (a process that will fork, such as a Celery worker's parent, must not initialise CUDA:
    reading a device's name does; see ``detect_chip_isolated``)."""
    override = os.environ.get("KGB_CHIP", "").strip()
    known_type = os.environ.get("KGB_DEVICE_TYPE", "").strip()
    if override and known_type in BACKENDS:
        return override, known_type
    slug, device = "cpu-interpreter", "cpu"
    for family in ACCELERATOR_FAMILIES:
        backend = BACKENDS[family]
        if backend.is_available():
            slug, device = chip_slug_for(backend.device_name(0)), family
            break
    if override:
        slug = override
        if override == "cpu-interpreter":
            device = "cpu"
    return slug, device


def detect_device() -> tuple[str, str, int | None]:
    """``detect_chip`` and the device's memory in bytes (None on the CPU, or where the family cannot say)."""
    slug, device = detect_chip()
    backend = BACKENDS.get(device)
    return slug, device, backend.total_memory() if backend is not None else None


def detect_chip_isolated(timeout_s: float = 180.0) -> tuple[str, str, int | None]:
    """``detect_device`` in a child interpreter, so this process never initialises a device. For a Celery
    worker's parent: its prefork children (and the children it re-forks later) inherit whatever it did, and
    a CUDA context does not survive a fork."""
    import json
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    code = "import json; from evaluation.judge.backends import detect_device; print(json.dumps(detect_device()))"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout_s, cwd=root, env=env, check=True
    )
    slug, device, total_bytes = json.loads(done.stdout.strip().splitlines()[-1])
    return str(slug), str(device), int(total_bytes) if total_bytes else None


def peaks_for(chip_slug: str) -> tuple[float | None, dict[str, float]]:
    bandwidth, flops = PEAKS.get(chip_slug, (None, {}))
    return bandwidth, dict(flops)


def measure_peaks(
    device_type: str, *, copy_bytes: int = 1 << 30, matmul_n: int = 8192, repeats: int = 5
) -> dict[str, Any]:
    """What this device sustains, measured: a device-to-device copy (bytes read + written per second) and a
    square matmul per dtype (bf16, fp16, fp32 without TF32), best of ``repeats`` after one warm-up. Run with
    the device to itself (the worker holds its device lock). On the H200 a 64M fp32 add moved 4.24 TB/s and a
    bf16 4096^3 matmul ran at 708 TFLOP/s (2026-11), against 4.8 TB/s and 989 TFLOP/s on the datasheet."""
    import torch

    backend = backend_for(device_type)
    device = torch.device(device_type)
    event = backend.event_class()

    def best_ms(function: Any) -> float:
        function()
        backend.synchronize()
        times = []
        for _ in range(repeats):
            start, end = event(enable_timing=True), event(enable_timing=True)
            start.record()
            function()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        return max(min(times), 1e-6)

    def copy_rate() -> float:
        source = torch.ones(copy_bytes // 4, dtype=torch.float32, device=device)
        target = torch.empty_like(source)
        return 2 * copy_bytes / (best_ms(lambda: target.copy_(source)) / 1000)

    bandwidth = copy_rate()  # its buffers are freed before the matmuls allocate theirs
    flops: dict[str, float] = {}
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        for dtype in (torch.bfloat16, torch.float16, torch.float32):
            left = torch.rand(matmul_n, matmul_n, device=device).to(dtype)
            right = torch.rand(matmul_n, matmul_n, device=device).to(dtype)
            seconds = best_ms(lambda left=left, right=right: left @ right) / 1000
            flops[str(dtype).removeprefix("torch.")] = 2 * matmul_n**3 / seconds
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    return {
        "bandwidth_bytes_per_s": bandwidth,
        "flops_by_dtype": flops,
        "device_name": backend.device_name(0) if device_type != "cpu" else "cpu",
    }


def gpu_state(device_type: str = "cuda") -> dict[str, Any]:
    """What the device family's vendor tool says now (clocks, temperature, throttling); {} where none."""
    return backend_for(device_type).state()


def device_memory_used_share(device_type: str) -> float | None:
    """The share of the device's memory in use now, read by its vendor tool from outside any sandbox (None
    where there is no tool or it says nothing): the trusted side's own view when a kernel reports the device
    full (verdicts.device_was_full)."""
    if backend_for(device_type).state_tool != "nvidia-smi" or not shutil.which("nvidia-smi"):
        return None
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    command = ["nvidia-smi", "--query-gpu=memory.used,memory.total", "--format=csv,noheader,nounits"]
    if visible:
        command.append(f"--id={visible}")
    try:
        output = subprocess.run(command, capture_output=True, text=True, timeout=10).stdout.strip()
        used, total = (float(value) for value in output.splitlines()[0].split(","))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    return used / total if total > 0 else None


def nvidia_smi_state() -> dict[str, Any]:
    """Clocks, temperature, power and throttle reasons from nvidia-smi (empty where there is none)."""
    if not shutil.which("nvidia-smi"):
        return {}
    fields = (
        "name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,"
        "clocks_throttle_reasons.active"
    )
    try:
        output = subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"], capture_output=True, text=True, timeout=10
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    if not output:
        return {}
    first = output.splitlines()[0]
    return dict(zip(fields.split(","), (value.strip() for value in first.split(",")), strict=False))

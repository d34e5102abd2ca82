"""Which chip this host judges on, and what the trusted side can read about it (clocks, peaks)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

KNOWN_CHIPS = (
    ("h200", "nvidia-h200"),
    ("h100", "nvidia-h100"),
    ("a100", "nvidia-a100"),
)

# Datasheet peaks for the roofline floor (dense, no sparsity). Bytes/s and FLOP/s by dtype name.
PEAKS: dict[str, tuple[float, dict[str, float]]] = {
    "nvidia-h200": (4.8e12, {"float32": 67e12, "float16": 989e12, "bfloat16": 989e12, "float64": 67e12,
                             "int8": 1979e12}),
    "nvidia-h100": (3.35e12, {"float32": 67e12, "float16": 989e12, "bfloat16": 989e12, "float64": 67e12,
                              "int8": 1979e12}),
    "nvidia-a100": (2.039e12, {"float32": 19.5e12, "float16": 312e12, "bfloat16": 312e12, "float64": 19.5e12,
                               "int8": 624e12}),
}


def slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def chip_slug_for(device_name: str) -> str:
    """"NVIDIA H200" -> "nvidia-h200"; unknown names are slugified as they are."""
    lowered = device_name.lower()
    for marker, slug in KNOWN_CHIPS:
        if "nvidia" in lowered and marker in lowered:
            return slug
    return slugify(device_name)


def detect_chip() -> tuple[str, str]:
    """(chip slug, torch device type) of this host; ``KGB_CHIP`` overrides the slug."""
    import torch

    override = os.environ.get("KGB_CHIP", "").strip()
    if torch.cuda.is_available():
        slug = chip_slug_for(torch.cuda.get_device_name(0))
        device = "cuda"
    else:
        slug, device = "cpu-interpreter", "cpu"
    if override:
        slug = override
        if override == "cpu-interpreter":
            device = "cpu"
    return slug, device


def peaks_for(chip_slug: str) -> tuple[float | None, dict[str, float]]:
    bandwidth, flops = PEAKS.get(chip_slug, (None, {}))
    return bandwidth, dict(flops)


def gpu_state() -> dict[str, Any]:
    """Clocks, temperature, power and throttle reasons from nvidia-smi (empty where there is none)."""
    if not shutil.which("nvidia-smi"):
        return {}
    fields = ("name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw,"
              "clocks_throttle_reasons.active")
    try:
        output = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return {}
    if not output:
        return {}
    first = output.splitlines()[0]
    return dict(zip(fields.split(","), (value.strip() for value in first.split(",")), strict=False))

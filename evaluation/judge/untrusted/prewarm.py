"""Warming a spare GPU sandbox before its job arrives: the device context and Triton's compiler.

A GPU judgement pays, inside its own time, for creating the sandbox's device context (~1 s on the H200) and
for the one-off part of Triton's first compilation (loading the backend, the first ptxas run: a first
compile took ~1.9 s there). A spare sandbox forked ahead of need (``pool.shared_spare``) does both while the
previous judgement runs. The kernel below is ours, compiled into the spare's own fresh Triton cache; the
candidate's kernels are still compiled by the candidate's first calls.
"""

from __future__ import annotations

import time

import torch
import triton
import triton.language as tl

from evaluation.judge.backends import backend_for


@triton.jit
def _touch(x_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(x_ptr + offsets, tl.load(x_ptr + offsets, mask=mask, other=0.0) + 1.0, mask=mask)


def prewarm(device_type: str) -> float:
    """Initialise the device and compile and run one small kernel; returns the seconds it took."""
    started = time.perf_counter()
    backend = backend_for(device_type)
    backend.init()
    values = torch.zeros(16, dtype=torch.float32, device=device_type)
    _touch[(1,)](values, 16, BLOCK=16)
    backend.synchronize()
    return time.perf_counter() - started

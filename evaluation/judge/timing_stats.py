"""Trusted-side statistics over the sandbox's timings: medians, spread, speedups, bootstrap, roofline."""

from __future__ import annotations

import math
import random
import statistics
from typing import Any

from evaluation.catalog.spec import Call, Case, OperatorSpec
from evaluation.judge.compare import flat_tensors


def median_iqr(samples: list[float]) -> tuple[float, float]:
    if not samples:
        return float("nan"), float("nan")
    if len(samples) < 4:
        return statistics.median(samples), 0.0
    quartiles = statistics.quantiles(samples, n=4)
    return statistics.median(samples), quartiles[2] - quartiles[0]


def low_quantile(samples: list[float], fraction: float = 0.1) -> float:
    """The value ``fraction`` of the way up the sorted samples (nearest rank); NaN when there are none."""
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def geometric_mean(values: list[float]) -> float | None:
    values = [value for value in values if value > 0 and math.isfinite(value)]
    if not values:
        return None
    return math.exp(sum(math.log(value) for value in values) / len(values))


def coefficient_of_variation(values: list[float]) -> float | None:
    """Sample standard deviation over mean: the spread of repeated speedups (None for fewer than two, or a
    zero mean)."""
    if len(values) < 2 or statistics.fmean(values) == 0:
        return None
    return statistics.stdev(values) / statistics.fmean(values)


def bootstrap_speedup_ci(
    samples: list[tuple[list[float], list[float]]], rng: random.Random, repetitions: int = 300
) -> tuple[float, float] | None:
    """95% interval of the geometric-mean speedup, resampling each case's iterations."""
    if not samples:
        return None
    estimates = []
    for _ in range(repetitions):
        speedups = []
        for reference_ms, candidate_ms in samples:
            ref = statistics.median(rng.choices(reference_ms, k=len(reference_ms)))
            cand = statistics.median(rng.choices(candidate_ms, k=len(candidate_ms)))
            speedups.append(ref / cand if cand > 0 else float("inf"))
        value = geometric_mean(speedups)
        if value is not None:
            estimates.append(value)
    if not estimates:
        return None
    estimates.sort()
    return estimates[int(0.025 * (len(estimates) - 1))], estimates[int(0.975 * (len(estimates) - 1))]


def roofline_floor_ms(
    spec: OperatorSpec,
    case: Case,
    call: Call,
    outputs: tuple[Any, ...],
    peak_bandwidth: float | None,
    peak_flops: dict[str, float],
) -> float | None:
    """max(bytes / peak bandwidth, flops / peak flops[dtype]) in ms; None without peaks."""
    if not peak_bandwidth:
        return None
    output_tensors = flat_tensors(outputs)
    if spec.bytes_moved is not None:
        moved = spec.bytes_moved(case)
    else:
        inputs = flat_tensors(list(call.args)) + flat_tensors(list(call.kwargs.values()))
        moved = sum(t.numel() * t.element_size() for t in inputs + output_tensors)
    flops = spec.flops(case) if spec.flops is not None else sum(t.numel() for t in output_tensors)
    dtype = str(output_tensors[0].dtype).removeprefix("torch.") if output_tensors else "float32"
    floor_s = moved / peak_bandwidth
    if dtype in peak_flops and peak_flops[dtype] > 0:
        floor_s = max(floor_s, flops / peak_flops[dtype])
    return floor_s * 1000.0

"""References and inputs on the trusted side: private copies of a case's call on the reference device, the
reference's outputs, and the bytes a call's tensors use."""

from __future__ import annotations

from typing import Any

import torch

from evaluation.catalog.inputs import generate_on
from evaluation.catalog.spec import Call, Case, OperatorSpec
from evaluation.judge.backends import Backend
from evaluation.judge.compare import flat_tensors, map_tensors, storage_copier


def to_device(call: Call, device: torch.device) -> Call:
    """A private copy of a call's tensors on ``device`` keeping sizes, strides, offsets and aliasing: each
    distinct storage is copied once, straight to the device (no trip through bytes), and every view is rebuilt
    on its copy. Always a copy, on the CPU too: the caller may poison and send the original afterwards."""
    move = storage_copier(device)

    def place(value: Any) -> Any:
        # A device argument (creation ops' ``device=``) means the device under test, like the tensors.
        if isinstance(value, torch.device) and value.type == "cpu":
            return device
        if isinstance(value, list):
            return [place(item) for item in value]
        if isinstance(value, tuple):
            return tuple(place(item) for item in value)
        if isinstance(value, dict):
            return {key: place(item) for key, item in value.items()}
        return value

    return Call(args=place(map_tensors(call.args, move)), kwargs=place(map_tensors(call.kwargs, move)))


def call_bytes(call: Call) -> int:
    """Bytes of the distinct storages a call's tensors use (a view counts its whole buffer once)."""
    seen: dict[int, int] = {}
    for tensor in flat_tensors(list(call.args)) + flat_tensors(list(call.kwargs.values())):
        storage = tensor.untyped_storage()
        seen[storage.data_ptr()] = storage.nbytes()
    return sum(seen.values())


def make_call(spec: OperatorSpec, case: Case, seed: int, device: torch.device) -> Call:
    """The case's inputs drawn from ``seed``, on the CPU."""
    generator = torch.Generator().manual_seed(seed)
    # Bulk random values are drawn on the GPU when there is one (a CPU float64 draw of 25M values took
    # longer than judging the case); the call still comes back on the CPU, as records expect.
    with generate_on(device if device.type != "cpu" else None):
        return spec.make_inputs(case, generator)


def reference_outputs(
    spec: OperatorSpec, case: Case, call: Call, device: torch.device, backend: Backend
) -> tuple[Any, ...]:
    """The reference's outputs for ``call`` (left untouched), kept on ``device``: the comparison runs there."""
    private = to_device(call, device)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # cuBLAS may otherwise sum fp16/bf16 GEMM partials in half precision (torch's default): on the H200 a
    # 1000x999x1001 bf16 linear then differed from an fp32-accumulating kernel by 0.25 on small outputs.
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    returned = spec.reference(case, private)
    if device.type != "cpu":
        backend.synchronize()
    return map_tensors(spec.outputs_of(case, private, returned), lambda t: t.detach())

"""Fast unit tests of the judge's pieces: static scan policy, wire format, comparison, chip detection, CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import torch

from evaluation.judge import wire
from evaluation.judge.backends import chip_slug_for, detect_chip
from evaluation.judge.compare import bit_identical, storage_copier
from evaluation.judge.static_scan import scan_source

HONEST = """
import math
from typing import Optional
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

BLOCK = 256
CONFIGS = [triton.Config({"BLOCK": b}, num_warps=w) for b in (64, 128) for w in (2, 4)]


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    acc = x.to(tl.float32).sum(axis=0) + tl.sum(x, axis=0)
    y = tl.dot(x, x) if BLOCK > 16 else x @ x
    tl.store(y_ptr + offs, libdevice.tanh(x).to(y_ptr.dtype.element_ty), mask=offs < n)


def helper(shape):
    return math.prod(shape), triton.cdiv(max(shape[0], 1), BLOCK)


def op(x: torch.Tensor, out: Optional[torch.Tensor] = None) -> torch.Tensor:
    assert x.is_contiguous() or x.dim() >= 0, "any"
    x = x.contiguous().view(-1).reshape(x.shape).flatten()
    y = torch.empty_like(x) if out is None else out
    z = torch.empty_strided((2, 3), (3, 1), dtype=torch.float16, device=x.device)
    w = x.new_empty((4,)).zero_()
    sizes = {"n": x.numel(), "stride": x.stride(0)}
    for key, value in sizes.items():
        pass
    grid = lambda meta: (triton.cdiv(x.numel(), meta["BLOCK"]),)
    kernel[grid](x, y, x.numel(), BLOCK=BLOCK * 2 // 2 + 0)
    if x.dtype == torch.bfloat16 and torch.cuda.is_available():
        torch.cuda.synchronize()
    return y.view(x.shape).transpose(0, 0).permute(0).unsqueeze(0).squeeze(0)
"""


def test_honest_patterns_pass_the_scan():
    result = scan_source(HONEST)

    assert result.syntax_error == ""
    assert result.findings == ()


@pytest.mark.parametrize(
    ("snippet", "rule"),
    [
        ("import torch\ny = torch.nn.functional.gelu", "torch_call"),
        ("import torch\nt = torch\ny = t.sin", "torch_call"),
        ("import torch.nn.functional as F", "import"),
        ("from torch import mm", "torch_call"),
        ("def f(x):\n    return x.sum()", "tensor_method"),
        ("def f(x):\n    return x.cpu()", "tensor_method"),
        ("def f(x):\n    return x.numpy()", "tensor_method"),
        ("def f(x, y):\n    x @= y", "matmul_operator"),
        ("def f(x):\n    return x.__class__", "private_attribute"),
        ("def f():\n    return globals()", "banned_builtin"),
        ("def f():\n    return eval('1')", "banned_builtin"),
        ("import operator", "import"),
        ("import sys", "import"),
        ("import triton\nx = triton.knobs", "triton_internals"),
        ("def f(x):\n    x.data = 1", "attribute_store"),
        ("T = type('T', (), {})", "dynamic_class"),
        ("def __torch_function__(cls):\n    pass", "dunder_def"),
        ("import torch\ns = torch.cuda.Stream()", "torch_call"),
        ("import torch\ng = torch.cuda.CUDAGraph()", "torch_call"),
        ("import torch\nc = torch.compile", "torch_call"),
        ("import torch\nl = torch.library", "torch_call"),
        ("import torch\nc = torch._C", "private_attribute"),
    ],
)
def test_scan_refuses(snippet, rule):
    result = scan_source(snippet)

    assert rule in {finding.rule for finding in result.findings}


def test_wire_round_trip_keeps_strides_offsets_and_aliasing():
    base = torch.arange(24, dtype=torch.float32)
    view = base[2:].view(2, 11)[:, ::2]
    transposed = base.view(4, 6).t()
    value = {
        "args": [view, transposed, 3, 2.5, float("nan"), torch.float16, (1, [2, None])],
        "kwargs": {"out": base, "flag": True},
    }
    encoder = wire.Encoder()
    payload = json.loads(json.dumps(encoder.encode(value)))

    assert len(encoder.blobs) == 1  # one storage for three aliasing views
    decoded = wire.Decoder(encoder.blobs).decode(payload)
    args, kwargs = decoded["args"], decoded["kwargs"]
    assert args[0].stride() == view.stride() and args[0].storage_offset() == view.storage_offset()
    assert torch.equal(args[0], view) and torch.equal(args[1], transposed)
    assert args[1].stride() == (1, 6)
    assert args[2:4] == [3, 2.5] and args[4] != args[4] and args[5] is torch.float16 and args[6] == (1, [2, None])
    kwargs["out"][2] = 100.0  # aliasing survived: the views see the write
    assert float(args[0][0, 0]) == 100.0


def test_wire_refuses_views_past_their_storage():
    encoder = wire.Encoder()
    payload = encoder.encode(torch.zeros(4))
    payload["__tensor__"]["size"] = [1000]

    with pytest.raises(wire.WireError, match="runs past its storage"):
        wire.Decoder(encoder.blobs).decode(payload)


def test_wire_frames_over_a_pipe_and_caps_sizes():
    import os

    read, write = os.pipe()
    wire.send(write, {"event": "x", "n": 1}, [b"abc", b""])
    header, blobs = wire.receive(read, deadline=None)
    assert (header, blobs) == ({"event": "x", "n": 1}, [b"abc", b""])
    wire.send(write, {"event": "big"}, [b"0" * 100])
    with pytest.raises(wire.WireError, match="exceed the cap"):
        wire.receive(read, deadline=None, max_blob_bytes=10)
    os.close(read)
    os.close(write)


def test_wire_sends_tensors_without_copying_them_and_decodes_a_reply_on_its_own_buffer():
    """Large inputs and outputs cross the pipe once: the encoder's blobs are views of the storages (so a
    caller sends before it changes the tensors), and a reply decoded once (``private=False``, the trusted
    side) is built on the received buffer. The default decoder copies: the sandbox decodes a call's blobs
    again for each ghost replay, whose kernel may write its inputs."""
    import os

    tensor = torch.arange(1000, dtype=torch.float32)
    encoder = wire.Encoder()
    payload = json.loads(json.dumps(encoder.encode({"x": tensor[10:20]})))
    tensor[10] = -1.0
    assert torch.frombuffer(bytearray(encoder.blobs[0]), dtype=torch.float32)[10] == -1.0  # a view: no copy

    read, write = os.pipe()
    os.set_blocking(write, False)
    try:
        wire.send(write, {"event": "called"}, encoder.blobs, deadline=time.monotonic() + 10)
        _, blobs = wire.receive(read, deadline=time.monotonic() + 10)
    finally:
        os.close(read)
        os.close(write)
    once = wire.Decoder(blobs, private=False).decode(payload)["x"]
    copied = wire.Decoder(blobs).decode(payload)["x"]
    assert torch.equal(once, tensor[10:20]) and torch.equal(copied, tensor[10:20])
    blobs[0][40:44] = torch.tensor([7.0]).numpy().tobytes()  # element 10 of the storage
    assert float(once[0]) == 7.0 and float(copied[0]) == -1.0


@pytest.mark.parametrize(
    ("name", "slug"),
    [
        ("NVIDIA H200", "nvidia-h200"),
        ("NVIDIA H100 80GB HBM3", "nvidia-h100"),
        ("NVIDIA A100-SXM4-80GB", "nvidia-a100"),
        ("Some New Accelerator X1", "some-new-accelerator-x1"),
    ],
)
def test_chip_slugs(name, slug):
    assert chip_slug_for(name) == slug


def test_detect_chip_without_a_gpu_and_with_the_override(monkeypatch):
    if torch.cuda.is_available():
        pytest.skip("this host has a GPU")
    monkeypatch.delenv("KGB_CHIP", raising=False)
    assert detect_chip() == ("cpu-interpreter", "cpu")
    monkeypatch.setenv("KGB_CHIP", "my-chip")
    assert detect_chip() == ("my-chip", "cpu")


def test_compare_nan_dtype_and_tolerance_rules():
    from conftest import small_cos_record

    from evaluation.catalog.spec import Call, Case
    from evaluation.judge.compare import compare_outputs

    spec = small_cos_record()
    case = Case("cos", {"shape": [3], "dtype": "float32"})
    call = Call(args=[torch.zeros(3)])
    ref = torch.tensor([1.0, 2.0, 3.0])
    assert compare_outputs(spec, case, call, (ref + 1e-5,), (ref,)) is None
    assert compare_outputs(spec, case, call, (ref + 1e-3,), (ref,)).startswith("output 0: 3 of 3 values outside")
    assert (
        compare_outputs(spec, case, call, (torch.tensor([1.0, float("nan"), 3.0]),), (ref,))
        == "output 0: 1 NaN value(s) (the case does not allow NaN)"
    )
    assert (
        compare_outputs(spec, case, call, (ref.double(),), (ref,))
        == "output 0: dtype torch.float64 != expected torch.float32"
    )
    assert compare_outputs(spec, case, call, (ref, ref), (ref,)) == "2 output(s), expected 1"


def test_vllm_wrapper_with_a_parameter_named_input_passes_the_scan():
    root = Path(__file__).resolve().parents[3]
    source = (root / "evaluation/catalog/reference_kernels/vllm13__rms_norm.py").read_text()

    assert scan_source(source).findings == ()


@pytest.mark.parametrize(
    "snippet",
    [
        "def f(out, input):\n    return input.shape",
        "def f(xs):\n    for input in xs:\n        pass\n    return input",
        "def f(a):\n    return [open for open in a]",
        "def f(input):\n    def g():\n        return input\n    return g",
        "f = lambda input: input",
        "def f(x):\n    input = x\n    return input",
    ],
)
def test_locally_bound_names_shadow_banned_builtins(snippet):
    assert scan_source(snippet).findings == ()


@pytest.mark.parametrize(
    "snippet",
    [
        "x = input()",
        "def g():\n    return input()",
        "y = [0 for eval in ()]\nz = eval('1')",
        "if False:\n    eval = 1\nz = eval('1')",
        "def f():\n    global eval\n    eval = 1\n    return eval('1')",
        "def f(x, input=input):\n    return input",
        "def f(input):\n    return 1\ndef g():\n    return input()",
    ],
)
def test_the_builtin_itself_stays_banned(snippet):
    assert "banned_builtin" in {finding.rule for finding in scan_source(snippet).findings}


def test_device_faults_are_named_in_one_line_and_tracebacks_are_cut_at_line_ends():
    from evaluation.judge import faults

    cuda = (
        'Traceback (most recent call last):\n  File "candidate_kernel.py", line 9, in cos\n'
        "torch.AcceleratorError: CUDA error: an illegal memory access was encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call"
    )
    assert faults.device_fault(cuda) == "illegal memory access: the kernel read or wrote outside its buffers"
    assert faults.device_fault("RuntimeError: CUDA error: device-side assert triggered") == (
        "a device-side assertion failed"
    )
    assert faults.device_fault("triton.runtime.errors.OutOfResources: out of resource: shared memory") == (
        "the kernel needs more shared memory or registers than the device has"
    )
    assert faults.device_fault("ValueError: shapes do not match") is None
    assert faults.last_line(cuda) == "CUDA kernel errors might be asynchronously reported at some other API call"
    long = "\n".join(f"line {index} " + "x" * 50 for index in range(100))
    tail = faults.tail_lines(long, 500)
    assert len(tail) <= 500 and tail.startswith("line ") and tail.endswith("x" * 50)
    assert long.endswith(tail)


def test_memory_formats_cross_the_wire_by_name():
    from evaluation.judge import wire

    formats = [torch.contiguous_format, torch.channels_last, torch.channels_last_3d, torch.preserve_format]
    encoder = wire.Encoder()
    sent = encoder.encode({"memory_format": formats})
    assert wire.Decoder(encoder.blobs).decode(sent)["memory_format"] == formats
    with pytest.raises(wire.WireError, match="unknown memory format"):
        wire.Decoder([]).decode({"__memory_format__": "sideways"})


def test_a_seed_drawn_from_the_generator_is_not_compute_but_a_large_draw_is():
    from evaluation.judge.untrusted import guard

    generator = torch.Generator().manual_seed(3)
    guard.STATE.reset(ghost=False)
    with guard.audited():
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator).item())
    assert guard.STATE.compute_ops == [] and guard.STATE.host_read_elements == 1 and seed >= 0
    guard.STATE.reset(ghost=False)
    with guard.audited():
        torch.randint(0, 10, (100,), generator=generator)
    assert guard.STATE.compute_ops == ["aten::randint.low_generator"]


def test_dtype_arithmetic_is_not_compute():
    """Type promotion is how wrappers choose an output dtype; it reads dtypes, not data."""
    from evaluation.judge.untrusted import guard

    left, right = torch.ones(3, dtype=torch.float16), torch.ones(3, dtype=torch.float32)
    guard.STATE.reset(ghost=False)
    with guard.audited():
        promoted = torch.promote_types(left.dtype, right.dtype)
        from_tensors = torch.result_type(left, right)
        from_scalar = torch.result_type(left, 2.5)
        castable = torch.can_cast(promoted, torch.int32)
    assert (promoted, from_tensors, from_scalar, castable) == (torch.float32, torch.float32, torch.float16, False)
    assert guard.STATE.compute_ops == [] and guard.STATE.host_read_elements == 0


def test_a_ghost_replay_reads_back_what_the_real_call_read():
    # A kernel that launches a marker and reads it back must not tell a ghost replay (where launches are
    # no-ops) from the real call: the replay reads the real call's values, in order, where they are of the
    # same kind; anything else reads what is there.
    from evaluation.judge.untrusted.guard import HostReads

    reads = HostReads()
    reads.record()
    assert reads.seen(31337) == 31337
    marker = torch.tensor([7, 8])
    assert reads.seen(marker) is marker
    assert reads.seen([1.5, 2.5]) == [1.5, 2.5]

    reads.replay()
    assert reads.seen(0) == 31337
    replayed = reads.seen(torch.zeros(2, dtype=torch.int64))
    assert replayed.tolist() == [7, 8]
    assert reads.seen([0.0]) == [0.0]  # another shape than recorded: what is there
    assert reads.seen(5) == 5  # past the record


def test_a_reason_holds_neither_nul_nor_lone_surrogates():
    # The kernel's exception text goes into the reason; PostgreSQL's text and jsonb refuse NUL, UTF-8 refuses
    # lone surrogates. Both become visible backslash escapes.
    from evaluation.judge.job import CaseResult, JudgeResult

    result = JudgeResult(
        "failed_runtime",
        "raised: RuntimeError: a\x00b\ud800",
        failed_case={"case_id": "c", "message": "x\x00"},
        case_results=[CaseResult("c", "smoke", {}, False, message="y\x00")],
    )

    assert result.reason == "raised: RuntimeError: a\\x00b\\ud800"
    assert result.failed_case["message"] == "x\\x00" and result.case_results[0].message == "y\\x00"
    result.reason.encode("utf-8")


def test_a_twin_replay_hands_triton_the_twins_and_the_wrapper_its_own_inputs():
    # In a twin replay Triton's pointers (data_ptr) lead into each storage's twin, and so do the storages'
    # own addresses: the inputs' twins hold another draw, the wrapper's copies of them are copied on the
    # twins too, and memory the wrapper made gets a twin (a copy) the first time its address is asked for.
    # Reads within the budget read twins. The judge's own bookkeeping keeps the real addresses.
    from evaluation.judge.untrusted import guard

    guard.install_host_read_counters()
    real, twin = torch.arange(6.0), torch.arange(6.0) + 100
    twins = guard.Twins()
    twins.add(real, twin)
    guard.STATE.twins = twins
    guard.STATE.reset(ghost=False)
    try:
        with guard.audited():
            twin_base = twin.untyped_storage().data_ptr()  # a twin's own memory is where it is
            assert real[2:].data_ptr() == twin_base + 2 * 4  # views keep their offset into the twin
            assert real[2:].untyped_storage().data_ptr() == twin_base  # so an offset from the two is the view's
            copied = real.view(2, 3).t().contiguous()  # the wrapper's copy, made on the twins as well
            assert twins.has(copied)
            assert torch.equal(twins.view(copied), twin.view(2, 3).t().contiguous())
            assert real[1].item() == 101.0  # a budgeted read reads the twin
            scratch = torch.zeros(3)
            pointer = scratch.data_ptr()  # first asked for: a twin, a copy of what it holds
            assert pointer != guard.storage_address(scratch.untyped_storage()) and twins.has(scratch)
            assert scratch.untyped_storage().data_ptr() == pointer
            assert torch.equal(twins.view(scratch), torch.zeros(3))
            assert real.numpy().tolist() == [100.0, 101.0, 102.0, 103.0, 104.0, 105.0]
    finally:
        guard.STATE.twins = None
    assert real.data_ptr() == real.untyped_storage().data_ptr() == guard.storage_address(real.untyped_storage())


def test_memory_built_on_a_raw_address_is_refused_in_the_sandbox():
    # At a twin's address such memory would follow the twins; on the call's own it is work outside Triton.
    from evaluation.judge.untrusted import guard

    guard.install_host_read_counters()
    guard.STATE.reset(ghost=False)
    x = torch.arange(4.0)
    with pytest.raises(RuntimeError, match="raw address"):
        torch._C._construct_storage_from_data_pointer(x.data_ptr(), x.device, 16)

    class Device:
        __cuda_array_interface__ = {"data": (x.data_ptr(), False), "shape": (4,), "typestr": "<f4", "version": 2}

    with pytest.raises(RuntimeError, match="__cuda_array_interface__"):
        torch.as_tensor(Device())
    assert guard.STATE.compute_ops[-1].startswith("memory built on a raw address")
    assert torch.equal(torch.as_tensor([1.0, 2.0]), torch.tensor([1.0, 2.0]))  # plain data as before


def test_the_wire_keeps_a_lazily_negated_or_conjugated_view_as_it_reads():
    # resolve_neg's and resolve_conj's inputs: the storage holds the raw values, a bit says how they read
    negated = torch.tensor([1.0, -2.0])._neg_view()
    conjugated = torch.tensor([1 + 2j, 3 - 4j]).conj()
    encoder = wire.Encoder()
    payload = encoder.encode([negated, conjugated, torch.tensor([5.0])])
    got = wire.Decoder(encoder.blobs).decode(payload)

    assert got[0].is_neg() and got[0].tolist() == [-1.0, 2.0]
    assert got[1].is_conj() and got[1].resolve_conj().tolist() == [1 - 2j, 3 + 4j]
    assert not got[2].is_neg() and not got[2].is_conj()
    assert bit_identical(negated, got[0]) and not bit_identical(negated, torch.tensor([1.0, -2.0]))
    copied = storage_copier()(negated)
    assert copied.is_neg() and copied.data_ptr() != negated.data_ptr() and torch.equal(copied, negated)


def test_the_tree_walk_reads_a_triton_tensor_descriptor_and_no_lookalike():
    # A TensorDescriptor among a launch's arguments stands for its tensor (the twin replay swaps it); an
    # object of the candidate's with a tensor ``base`` (a property it could run code in) is not walked.
    from triton.tools.tensor_descriptor import TensorDescriptor

    from evaluation.judge.compare import flat_tensors

    tensor = torch.zeros(8, 16)
    descriptor = TensorDescriptor.from_tensor(tensor, [8, 16])

    class Lookalike:
        base = tensor

    class Subclass(TensorDescriptor):
        pass

    assert [t is tensor for t in flat_tensors([1, descriptor, {"k": tensor}])] == [True, True]
    assert flat_tensors(Lookalike()) == []
    assert flat_tensors(Subclass(tensor, [8, 16], [16, 1], [8, 16])) == []


def test_scan_notes_are_worded_as_observations_and_skip_what_is_plainly_allowed():
    # The notes decide nothing, so a note must not read as a rule ("is not allowed"), and what the prompt
    # allows outright (one element read back, logging, warnings) is not named at all.
    honest = (
        "import logging\nimport warnings\nlog = logging.getLogger(__name__)\n"
        "def f(x):\n    warnings.warn('slow path')\n    return int(x.item())\n"
    )
    assert scan_source(honest).findings == ()
    notes = [str(finding) for finding in scan_source("import os\nimport torch\ny = torch.cos\n").findings]
    assert notes == [
        "line 1: imports os, outside the short list [import]",
        "line 3: names torch.cos, not an allocation, view or metadata name [torch_call]",
    ]
    assert not any("not allowed" in note for note in notes)


def test_a_noted_module_is_noted_once_at_its_import_not_again_as_tensor_methods():
    source = (
        "import functools\nimport operator\nimport torch\n"
        "def numel(shape):\n    return functools.reduce(operator.mul, shape, 1)\n"
        "def out_shape(a, b):\n    return torch.broadcast_shapes(a.shape, b.shape)\n"
    )
    assert [finding.rule for finding in scan_source(source).findings] == ["import"]

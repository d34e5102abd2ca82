"""The typed messages between the judge and its sandbox (evaluation/judge/protocol): every message survives
its own header, and the decoders refuse what is missing, mistyped, out of range or oversized, once, where the
message arrives. Then the two ends with a real sandbox: a malformed request gets a harness_error that says
what is wrong, and a malformed reply forged inside the kernel's process is the result_channel rejection."""

from __future__ import annotations

import math
import time

import pytest
import torch
from conftest import check_outcomes

from evaluation.judge import protocol, wire
from evaluation.judge.protocol.fields import MAX_SAMPLES, TEXT_CHARS

OUTCOME = protocol.CallOutcome(
    launches=2,
    compute_ops=(),
    not_plain=(),
    value={"__dict__": []},
    phase_s={"decode": 0.01, "call": 0.2, "encode": 0.001},
    compiles=1,
)

MESSAGES = [
    protocol.Start(
        token="ab12",
        device="cuda:0",
        memory_fraction=0.5,
        keep_alive_bytes=1 << 30,
        timing=True,
        host_wait="block",
        stream_hold="released",
    ),
    protocol.Load(source="import triton\n", entry_points=("cos", "cos_out")),
    protocol.CallCase(
        entry_point="cos_out",
        payload={"args": [], "kwargs": {}},
        ghost=True,
        ghost_variants=2,
        poison_keys=("out",),
        ghost_keep=(0, "out"),
        repeat=False,
        lend_gpu=True,
        gate_gpu=True,
    ),
    protocol.LoadTimingSets(
        keys=("cos[x]", "cos[y]"),
        candidate_sets=(({"args": []},), ({"args": []}, {"args": []})),
        reference_sets=((), ()),
    ),
    protocol.TimeCase(
        sets_key="cos[x]",
        entry_point="cos",
        operator_id="aten::cos",
        case={"entry_point": "cos", "params": {}},
        budget_s=0.15,
        rse_target=0.005,
        min_iterations=20,
        max_iterations=200,
        spot_checks=1,
        spot_seed=(1 << 63) - 1,
        poison_keys=(),
        restore_keys=(0,),
        clock_warmup_s=0.0,
        window="do_bench",
    ),
    protocol.FetchSpots(keys=("cos[x]", "cos[y]"), gate_gpu=True, gate_pause_s=0.05),
    protocol.Resume(),
    protocol.Exit(),
    protocol.Ready(pid=12, uid=65534, prewarm_s=1.5),
    protocol.Started(
        python="3.11.7",
        torch="2.11",
        triton="3.6",
        native_threads_before=-1,
        device_memory_cap="0.5 of device memory",
        device_name="NVIDIA H200",
        host_wait="block",
        stream_hold="released (first released in 900.0 ms, unreleased 2.01 ms)",
    ),
    protocol.Loaded(ok=False, error="Traceback...\nSyntaxError: x", missing=("cos",), integrity=("x was replaced",)),
    protocol.Called(
        real=OUTCOME,
        ghosts=(OUTCOME, protocol.CallOutcome(launches=0, compute_ops=(), not_plain=(), value=None, error="boom")),
        ghost_blob_offsets=(3, 5),
        repeat=OUTCOME,
        repeat_blob_offset=1,
        integrity=(),
        native_threads=4,
    ),
    protocol.SetsLoaded(ok=True),
    protocol.Timed(
        ok=True,
        candidate_ms=(0.5, 0.25),
        reference_ms=(1.0, 1.0),
        candidate_tail_ms=(0.01,),
        finite=True,
        stop_reason="rse",
        loop_s=0.1,
        compute_ops=("aten::add",),
        holds={"candidate_exposed": 0.0},
        kernel_ms=0.016,
        probe_note="spot-checked",
        flush_ms=0.066,
    ),
    protocol.Spots(ok=True, spots={"cos[x]": (protocol.SpotEntry(value=None, blob_offset=0, blob_count=2),)}),
    protocol.GpuEvent(event="want_gpu"),
    protocol.HarnessFailure(error="Traceback: KeyError"),
    protocol.Bye(),
    # Sets the sandbox draws itself (timed_requests.sets_to_draw_in_sandbox), beside sets sent over.
    protocol.LoadTimingSets(
        keys=("cos[x]",),
        candidate_sets=(({"args": []},),),
        reference_sets=((),),
        operator_id="aten::cos",
        draws=(protocol.SetsToDraw(key="cos[z]", case={"entry_point": "cos", "params": {}}, seeds=(0, (1 << 63) - 1)),),
    ),
]
DRAWING = MESSAGES[-1].to_header()


@pytest.mark.parametrize("message", MESSAGES, ids=lambda message: type(message).__name__)
def test_every_message_survives_its_own_header(message):
    header = message.to_header()
    kind = type(message)
    decoded = protocol.decode_request(header) if isinstance(message, protocol.Request) else kind.decode(header)
    assert decoded == message
    assert type(decoded) is kind


def test_every_request_has_its_reply():
    answered = set(protocol.REPLIES)
    assert answered == set(protocol.requests.REQUESTS.values()) - {protocol.Resume}
    start = MESSAGES[0]
    started = protocol.decode_reply(start, MESSAGES[9].to_header())
    assert started.environment() == {
        "python": "3.11.7",
        "torch": "2.11",
        "triton": "3.6",
        "native_threads_before": -1,
        "device_name": "NVIDIA H200",
        "device_memory_cap": "0.5 of device memory",
        "sandbox_host_wait": "block",
        "stream_hold": "released (first released in 900.0 ms, unreleased 2.01 ms)",
    }
    with pytest.raises(wire.WireError, match="expected a 'started' reply, got 'loaded'"):
        protocol.decode_reply(start, MESSAGES[10].to_header())


def _without(header, name):
    return {key: value for key, value in header.items() if key != name}


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        ({"op": "bogus"}, "unknown op 'bogus'"),
        ({"token": "x"}, "unknown op None"),
        ([1, 2], "unknown op None"),
        (_without(MESSAGES[0].to_header(), "device"), "start request: field 'device' is missing"),
        (dict(MESSAGES[0].to_header(), memory_fraction=2.0), "field 'memory_fraction' is not a number in"),
        (dict(MESSAGES[0].to_header(), memory_fraction="0.5"), "field 'memory_fraction' is not a number in"),
        (dict(MESSAGES[0].to_header(), keep_alive_bytes=-1), "field 'keep_alive_bytes' is not an integer"),
        (dict(MESSAGES[0].to_header(), timing=1), "field 'timing' is not a boolean"),
        (dict(MESSAGES[0].to_header(), host_wait="spin"), "field 'host_wait' is not one of auto, yield, block"),
        (dict(MESSAGES[0].to_header(), stream_hold="none"), "field 'stream_hold' is not one of spin, released"),
        (dict(MESSAGES[1].to_header(), entry_points="cos"), "field 'entry_points' is not a list"),
        (dict(MESSAGES[1].to_header(), entry_points=["cos", 3]), "holds something other than strings"),
        (dict(MESSAGES[2].to_header(), payload=[]), "field 'payload' is not an object"),
        (dict(MESSAGES[2].to_header(), ghost_variants=0), "field 'ghost_variants' is not an integer in"),
        (dict(MESSAGES[2].to_header(), ghost_variants=True), "field 'ghost_variants' is not an integer in"),
        (dict(MESSAGES[2].to_header(), poison_keys=[None]), "other than argument positions and names"),
        (dict(MESSAGES[4].to_header(), max_iterations=MAX_SAMPLES + 1), "field 'max_iterations'"),
        (dict(MESSAGES[4].to_header(), case="cos"), "field 'case' is not an object"),
        (
            dict(MESSAGES[4].to_header(), window="sideways"),
            "field 'window' is not one of device, caller, whole_call, do_bench",
        ),
        (dict(MESSAGES[4].to_header(), window=1), "field 'window' is not a string"),
        (dict(MESSAGES[5].to_header(), keys=["k"] * 10_001), "has 10001 items, over 10000"),
        (dict(MESSAGES[5].to_header(), gate_pause_s=-1), "field 'gate_pause_s' is not a number in [0, 60]"),
        (dict(MESSAGES[5].to_header(), gate_pause_s="soon"), "field 'gate_pause_s' is not a number in [0, 60]"),
        (dict(DRAWING, operator_id=""), "field 'operator_id' is missing where sets are to be drawn"),
        (dict(DRAWING, draws=[1]), "field 'draws' holds an entry that is not an object"),
        (dict(DRAWING, draws=[dict(DRAWING["draws"][0], seeds=[])]), "field 'seeds' is not a list of seeds"),
        (dict(DRAWING, draws=[dict(DRAWING["draws"][0], seeds=[-1])]), "field 'seeds' is not a list of seeds"),
        (dict(DRAWING, draws=[dict(DRAWING["draws"][0], seeds=[True])]), "field 'seeds' is not a list of seeds"),
        (dict(DRAWING, draws=[dict(DRAWING["draws"][0], seeds=[1 << 63])]), "field 'seeds' is not a list of seeds"),
        (dict(DRAWING, draws=[dict(DRAWING["draws"][0], case="cos")]), "field 'case' is not an object"),
        (dict(DRAWING, draws=[dict(DRAWING["draws"][0], key="cos[x]")]), "field 'draws' repeats a key"),
    ],
)
def test_a_malformed_request_names_what_is_wrong(header, problem):
    with pytest.raises(wire.WireError, match=None) as raised:
        protocol.decode_request(header)
    assert problem in str(raised.value)


def test_optional_request_fields_take_their_defaults():
    bare = _without(_without(MESSAGES[2].to_header(), "lend_gpu"), "gate_gpu")
    call = protocol.decode_request(bare)
    assert (call.lend_gpu, call.gate_gpu, call.gate_pause_s) == (False, False, 0.0)
    assert protocol.decode_request(_without(MESSAGES[4].to_header(), "clock_warmup_s")).clock_warmup_s is None
    assert protocol.decode_request(_without(MESSAGES[4].to_header(), "window")).window == "device"
    # A judge that says nothing of how to wait leaves CUDA's own way.
    assert protocol.decode_request(_without(MESSAGES[0].to_header(), "host_wait")).host_wait == "auto"
    assert protocol.decode_request(_without(MESSAGES[0].to_header(), "stream_hold")).stream_hold == "spin"


def _called(**changes):
    return dict(MESSAGES[11].to_header(), **changes)


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        (_without(_called(), "real"), "field 'real' is missing"),
        (_called(real="nonsense"), "the real call: not an object"),
        (_called(real=_without(protocol.fields.plain(OUTCOME), "launches")), "'launches' is missing"),
        (_called(ghost_blob_offsets=[3]), "does not give each ghost replay its blobs in order"),
        (_called(ghost_blob_offsets=[5, 3]), "does not give each ghost replay its blobs in order"),
        (_called(repeat_blob_offset=4), "does not give each ghost replay its blobs in order"),
        (_called(ghost_blob_offsets=[3, -1]), "holds something other than blob offsets"),
        (_called(ghosts="two"), "field 'ghosts' is not a list"),
        (_called(integrity=[{"x": 1}]), "field 'integrity' holds something other than strings"),
        (_called(event="timed"), "expected a 'called' reply, got 'timed'"),
    ],
)
def test_a_malformed_call_reply_is_refused(header, problem):
    with pytest.raises(wire.WireError) as raised:
        protocol.Called.decode(header)
    assert problem in str(raised.value)


def test_a_calls_diagnostics_stay_lenient():
    """Phases and compilations only show where time went: a malformed figure is dropped, not a verdict."""
    real = dict(protocol.fields.plain(OUTCOME), phase_s={"call": -1, "decode": "x", "encode": 2e9, "extra": 1.0})
    decoded = protocol.Called.decode(_called(real=dict(real, compiles=True), ghosts=[], ghost_blob_offsets=[]))
    assert decoded.real.phase_s == {}
    assert decoded.real.compiles is None
    decoded = protocol.Called.decode(_called(real=dict(real, phase_s=[1], compiles=3.5)))
    assert (decoded.real.phase_s, decoded.real.compiles) == ({}, None)


def test_reply_strings_are_bounded_and_keep_a_tracebacks_tail():
    error = "x" * 100_000 + "\nRuntimeError: the last line"
    failure = protocol.HarnessFailure.decode({"event": "harness_error", "error": error})
    assert len(failure.error) == TEXT_CHARS and failure.error.endswith("RuntimeError: the last line")
    timed = protocol.Timed.decode(
        {"event": "timed", "ok": True, "reference_kind": "k" * 5000, "value_rotation": "v" * 90}
    )
    assert (len(timed.reference_kind), timed.value_rotation) == (400, "v" * 80)
    # Why a probe's figure does not count: a short note, cut, never a verdict's reason on its own.
    noted = protocol.Timed.decode({"event": "timed", "ok": True, "probe_note": "n" * 500})
    assert noted.probe_note == "n" * 80


def _timed(**changes):
    return dict(MESSAGES[13].to_header(), **changes)


@pytest.mark.parametrize(
    ("header", "problem"),
    [
        (_timed(candidate_ms=[0.0] * (MAX_SAMPLES + 1)), f"has {MAX_SAMPLES + 1} items, over {MAX_SAMPLES}"),
        (_timed(reference_ms=[1.0, -0.5]), "holds '-0.5', not milliseconds"),
        (_timed(reference_ms=[1.0, "2"]), "holds '2', not milliseconds"),
        (_timed(reference_ms=[True]), "holds 'True', not milliseconds"),
        (_timed(candidate_tail_ms=[1e12]), "not milliseconds"),
        (_timed(candidate_ms={"a": 1}), "field 'candidate_ms' is not a list"),
        (_timed(compute_calls=-3), "field 'compute_calls' is not an integer"),
        (_timed(ok="yes"), "field 'ok' is not a boolean"),
        (_timed(kernel_ms=-1.0), "field 'kernel_ms'"),
        (_timed(flush_ms=-1.0), "field 'flush_ms'"),
        (_timed(probe_note=["a list"]), "field 'probe_note' is not a string"),
    ],
)
def test_a_malformed_timing_reply_is_refused(header, problem):
    with pytest.raises(wire.WireError) as raised:
        protocol.Timed.decode(header)
    assert problem in str(raised.value)


def test_timing_samples_that_are_not_finite_make_the_reply_unusable_not_malformed():
    """As before: the loop's non-finite samples come back and the trusted side says "no usable samples";
    a sandbox claiming ``finite`` over a NaN is not believed."""
    timed = protocol.Timed.decode(_timed(candidate_ms=[0.5, math.nan], finite=True))
    assert math.isnan(timed.candidate_ms[1]) and timed.finite is False
    lenient = protocol.Timed.decode(_timed(loop_s=-1, prep_s="soon", holds={"a": math.inf, "b": 2, "c": "x"}))
    assert (lenient.loop_s, lenient.prep_s, lenient.holds) == (None, None, {"b": 2.0})
    missing = protocol.Timed.decode({"event": "timed", "ok": True})  # a verdict follows: no usable samples
    assert (missing.candidate_ms, missing.finite, missing.reference_kind) == ((), False, "reference")
    assert missing.flush_ms is None  # a loop without a flush, or an older sandbox: no launch-bound mark


def test_spot_replies_keep_their_two_verdicts():
    """Spots not keyed by case stay the harness_integrity verdict (``spots`` None); a malformed entry is
    refused like any malformed reply."""
    assert protocol.Spots.decode({"event": "spots", "ok": True, "spots": ["a"]}).spots is None
    assert protocol.Spots.decode({"event": "spots", "ok": True}).spots == {}
    for entries, problem in (
        ([{"value": None, "blob_offset": 0}], "'blob_count' is missing"),
        ([{"value": None, "blob_offset": "0", "blob_count": 1}], "'blob_offset' is not an integer"),
        ("x", "field 'k' is not a list"),
    ):
        with pytest.raises(wire.WireError) as raised:
            protocol.Spots.decode({"event": "spots", "ok": True, "spots": {"k": entries}})
        assert problem in str(raised.value)
    with pytest.raises(wire.WireError, match="has 10001 keys"):
        protocol.Spots.decode({"event": "spots", "ok": True, "spots": {str(key): [] for key in range(10_001)}})


def test_the_envelope_never_raises_and_a_missing_token_fails_the_token_check():
    assert protocol.Envelope.decode({}) == protocol.Envelope(None, None)
    assert protocol.Envelope.decode({"token": 7, "event": ["x"]}) == protocol.Envelope(None, None)
    with pytest.raises(wire.WireError, match="unknown GPU event"):
        protocol.GpuEvent.decode({"event": "gpu_party"})
    with pytest.raises(wire.WireError, match="field 'pid' is not an integer"):
        protocol.Ready.decode({"event": "ready", "pid": "1", "uid": 0})


# ---------------------------------------------------------------- both ends, with a real sandbox


def test_a_malformed_request_reaching_the_sandbox_is_a_clear_harness_error(warm_forkserver):
    from evaluation.judge.sandbox import HarnessError, Sandbox

    sandbox = Sandbox("cpu", forkserver=warm_forkserver)
    try:
        deadline = time.monotonic() + 60
        sandbox.wait_ready(deadline)
        start = protocol.Start(token=sandbox.token, device="cpu", memory_fraction=0.5, keep_alive_bytes=0, timing=False)
        reply, _ = sandbox.request(start.to_header(), [], deadline)
        assert protocol.decode_reply(start, reply).device_name is None
        with pytest.raises(HarnessError, match="call request: field 'payload' is missing"):
            sandbox.request({"op": "call", "entry_point": "cos"}, [], deadline)
        with pytest.raises(HarnessError, match="unknown op 'bogus'"):
            sandbox.request({"op": "bogus"}, [], deadline)
        with pytest.raises(HarnessError, match="unexpected op 'resume' between requests"):
            sandbox.request(protocol.Resume().to_header(), [], deadline)
        reply, _ = sandbox.request(protocol.Exit().to_header(), [], deadline)  # still serving
        assert protocol.Bye.decode(reply) == protocol.Bye()
    finally:
        sandbox.close()


def test_a_malformed_reply_forged_with_the_token_is_a_tampered_result_channel(run_judge):
    result = run_judge("cheats/forge_malformed_reply.py", static_scan=False)
    assert result.status == "rejected"
    assert result.reason.startswith('the result channel was tampered with in case cos[{"dtype"')
    assert result.reason.endswith("the real call: field 'launches' is missing")
    assert check_outcomes(result)["result_channel"] == "failed"


def test_a_forged_reply_whose_tensors_do_not_decode_is_a_tampered_result_channel(run_judge):
    # The header decodes; the returned view claims 132 bytes of a 2-byte blob. Past the header the reply is
    # still the kernel's: the same rejection, not the judge's error (which would be retried).
    result = run_judge("cheats/forge_corrupt_tensors.py", static_scan=False)
    assert result.status == "rejected"
    assert result.reason.startswith('the result channel was tampered with in case cos[{"dtype"')
    assert result.reason.endswith("tensor view runs past its storage")
    assert check_outcomes(result)["result_channel"] == "failed"
    assert not result.retryable


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"__tensor__": {"storage": 0, "dtype": "float32", "size": [8], "stride": [1], "offset": 0}}, "runs past"),
        ({"__tensor__": {"storage": 3, "dtype": "float32", "size": [1], "stride": [1], "offset": 0}}, "storage index"),
        ({"__tensor__": {"dtype": "float32", "size": [1], "stride": [1], "offset": 0}}, "bad tensor header"),
        ({"__tensor__": {"storage": 0, "dtype": "float99", "size": [1], "stride": [1], "offset": 0}}, "header"),
        ({"__tensor__": [1, 2]}, "bad tensor header"),
        ({"__tensor__": {"storage": 0, "dtype": "uint8", "size": [1 << 70], "stride": [0], "offset": 0}}, "geometry"),
        ({"__float__": "one"}, "bad float"),
        ({"__float__": [1]}, "bad float"),
        ({"__complex__": [1.0]}, "bad complex"),
        ({"__complex__": ["a", 1.0]}, "bad complex"),
        ({"__dtype__": ["float32"]}, "unknown dtype"),
        ({"__device__": "warp:drive"}, "bad device"),
        ({"__memory_format__": {}}, "unknown memory format"),
        ({"__tuple__": 3}, "bad tuple"),
        ({"__dict__": [["a"]]}, "bad dict"),
        ({"__dict__": {"a": 1}}, "bad dict"),
        ({"no": "tag"}, "unknown value tag"),
    ],
)
def test_a_malformed_wire_tree_is_a_wire_error_and_nothing_else(value, problem):
    # The one exception the trusted side turns into the result_channel verdict (session.decoding_reply).
    with pytest.raises(wire.WireError, match=problem):
        wire.Decoder([bytearray(4)], private=False).decode(value)


def test_nesting_too_deep_is_a_wire_error_in_a_header_and_in_a_tree():
    with pytest.raises(wire.WireError, match="nested too deeply"):
        wire.parse_json(b"[" * 100_000 + b"]" * 100_000, "header")
    tree: object = []
    for _ in range(100_000):
        tree = [tree]
    with pytest.raises(wire.WireError, match="nested too deeply"):
        wire.Decoder([], private=False).decode(tree)


def test_a_call_tree_of_the_wrong_structure_is_a_wire_error():
    from conftest import small_cos_record

    from evaluation.catalog.spec import Call
    from evaluation.judge.checks import decode_call

    entry = small_cos_record().entry_point("cos_out")  # mutates "out"
    sent = Call(args=[1], kwargs={"out": 2})

    def tree(**items: object) -> dict:
        return {"__dict__": [[key, item] for key, item in items.items()]}

    assert decode_call(tree(returned=None, args=[5], kwargs=tree(out=6)), [], sent, entry) == (
        Call(args=[5], kwargs={"out": 6}),
        None,
    )
    for broken, problem in (
        ([], "arguments are missing"),
        (tree(args=[5], kwargs=tree(out=6)), "return value is missing"),
        (tree(returned=None, args=tree(), kwargs=tree(out=6)), "not a list and a dict"),
        (tree(returned=None, args=[], kwargs=tree(out=6)), "0 positional arguments of 1 sent"),
        (tree(returned=None, args=[5], kwargs=tree()), "lack its mutated argument 'out'"),
    ):
        with pytest.raises(wire.WireError, match=problem):
            decode_call(broken, [], sent, entry)


def test_the_untrusted_package_imports_nothing_of_the_trusted_side_but_the_protocol():
    """Everything the sandbox process imports of the judge, followed import by import: its own package, the
    protocol and wire, and the Django-free helpers both sides share (docs/judge.md, "Layout")."""
    import ast
    from pathlib import Path

    import evaluation.judge

    root = Path(evaluation.judge.__file__).parent
    shared = {
        "evaluation.judge.wire",
        "evaluation.judge.backends",
        "evaluation.judge.compare",
        "evaluation.judge.records",
        "evaluation.judge.inputs",
    }

    def allowed(name: str) -> bool:
        return name in shared or name.startswith(("evaluation.judge.untrusted", "evaluation.judge.protocol"))

    def source_of(name: str) -> Path | None:
        if not name.startswith("evaluation.judge."):
            return None
        relative = Path(*name.split(".")[2:])
        for path in (root / relative.with_suffix(".py"), root / relative / "__init__.py"):
            if path.is_file():
                return path
        return None

    def judge_imports(path: Path) -> set[str]:
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found |= {
                    f"{node.module}.{alias.name}" for alias in node.names if source_of(f"{node.module}.{alias.name}")
                }
        return {name for name in found if name.startswith("evaluation.judge.")}

    todo = [f"evaluation.judge.untrusted.{path.stem}" for path in (root / "untrusted").glob("*.py")]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        assert allowed(name), f"the sandbox's side imports {name}"
        path = source_of(name)
        if path is not None:
            todo.extend(judge_imports(path))
    assert "evaluation.judge.protocol" in seen and "evaluation.judge.protocol.replies" in seen


def test_zygote_messages_survive_their_datagrams_and_refuse_malformed_ones():
    from evaluation.judge.protocol import zygote

    fork = zygote.ForkSandbox(
        workdir=None,
        env={"HOME": "/tmp/home"},
        view={"read_only": ["/usr"]},
        limits=zygote.ForkLimits(nofile=256, fsize=1 << 30, nproc=64, address_space=0),
    )
    for message, decode in (
        (fork, zygote.decode_zygote_request),
        (zygote.StatusQuery(pid=7), zygote.decode_zygote_request),
        (zygote.ZygoteReady(pid=7, cuda_initialized=False), zygote.ZygoteReady.decode),
        (zygote.ZygoteReply(pid=7, returncode=-9), zygote.ZygoteReply.decode),
    ):
        assert decode(zygote.from_datagram(zygote.to_datagram(message))) == message
    header = fork.to_header()
    for broken, problem in (
        (dict(header, env={"HOME": 1}), "field 'env' is not an object of strings"),
        (dict(header, limits={"nofile": 1}), "fork limits: field 'fsize' is missing"),
        (dict(header, view="/"), "field 'view' is not an object"),
        ({"op": "spawn"}, "unknown op 'spawn'"),
    ):
        with pytest.raises(wire.WireError) as raised:
            zygote.decode_zygote_request(broken)
        assert problem in str(raised.value)
    with pytest.raises(wire.WireError, match="not JSON"):
        zygote.from_datagram(b"\xff{")


def test_a_malformed_request_to_the_zygote_is_refused_and_it_goes_on_forking(warm_forkserver):
    from evaluation.judge.forkserver import ForkServerError
    from evaluation.judge.sandbox import Sandbox

    with warm_forkserver._lock:
        warm_forkserver._sock.send(b'{"op": "fork", "env": {}}')
        with pytest.raises(ForkServerError, match="zygote refused the request: fork request: field 'view' is missing"):
            warm_forkserver._receive(30.0)
    sandbox = Sandbox("cpu", forkserver=warm_forkserver)
    try:
        assert sandbox.wait_ready(time.monotonic() + 60).pid > 0
    finally:
        sandbox.close()


@pytest.mark.parametrize("operator_id", ["aten::cos", "aten::add_", "aten::embedding", "aten::masked_fill_"])
def test_sets_the_sandbox_draws_are_the_sets_the_trusted_side_would_send(operator_id):
    """untrusted.harness_timing.drawn_sets against inputs.make_call and the wire: the same values, dtypes,
    sizes, strides, offsets and aliasing, for the same seeds (on the CPU here; a GPU draws both the same way)."""
    from evaluation.catalog.registry import get_operator
    from evaluation.judge.compare import flat_tensors
    from evaluation.judge.inputs import make_call
    from evaluation.judge.untrusted.harness_timing import drawn_sets

    spec = get_operator(operator_id)
    cases = spec.cases("smoke")[:6]
    seeds = (3, (1 << 63) - 1)
    request = protocol.LoadTimingSets(
        keys=(),
        candidate_sets=(),
        reference_sets=(),
        operator_id=operator_id,
        draws=tuple(protocol.SetsToDraw(key=case.case_id, case=case.to_json(), seeds=seeds) for case in cases),
    )
    drawn = drawn_sets(protocol.decode_request(request.to_header()), torch.device("cpu"))

    assert list(drawn) == [case.case_id for case in cases]
    for case in cases:
        candidate, reference = drawn[case.case_id]
        assert reference == [] and len(candidate) == len(seeds)
        for seed, got in zip(seeds, candidate, strict=True):
            encoder = wire.Encoder()
            call = make_call(spec, case, seed, torch.device("cpu"))
            tree = encoder.encode({"args": call.args, "kwargs": call.kwargs})
            sent = wire.Decoder(encoder.blobs, "cpu").decode(tree)  # what the sandbox gets when it is sent
            assert got.keys() == sent.keys() and len(got["args"]) == len(sent["args"])
            assert got["kwargs"].keys() == sent["kwargs"].keys()
            mine, theirs = flat_tensors([got["args"], got["kwargs"]]), flat_tensors([sent["args"], sent["kwargs"]])
            assert len(mine) == len(theirs) > 0
            for a, b in zip(mine, theirs, strict=True):
                assert (a.dtype, a.shape, a.stride(), a.storage_offset()) == (
                    b.dtype,
                    b.shape,
                    b.stride(),
                    b.storage_offset(),
                )
                torch.testing.assert_close(a, b, rtol=0, atol=0, equal_nan=True)
            storages = lambda tensors: [t.untyped_storage().data_ptr() for t in tensors]  # noqa: E731
            # Views that share a storage still share one (an in-place kernel's aliasing survives).
            assert [storages(mine).index(p) for p in storages(mine)] == [
                storages(theirs).index(p) for p in storages(theirs)
            ]


def test_how_a_host_waits_is_cudas_choice_and_said_for_the_evidence():
    from evaluation.judge.backends import BACKENDS, HOST_WAITS, cuda_set_host_wait

    assert BACKENDS["cpu"].set_host_wait("block") == "not applicable to cpu"
    with pytest.raises(ValueError, match="unknown host wait 'busy'"):
        BACKENDS["cuda"].set_host_wait("busy")
    said = cuda_set_host_wait(HOST_WAITS["block"], "block")
    # Here (no driver) it says why nothing changed; on a GPU host scripts/gpu/host_wait_check.py shows the
    # mode taking effect (the CPU a 100 ms wait costs) both ways.
    assert said == "block" or said.startswith("unchanged: ")
    reported = next(message for message in MESSAGES if isinstance(message, protocol.Started))
    started = protocol.Started.decode(reported.to_header()).environment()
    assert started["sandbox_host_wait"] == "block"


def test_a_workers_switches_become_the_judges_options_and_anything_else_means_the_default():
    from evaluation.judge.runner import options_from_environment

    default = options_from_environment({})
    assert (default.host_wait, default.stream_hold, default.static_scan, default.protocol_timing) == (
        "auto",
        "spin",
        True,
        None,
    )
    chosen = options_from_environment(
        {"KGB_HOST_WAIT": "block", "KGB_STREAM_HOLD": "Released", "KGB_STATIC_SCAN": "off", "KGB_PROTOCOL_TIMING": "on"}
    )
    assert (chosen.host_wait, chosen.stream_hold, chosen.static_scan) == ("block", "released", False)
    assert chosen.protocol_timing is not None
    assert options_from_environment({"KGB_HOST_WAIT": "Yield"}).host_wait == "yield"
    odd = options_from_environment({"KGB_HOST_WAIT": "sometimes", "KGB_STREAM_HOLD": "tight"})
    assert (odd.host_wait, odd.stream_hold) == ("auto", "spin")


def test_without_a_gpu_the_released_hold_says_why_and_the_loop_spins():
    from evaluation.judge.untrusted.released_hold import build_released_hold

    hold, said = build_released_hold(lambda: None)
    # Pinned host memory needs a CUDA driver: here there is none, so no hold, and the reason for the evidence.
    assert hold is None
    assert said.startswith("spin (no released hold: ")

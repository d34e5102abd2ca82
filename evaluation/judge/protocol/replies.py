"""The replies and events the sandbox sends (untrusted/harness.py, gpu_gate.py, sandbox_main.py), decoded by
the trusted side (sandbox.py, session.py). They come from the kernel's process: every field is checked."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

from evaluation.judge.protocol.fields import LIST_ITEMS, MAX_MS, NAME_CHARS, Fields, header_of
from evaluation.judge.wire import WireError, bounded

# A call's phases as the sandbox measured them (diagnostics for the stage breakdown).
CALL_PHASES = ("decode", "call", "encode", "launchers_lent")
# What a sandbox may report about its use of the GPU before its reply (see sandbox.Sandbox.request).
GPU_EVENTS = ("compiling", "compiled", "want_gpu", "gpu_done")


@dataclass(frozen=True, slots=True)
class Envelope:
    """What every reply carries: the run's token and what the reply is. Never raises: a missing or
    malformed token reads as None (and fails the token check, as a forged frame must)."""

    token: str | None
    event: str | None

    @classmethod
    def decode(cls, header: dict[str, Any]) -> Envelope:
        token, event = header.get("token"), header.get("event")
        return cls(token if isinstance(token, str) else None, event if isinstance(event, str) else None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    EVENT: ClassVar[str] = ""

    def to_header(self) -> dict[str, Any]:
        return header_of(self, ("event", self.EVENT))

    @classmethod
    def fields_of(cls, header: Any) -> Fields:
        read = Fields(header, f"{cls.EVENT!r} reply")
        if read.raw("event", None) != cls.EVENT:
            raise WireError(f"expected a {cls.EVENT!r} reply, got {str(read.raw('event', None))[:40]!r}")
        return read


def _seconds(read: Fields, name: str) -> float | None:
    """A diagnostic figure: kept when it is a number of seconds in range, dropped otherwise."""
    return bounded(read.raw(name, None))


@dataclass(frozen=True, slots=True, kw_only=True)
class Ready(Reply):
    """The sandbox's first message, before any request (no token yet); a spare reports its warm-up."""

    EVENT: ClassVar[str] = "ready"
    pid: int
    uid: int
    prewarm_s: float | None = None
    prewarm_error: str | None = None

    @classmethod
    def decode(cls, header: Any) -> Ready:
        read = cls.fields_of(header)
        return cls(
            pid=read.count("pid"),
            uid=read.count("uid"),
            prewarm_s=_seconds(read, "prewarm_s"),
            prewarm_error=read.text("prewarm_error", None, limit=NAME_CHARS),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Started(Reply):
    """The sandbox's environment, for the evidence (``environment()``)."""

    EVENT: ClassVar[str] = "started"
    python: str
    torch: str
    triton: str
    native_threads_before: int
    device_memory_cap: str
    device_name: str | None = None  # GPUs only
    host_wait: str | None = None  # GPUs only: what backends.Backend.set_host_wait said
    stream_hold: str | None = None  # timing on GPUs only: which hold the timed loops use, and why

    @classmethod
    def decode(cls, header: Any) -> Started:
        read = cls.fields_of(header)
        return cls(
            host_wait=read.text("host_wait", None, limit=NAME_CHARS),
            stream_hold=read.text("stream_hold", None, limit=NAME_CHARS),
            python=read.text("python", limit=NAME_CHARS),
            torch=read.text("torch", limit=NAME_CHARS),
            triton=read.text("triton", limit=NAME_CHARS),
            native_threads_before=read.count("native_threads_before", low=-1),
            device_memory_cap=read.text("device_memory_cap", limit=NAME_CHARS),
            device_name=read.text("device_name", None, limit=NAME_CHARS),
        )

    def environment(self) -> dict[str, Any]:
        found = {
            "python": self.python,
            "torch": self.torch,
            "triton": self.triton,
            "native_threads_before": self.native_threads_before,
        }
        if self.device_name is not None:
            found["device_name"] = self.device_name
        if self.host_wait is not None:
            found["sandbox_host_wait"] = self.host_wait
        if self.stream_hold is not None:
            found["stream_hold"] = self.stream_hold
        found["device_memory_cap"] = self.device_memory_cap
        return found


@dataclass(frozen=True, slots=True, kw_only=True)
class Loaded(Reply):
    """The candidate imported (``ok``) or not (``error``), its missing entry points, integrity findings."""

    EVENT: ClassVar[str] = "loaded"
    ok: bool
    error: str = ""
    missing: tuple[str, ...] = ()
    import_seconds: float | None = None
    integrity: tuple[str, ...] = ()

    @classmethod
    def decode(cls, header: Any) -> Loaded:
        read = cls.fields_of(header)
        return cls(
            ok=read.flag("ok"),
            error=read.text("error", "", tail=True),
            missing=read.texts("missing", ()),
            import_seconds=_seconds(read, "import_seconds"),
            integrity=read.texts("integrity", ()),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CallOutcome:
    """One run of the candidate (the real call, a ghost replay or the repeat). ``value``: the wire tree of
    its returned value and arguments (wire.Decoder checks it); ``phase_s`` and ``compiles``: diagnostics."""

    launches: int
    compute_ops: tuple[str, ...]
    not_plain: tuple[str, ...]
    value: Any
    error: str | None = None
    phase_s: dict[str, float] = field(default_factory=dict)
    compiles: int | None = None

    @classmethod
    def decode(cls, value: Any, what: str) -> CallOutcome:
        read = Fields(value, what)
        phases = read.raw("phase_s", None)
        phases = phases if isinstance(phases, dict) else {}
        compiles = bounded(read.raw("compiles", None), kinds=(int,))
        return cls(
            launches=read.count("launches"),
            compute_ops=read.texts("compute_ops"),
            not_plain=read.texts("not_plain"),
            value=read.raw("value"),
            error=read.text("error", None, tail=True),
            phase_s={name: seconds for name in CALL_PHASES if (seconds := bounded(phases.get(name))) is not None},
            compiles=None if compiles is None or isinstance(read.raw("compiles"), bool) else int(compiles),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Called(Reply):
    """A correctness call's outcomes. Blobs: the real call's, then the repeat's from ``repeat_blob_offset``,
    then each ghost's from its ``ghost_blob_offsets`` entry, then the twin replay's from ``twin_blob_offset``
    (offsets never go down)."""

    EVENT: ClassVar[str] = "called"
    real: CallOutcome
    ghosts: tuple[CallOutcome, ...] = ()
    ghost_blob_offsets: tuple[int, ...] = ()
    repeat: CallOutcome | None = None
    repeat_blob_offset: int | None = None
    twin: CallOutcome | None = None
    twin_blob_offset: int | None = None
    integrity: tuple[str, ...] = ()
    native_threads: int | None = None

    @classmethod
    def decode(cls, header: Any) -> Called:
        read = cls.fields_of(header)
        ghosts = tuple(
            CallOutcome.decode(item, f"ghost replay {index}") for index, item in enumerate(read.items("ghosts", ()))
        )
        offsets = read.items("ghost_blob_offsets", ())
        if any(not isinstance(item, int) or isinstance(item, bool) or item < 0 for item in offsets):
            raise read.fail("ghost_blob_offsets", "holds something other than blob offsets")
        repeat_offset = read.count("repeat_blob_offset", None)
        twin_offset = read.count("twin_blob_offset", None)
        order = ([] if repeat_offset is None else [repeat_offset]) + list(offsets)
        order += [] if twin_offset is None else [twin_offset]
        if len(offsets) != len(ghosts) or order != sorted(order):
            raise read.fail("ghost_blob_offsets", "does not give each ghost replay its blobs in order")
        repeat = read.raw("repeat", None)
        twin = read.raw("twin", None)
        if (twin is None) != (twin_offset is None):
            raise read.fail("twin_blob_offset", "comes without the twin replay, or the replay without it")
        return cls(
            twin=None if twin is None else CallOutcome.decode(twin, "the twin replay"),
            twin_blob_offset=twin_offset,
            real=CallOutcome.decode(read.raw("real"), "the real call"),
            ghosts=ghosts,
            ghost_blob_offsets=offsets,
            repeat=None if repeat is None else CallOutcome.decode(repeat, "the repeated call"),
            repeat_blob_offset=repeat_offset,
            integrity=read.texts("integrity", ()),
            native_threads=read.count("native_threads", None, low=-1),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SetsLoaded(Reply):
    EVENT: ClassVar[str] = "sets_loaded"
    ok: bool
    error: str = ""

    @classmethod
    def decode(cls, header: Any) -> SetsLoaded:
        read = cls.fields_of(header)
        return cls(ok=read.flag("ok"), error=read.text("error", "", tail=True))


@dataclass(frozen=True, slots=True, kw_only=True)
class Timed(Reply):
    """A timed loop's samples and what it saw (untrusted.timing.time_interleaved), or its ``error``.
    Defaults are what a reply without the field means (no samples: a verdict follows). ``finite`` holds
    only when the sandbox says so and every sample is finite."""

    EVENT: ClassVar[str] = "timed"
    ok: bool
    error: str = ""
    candidate_ms: tuple[float, ...] = ()
    reference_ms: tuple[float, ...] = ()
    candidate_tail_ms: tuple[float, ...] = ()
    reference_tail_ms: tuple[float, ...] = ()
    finite: bool = False
    stop_reason: str = ""
    loop_s: float | None = None
    prep_s: float | None = None
    low_launch_calls: int = 0
    foreign_stream_calls: int = 0
    compute_calls: int = 0
    compute_ops: tuple[str, ...] = ()
    reference_kind: str = "reference"
    value_rotation: str = ""
    holds: dict[str, float] | None = None
    integrity: tuple[str, ...] = ()
    # The device-time loop's probe (one more audited call, untimed): the summed device time of its Triton
    # launches alone, without its host time; None where no probe ran or nothing was launched.
    kernel_ms: float | None = None
    # Why the probe's figure is missing or does not count ("spot-checked" when it is sent for its check).
    probe_note: str = ""
    # The protocol stage's do_bench loop: one L2 flush's device time (None elsewhere). The kernel's process
    # measures it, so it only annotates figures (timing_protocol.launch_bound), never decides a verdict.
    flush_ms: float | None = None

    @classmethod
    def decode(cls, header: Any) -> Timed:
        read = cls.fields_of(header)
        samples = {
            name: read.samples(name, ())
            for name in ("candidate_ms", "reference_ms", "candidate_tail_ms", "reference_tail_ms")
        }
        finite = read.flag("finite", False) and all(math.isfinite(value) for side in samples.values() for value in side)
        return cls(
            ok=read.flag("ok"),
            error=read.text("error", "", tail=True),
            **samples,
            finite=finite,
            stop_reason=read.text("stop_reason", "", limit=NAME_CHARS),
            loop_s=_seconds(read, "loop_s"),
            prep_s=_seconds(read, "prep_s"),
            low_launch_calls=read.count("low_launch_calls", 0),
            foreign_stream_calls=read.count("foreign_stream_calls", 0),
            compute_calls=read.count("compute_calls", 0),
            compute_ops=read.texts("compute_ops", ()),
            reference_kind=read.text("reference_kind", "reference", limit=NAME_CHARS),
            value_rotation=read.text("value_rotation", "", limit=80),
            holds=numbers_only(read.raw("holds", None)),
            integrity=read.texts("integrity", ()),
            kernel_ms=read.number("kernel_ms", 0.0, MAX_MS, default=None),
            probe_note=read.text("probe_note", "", limit=80),
            flush_ms=read.number("flush_ms", 0.0, MAX_MS, default=None),
        )


def numbers_only(value: Any) -> dict[str, float] | None:
    """The sandbox's stream-hold summary as evidence: names and finite numbers only (it comes from the
    kernel's process, so nothing else is kept)."""
    if not isinstance(value, dict):
        return None
    return {
        str(key)[:40]: float(item)
        for key, item in list(value.items())[:16]
        if isinstance(item, (int, float)) and not isinstance(item, bool) and math.isfinite(item)
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class SpotEntry:
    """One spot-checked timed call: its wire tree and where its blobs lie in the reply."""

    value: Any
    blob_offset: int
    blob_count: int

    @classmethod
    def decode(cls, value: Any, what: str) -> SpotEntry:
        read = Fields(value, what)
        return cls(value=read.raw("value"), blob_offset=read.count("blob_offset"), blob_count=read.count("blob_count"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Spots(Reply):
    """The spot-checked calls by case key. ``spots`` None: the reply did not key them by case (a verdict
    of its own, timing_spots)."""

    EVENT: ClassVar[str] = "spots"
    ok: bool
    error: str = ""
    spots: dict[str, tuple[SpotEntry, ...]] | None = field(default_factory=dict)
    integrity: tuple[str, ...] = ()

    @classmethod
    def decode(cls, header: Any) -> Spots:
        read = cls.fields_of(header)
        by_key = read.raw("spots", {})
        spots = None
        if isinstance(by_key, dict):
            if len(by_key) > LIST_ITEMS:
                raise read.fail("spots", f"has {len(by_key)} keys, over {LIST_ITEMS}")
            spots = {
                str(key)[:NAME_CHARS]: tuple(
                    SpotEntry.decode(item, f"spot check {index} of {str(key)[:80]!r}")
                    for index, item in enumerate(Fields(by_key, "spots").items(key))
                )
                for key in by_key
            }
        return cls(
            ok=read.flag("ok"),
            error=read.text("error", "", tail=True),
            spots=spots,
            integrity=read.texts("integrity", ()),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuEvent(Reply):
    """The sandbox's account of its GPU use inside a request (one of GPU_EVENTS; gpu_gate.py)."""

    event: str

    def to_header(self) -> dict[str, Any]:
        return {"event": self.event}

    @classmethod
    def decode(cls, header: Any) -> GpuEvent:
        event = Fields(header, "GPU event").text("event", limit=NAME_CHARS)
        if event not in GPU_EVENTS:
            raise WireError(f"unknown GPU event {event!r}")
        return cls(event=event)


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessFailure(Reply):
    """The harness (the judge's code in the sandbox) failed: its traceback, or what was wrong with a request."""

    EVENT: ClassVar[str] = "harness_error"
    error: str

    @classmethod
    def decode(cls, header: Any) -> HarnessFailure:
        return cls(error=cls.fields_of(header).text("error", "", tail=True))


@dataclass(frozen=True, slots=True, kw_only=True)
class Bye(Reply):
    EVENT: ClassVar[str] = "bye"

    @classmethod
    def decode(cls, header: Any) -> Bye:
        cls.fields_of(header)
        return cls()

"""The requests the trusted side sends its sandbox (session.py, correctness.py, timing_*.py), decoded by the
harness (untrusted/harness.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from evaluation.judge.protocol.fields import LIST_ITEMS, MAX_SAMPLES, NAME_CHARS, Fields, OpMessage, decode_op

# ---------------------------------------------------------------- requests (trusted -> sandbox)


@dataclass(frozen=True, slots=True, kw_only=True)
class Request(OpMessage):
    """A request to the sandbox (decode_request reads one)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GatedRequest(Request):
    """A request that may use the GPU outside timing: ``gate_gpu`` asks the sandbox to say ``want_gpu`` /
    ``gpu_done`` around its device work, ``lend_gpu`` to say ``compiling`` / ``compiled`` (session.request).
    ``gate_pause_s``: where its device work comes in pieces (a chunk's timing sets, a batch of spot copies),
    the sandbox gives the GPU back and asks for it again between two pieces once it has held it that long
    (untrusted/gpu_gate.GpuGate.next_piece); 0: never."""

    lend_gpu: bool = False
    gate_gpu: bool = False
    gate_pause_s: float = 0.0

    @staticmethod
    def gating(read: Fields) -> dict[str, Any]:
        """The fields every gated request's decoder reads (off when absent)."""
        return {
            "lend_gpu": read.flag("lend_gpu", False),
            "gate_gpu": read.flag("gate_gpu", False),
            "gate_pause_s": read.number("gate_pause_s", 0.0, 60.0, 0.0),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Start(Request):
    """Set up the device with only the judge's code in the process; the token marks every reply."""

    OP: ClassVar[str] = "start"
    token: str
    device: str
    memory_fraction: float
    keep_alive_bytes: int
    timing: bool
    # How the sandbox's host thread waits for the device outside its timed loops (backends.HOST_WAITS):
    # "block" frees the core while the device works; "yield" spins but offers the core to other runnable
    # processes on each turn; "auto" leaves CUDA's own choice (a spin here). Inside a TimeCase it spins
    # either way.
    host_wait: str = "auto"
    # The timed loop's stream hold (untrusted/clock.StreamHolds): "spin", a device-side spin sized from recent
    # enqueues, or "released", a wait the host ends once the call is enqueued (untrusted/released_hold.py).
    stream_hold: str = "spin"

    HOST_WAITS: ClassVar[tuple[str, ...]] = ("auto", "yield", "block")
    STREAM_HOLDS: ClassVar[tuple[str, ...]] = ("spin", "released")

    @classmethod
    def decode(cls, header: Any) -> Start:
        read = Fields(header, "start request")
        host_wait = read.text("host_wait", "auto", limit=NAME_CHARS)
        if host_wait not in cls.HOST_WAITS:
            raise read.fail("host_wait", f"is not one of {', '.join(cls.HOST_WAITS)}")
        stream_hold = read.text("stream_hold", "spin", limit=NAME_CHARS)
        if stream_hold not in cls.STREAM_HOLDS:
            raise read.fail("stream_hold", f"is not one of {', '.join(cls.STREAM_HOLDS)}")
        return cls(
            token=read.text("token", limit=NAME_CHARS),
            device=read.text("device", limit=NAME_CHARS),
            memory_fraction=read.number("memory_fraction", 0.0, 1.0),
            keep_alive_bytes=read.count("keep_alive_bytes"),
            timing=read.flag("timing"),
            host_wait=host_wait,
            stream_hold=stream_hold,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Load(Request):
    """Import the candidate's source and look for its entry points."""

    OP: ClassVar[str] = "load"
    source: str
    entry_points: tuple[str, ...]

    @classmethod
    def decode(cls, header: Any) -> Load:
        read = Fields(header, "load request")
        return cls(source=read.text("source", limit=1 << 30), entry_points=read.texts("entry_points"))


@dataclass(frozen=True, slots=True, kw_only=True)
class CallCase(GatedRequest):
    """One correctness call (``payload``: a wire tree of ``args`` and ``kwargs``), its ghost replays, a
    random operator's repeat, and its twin replay (``twin_payload``: the same call's tree with other values,
    whose storages twin the call's: guard.Twins; None: none)."""

    OP: ClassVar[str] = "call"
    entry_point: str
    payload: dict[str, Any]
    ghost: bool
    ghost_variants: int
    poison_keys: tuple[int | str, ...]
    ghost_keep: tuple[int | str, ...]
    repeat: bool
    twin_payload: dict[str, Any] | None = None

    @classmethod
    def decode(cls, header: Any) -> CallCase:
        read = Fields(header, "call request")
        payload = read.raw("payload")
        if not isinstance(payload, dict):
            raise read.fail("payload", "is not an object")
        twin_payload = read.raw("twin_payload", None)
        if twin_payload is not None and not isinstance(twin_payload, dict):
            raise read.fail("twin_payload", "is not an object")
        return cls(
            entry_point=read.text("entry_point", limit=NAME_CHARS),
            payload=payload,
            twin_payload=twin_payload,
            ghost=read.flag("ghost"),
            ghost_variants=read.count("ghost_variants", low=1, high=16),
            poison_keys=read.keys("poison_keys"),
            ghost_keep=read.keys("ghost_keep"),
            repeat=read.flag("repeat"),
            **cls.gating(read),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SetsToDraw:
    """A timed case whose input sets the sandbox draws itself, one per seed, from the operator's record
    (``case``: ``Case.to_json()``), instead of receiving them: used only where nothing is checked against
    the sets' values (LoadTimingSets.draws)."""

    key: str
    case: dict[str, Any]
    seeds: tuple[int, ...]

    @classmethod
    def decode(cls, item: Any, read: Fields) -> SetsToDraw:
        if not isinstance(item, dict):
            raise read.fail("draws", "holds an entry that is not an object")
        entry = Fields(item, "time_load request's draw")
        case = entry.raw("case")
        if not isinstance(case, dict):
            raise entry.fail("case", "is not an object")
        seeds = entry.items("seeds", limit=64)
        if not seeds or any(
            isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 63 for seed in seeds
        ):
            raise entry.fail("seeds", "is not a list of seeds (0 <= seed < 2**63)")
        return cls(key=entry.text("key", limit=NAME_CHARS), case=case, seeds=tuple(seeds))


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadTimingSets(GatedRequest):
    """Timed cases' input sets (wire trees), one entry per key, put on the device ahead of the exclusive
    hold: every case of a chunk in one request, so a chunk costs one gated hold, not one per case. No
    reference sets for a key: the reference is timed on the candidate's sets (its outputs never reach them:
    pure outputs are poisoned and in-out arguments refilled before every candidate call). ``draws``: cases
    whose sets the sandbox draws itself from ``operator_id``'s record (SetsToDraw), each under its own key."""

    OP: ClassVar[str] = "time_load"
    keys: tuple[str, ...]
    candidate_sets: tuple[tuple[Any, ...], ...]
    reference_sets: tuple[tuple[Any, ...], ...]
    operator_id: str = ""
    draws: tuple[SetsToDraw, ...] = ()

    @classmethod
    def decode(cls, header: Any) -> LoadTimingSets:
        read = Fields(header, "time_load request")
        keys = read.texts("keys")
        per_key = {}
        for name in ("candidate_sets", "reference_sets"):
            lists = read.items(name)
            if len(lists) != len(keys) or any(not isinstance(sets, (list, tuple)) for sets in lists):
                raise read.fail(name, "is not one list of sets per key")
            if any(len(sets) > LIST_ITEMS for sets in lists):
                raise read.fail(name, f"holds a list of over {LIST_ITEMS} sets")
            per_key[name] = tuple(tuple(sets) for sets in lists)
        draws = tuple(SetsToDraw.decode(item, read) for item in read.items("draws", default=()))
        operator_id = read.text("operator_id", default="", limit=NAME_CHARS)
        if draws and not operator_id:
            raise read.fail("operator_id", "is missing where sets are to be drawn")
        if len({draw.key for draw in draws} | set(keys)) != len(draws) + len(set(keys)):
            raise read.fail("draws", "repeats a key")
        return cls(keys=keys, **per_key, operator_id=operator_id, draws=draws, **cls.gating(read))


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeCase(Request):
    """Time one case's loop on the sets loaded under ``sets_key`` (``case``: ``Case.to_json()``)."""

    OP: ClassVar[str] = "time"
    sets_key: str
    entry_point: str
    operator_id: str
    case: dict[str, Any]
    budget_s: float
    rse_target: float
    min_iterations: int
    max_iterations: int
    spot_checks: int
    spot_seed: int
    poison_keys: tuple[int | str, ...]
    restore_keys: tuple[int | str, ...]
    clock_warmup_s: float | None = None
    # "device": the timed stream held until the call is enqueued, the dispatch audit on (device time alone);
    # "caller": neither (the latency a caller sees, as triton.testing.do_bench measures it); "whole_call":
    # as "caller", but the flush finished before the start event, so all of the call's host path is inside;
    # "do_bench": triton.testing.do_bench's own loop, no wait between calls (untrusted/timing_do_bench.py);
    # "back_to_back": the original cuBLAS tests' loop, calls back to back between two events, no flush
    # (untrusted/timing_back_to_back.py).
    window: str = "device"

    WINDOWS: ClassVar[tuple[str, ...]] = ("device", "caller", "whole_call", "do_bench", "back_to_back")

    @classmethod
    def decode(cls, header: Any) -> TimeCase:
        read = Fields(header, "time request")
        case = read.raw("case")
        if not isinstance(case, dict):
            raise read.fail("case", "is not an object")
        window = read.text("window", "device", limit=NAME_CHARS)
        if window not in cls.WINDOWS:
            raise read.fail("window", f"is not one of {', '.join(cls.WINDOWS)}")
        return cls(
            sets_key=read.text("sets_key", limit=NAME_CHARS),
            entry_point=read.text("entry_point", limit=NAME_CHARS),
            operator_id=read.text("operator_id", limit=NAME_CHARS),
            case=case,
            budget_s=read.number("budget_s", 0.0, 1e6),
            rse_target=read.number("rse_target", 0.0, 1e6),
            min_iterations=read.count("min_iterations", high=MAX_SAMPLES),
            max_iterations=read.count("max_iterations", high=MAX_SAMPLES),
            spot_checks=read.count("spot_checks", high=LIST_ITEMS),
            spot_seed=read.count("spot_seed", high=1 << 64),
            poison_keys=read.keys("poison_keys"),
            restore_keys=read.keys("restore_keys"),
            clock_warmup_s=read.number("clock_warmup_s", 0.0, 1e6, default=None),
            window=window,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchSpots(GatedRequest):
    """The spot-checked timed calls of the cases timed under ``keys``."""

    OP: ClassVar[str] = "time_spots"
    keys: tuple[str, ...]

    @classmethod
    def decode(cls, header: Any) -> FetchSpots:
        read = Fields(header, "time_spots request")
        return cls(keys=read.texts("keys"), **cls.gating(read))


@dataclass(frozen=True, slots=True, kw_only=True)
class Resume(Request):
    """The trusted side holds the GPU again: the sandbox may go on (after ``want_gpu`` or ``compiled``)."""

    OP: ClassVar[str] = "resume"

    @classmethod
    def decode(cls, header: Any) -> Resume:
        Fields(header, "resume request")
        return cls()


@dataclass(frozen=True, slots=True, kw_only=True)
class Exit(Request):
    """End the harness's loop (answered with ``bye``)."""

    OP: ClassVar[str] = "exit"

    @classmethod
    def decode(cls, header: Any) -> Exit:
        Fields(header, "exit request")
        return cls()


REQUESTS: dict[str, Any] = {
    kind.OP: kind for kind in (Start, Load, CallCase, LoadTimingSets, TimeCase, FetchSpots, Resume, Exit)
}


def decode_request(header: Any) -> Request:
    """The request a header holds; WireError (saying what is wrong) when it is none of them or malformed."""
    return decode_op(header, REQUESTS)

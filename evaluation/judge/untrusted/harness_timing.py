"""The harness's timing requests (GPU only): loading a case's rotating input sets, its timed loop, and
shipping the spot-checked calls. A part of untrusted.harness.Harness, kept apart for its size."""

from __future__ import annotations

import math
import random
import traceback
from collections.abc import Callable
from typing import Any

from evaluation.judge import protocol, wire
from evaluation.judge.untrusted import guard
from evaluation.judge.untrusted.timing_sets import host_snapshot


def format_error(limit: int = 6000) -> str:
    return traceback.format_exc()[-limit:]


class TimingRequests:
    """``time_load``, ``time`` and ``time_spots``, on the harness's state (see Harness.__init__)."""

    # The harness's state and replies (Harness.__init__, Harness.reply / answer / _sync).
    device: Any
    module: Any
    integrity: Any
    keep_alive: list[Any]
    flush_buffer: Any
    backend: Any
    host_wait: str
    released_hold: Any
    gate: Any
    timing_sets: dict[str, tuple[list[Any], list[Any]]]
    pending_spots: dict[str, list[Any]]
    reply: Callable[..., None]
    answer: Callable[..., None]
    _sync: Callable[[], None]
    _trim_keep_alive: Callable[[], None]

    def load_timing_sets(self, request: protocol.LoadTimingSets, blobs: list[bytes]) -> None:
        try:
            # Earlier cases' tensors go once they hold too much of the device, as between correctness cases
            # (the sets already loaded stay: timing_sets holds them until their loop).
            self._trim_keep_alive()
            self.gate.open(request.gate_gpu, request.gate_pause_s)
            decoder = wire.Decoder(blobs, self.device)
            loaded = {}
            for key, candidate, reference in zip(
                request.keys, request.candidate_sets, request.reference_sets, strict=True
            ):
                self.gate.next_piece()  # a waiting timer need not wait for the whole chunk
                loaded[key] = (
                    [decoder.decode(item) for item in candidate],
                    [decoder.decode(item) for item in reference],
                )
            if request.draws:
                loaded.update(drawn_sets(request, self.device, before_each=self.gate.next_piece))
            self._sync()
        except BaseException:
            self.answer(protocol.SetsLoaded(ok=False, error=format_error()))
            return
        for key, sets in loaded.items():
            self.timing_sets[key] = sets
            self.keep_alive.extend(sets[0] + sets[1])
        self.answer(protocol.SetsLoaded(ok=True))

    def time_case(self, request: protocol.TimeCase) -> None:
        """Interleaved candidate / reference timing with CUDA events, L2 flush and rotating input sets.

        The host spins through the loop's waits whatever Start.host_wait said: each iteration synchronises,
        and a host that wakes late lengthens the loop, which holds the GPU alone (every other judge waits)."""
        blocking = self.host_wait != "auto" and self.device.type != "cpu"
        try:
            if blocking:
                self.backend.set_host_wait("spin")
            result = self._time_case(request)
        except BaseException:
            self.reply(protocol.Timed(ok=False, error=format_error()))
            return
        finally:
            if blocking:
                self.backend.set_host_wait(self.host_wait)
        self.pending_spots[request.sets_key] = result.pop("_spots")
        self.reply(timed_reply(result, self.integrity.violations()))

    def send_spots(self, request: protocol.FetchSpots) -> None:
        from evaluation.judge.untrusted.timing_sets import encode_spots

        try:
            self.gate.open(request.gate_gpu, request.gate_pause_s)
            # Copied to the host under the GPU hold, turned into bytes after it.
            on_host = {}
            for key in request.keys:
                self.gate.next_piece()
                on_host[key] = [host_snapshot(spot) for spot in self.pending_spots.pop(key, [])]
            self.gate.close()
            by_key, blobs = {}, []
            for key, pending in on_host.items():
                by_key[key], spot_blobs = encode_spots(pending, first_blob=len(blobs))
                blobs += spot_blobs
        except BaseException:
            self.answer(protocol.Spots(ok=False, error=format_error()))
            return
        self.answer(protocol.Spots(ok=True, spots=by_key, integrity=tuple(self.integrity.violations())), blobs)

    def _time_case(self, request: protocol.TimeCase) -> dict[str, Any]:
        from evaluation.judge.untrusted.timing import reference_callable, time_interleaved
        from evaluation.judge.untrusted.timing_back_to_back import time_back_to_back
        from evaluation.judge.untrusted.timing_do_bench import time_like_do_bench

        candidate_sets, reference_sets = self.timing_sets.pop(request.sets_key)  # from time_load
        # No reference sets of its own: the reference is called on the candidate's (LoadTimingSets).
        reference_sets = reference_sets or candidate_sets
        function = getattr(self.module, request.entry_point)
        reference = reference_callable(request)
        # What both loops take alike: the sides, the flush, the round counts, the device family's clock.
        shared = dict(
            candidate=function,
            reference=reference,
            flush_buffer=self.flush_buffer,
            budget_s=request.budget_s,
            min_iterations=request.min_iterations,
            max_iterations=request.max_iterations,
            min_launches=1,
            restore_keys=list(request.restore_keys),
            host_clock=self.device.type == "cpu",
            event_class=self.backend.event_class(),
            synchronize=self.backend.synchronize,
            clock_warmup_s=request.clock_warmup_s,
        )
        # Which calls come back as spots (the trusted side compares them with the reference).
        spotting = dict(
            spot_checks=request.spot_checks, rng=random.Random(request.spot_seed), keep_alive=self.keep_alive
        )
        # The original's loops: the call as a plain process makes it, launches counted by Triton's launcher.
        if request.window == "do_bench":
            with guard.bare_launches():
                return time_like_do_bench(sets=candidate_sets, reference_sets=reference_sets, **spotting, **shared)
        if request.window == "back_to_back":
            with guard.bare_launches():
                return time_back_to_back(sets=candidate_sets, reference_sets=reference_sets, **spotting, **shared)
        return time_interleaved(
            candidate_sets=candidate_sets,
            reference_sets=reference_sets,
            rse_target=request.rse_target,
            math_isfinite=math.isfinite,
            poison_keys=list(request.poison_keys),
            spin=self.backend.stream_spin(),
            stream_of=self.backend.current_stream_reader(),
            window=request.window,
            released_hold=self.released_hold,
            **spotting,
            **shared,
        )


def drawn_sets(
    request: protocol.LoadTimingSets, device: Any, before_each: Callable[[], None] = lambda: None
) -> dict[str, tuple[list[Any], list[Any]]]:
    """The sets ``request.draws`` asks this process to draw, by key: each seed's call from the operator's
    record, on ``device``, as the trusted side would have drawn and sent it (inputs.make_call, to_device),
    with no reference sets of their own. Drawing here saves a set's trip through the trusted process and the
    pipe; the trusted side asks for it only where it never checks the values
    (timed_requests.sets_to_draw_in_sandbox). ``before_each``: called before each case's draws (the
    gate's GpuGate.next_piece)."""
    from evaluation.catalog.spec import Case
    from evaluation.judge.inputs import make_call, to_device
    from evaluation.judge.records import find_operator

    spec = find_operator(request.operator_id)
    # The record's own Case where the grid has it (its params as the builders expect them, tuples and all);
    # else rebuilt from its JSON, as the reference's is (timing.reference_callable).
    grid = {case.case_id: case for tier in ("public", "smoke") for case in spec.cases(tier)}
    drawn: dict[str, tuple[list[Any], list[Any]]] = {}
    for draw in request.draws:
        before_each()
        case = grid.get(str(draw.case.get("case_id"))) or Case(
            **{key: value for key, value in draw.case.items() if key != "case_id"}
        )
        calls = [to_device(make_call(spec, case, seed, device), device) for seed in draw.seeds]
        drawn[draw.key] = ([{"args": list(call.args), "kwargs": dict(call.kwargs)} for call in calls], [])
    return drawn


def timed_reply(result: dict[str, Any], integrity: list[str]) -> protocol.Timed:
    """The reply to ``time``: what the trusted side reads of a timed loop's result (timing.time_interleaved)."""
    return protocol.Timed(
        ok=True,
        integrity=tuple(integrity),
        candidate_ms=tuple(result["candidate_ms"]),
        reference_ms=tuple(result["reference_ms"]),
        candidate_tail_ms=tuple(result["candidate_tail_ms"]),
        reference_tail_ms=tuple(result["reference_tail_ms"]),
        compute_ops=tuple(result["compute_ops"]),
        finite=result["finite"],
        stop_reason=result["stop_reason"],
        loop_s=result["loop_s"],
        prep_s=result["prep_s"],
        low_launch_calls=result["low_launch_calls"],
        foreign_stream_calls=result["foreign_stream_calls"],
        compute_calls=result["compute_calls"],
        reference_kind=result["reference_kind"],
        value_rotation=result["value_rotation"],
        holds=result["holds"],
        kernel_ms=result.get("kernel_ms"),
        probe_note=result.get("probe_note", ""),
        flush_ms=result.get("flush_ms"),
    )

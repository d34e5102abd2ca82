"""The messages between the trusted judge and its sandbox: one frozen dataclass per request and reply.

Both sides import this module (the untrusted package imports nothing else of the trusted side but wire, the
byte format underneath). Each message has ``to_header()`` (the JSON header ``wire.send`` frames) and
``decode(header)``, which checks every field once where the message arrives: its type, its range (untrusted
numbers through ``wire.bounded``), lists bounded in length, strings bounded in size. A malformed message
raises ``wire.WireError``; past the decoder, code reads attributes. Values that travel as wire trees
(tensors, a call's arguments) stay JSON here: ``wire.Decoder`` checks those when it rebuilds them.

Replies come from the kernel's process, so they are treated as hostile: the trusted side turns a
WireError into the ``result_channel`` rejection (session.SandboxSession.request; for the wire trees a
reply carries, decoded later, ``decoding_reply``: the same verdict). Requests come from the
judge; one the harness cannot decode is answered with a ``harness_error`` that says what was wrong.
Diagnostic figures the trusted side only shows (a call's phases, timing's loop seconds, stream holds) are
kept lenient as before: a malformed one is dropped, never a reason for a verdict.
"""

from __future__ import annotations

from typing import Any

from evaluation.judge.protocol.replies import (
    CALL_PHASES,
    GPU_EVENTS,
    Bye,
    Called,
    CallOutcome,
    Envelope,
    GpuEvent,
    HarnessFailure,
    Loaded,
    Ready,
    Reply,
    SetsLoaded,
    SpotEntry,
    Spots,
    Started,
    Timed,
    numbers_only,
)
from evaluation.judge.protocol.requests import (
    CallCase,
    Exit,
    FetchSpots,
    GatedRequest,
    Load,
    LoadTimingSets,
    Request,
    Resume,
    SetsToDraw,
    Start,
    TimeCase,
    decode_request,
)

# The reply that answers each request.
REPLIES: dict[type[Request], Any] = {
    Start: Started,
    Load: Loaded,
    CallCase: Called,
    LoadTimingSets: SetsLoaded,
    TimeCase: Timed,
    FetchSpots: Spots,
    Exit: Bye,
}


def decode_reply(request: Request, header: Any) -> Any:
    """The reply to ``request`` that ``header`` holds; WireError when it is another or malformed."""
    return REPLIES[type(request)].decode(header)


__all__ = [
    "CALL_PHASES",
    "GPU_EVENTS",
    "REPLIES",
    "Bye",
    "CallCase",
    "CallOutcome",
    "Called",
    "Envelope",
    "Exit",
    "FetchSpots",
    "GatedRequest",
    "GpuEvent",
    "HarnessFailure",
    "Load",
    "LoadTimingSets",
    "Loaded",
    "Ready",
    "Reply",
    "Request",
    "Resume",
    "SetsLoaded",
    "SetsToDraw",
    "SpotEntry",
    "Spots",
    "Start",
    "Started",
    "TimeCase",
    "Timed",
    "decode_reply",
    "decode_request",
    "numbers_only",
]

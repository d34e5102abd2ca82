"""The messages between the judge's handle on its zygote (forkserver.py) and the zygote
(untrusted/forkserver_main.py): one JSON object per datagram on their unix socket, the fds of a fork beside
it. The zygote never runs a candidate, but it lives on the sandbox's side of the boundary: its replies are
decoded here like any other (a malformed one is a ``ForkServerError`` on the judge's side)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, ClassVar

from evaluation.judge.protocol.fields import NAME_CHARS, Fields, header_of, plain
from evaluation.judge.wire import WireError

DATAGRAM_BYTES = 1 << 16  # what either end reads of one message


def to_datagram(message: Any) -> bytes:
    return json.dumps(message.to_header()).encode()


def from_datagram(data: bytes) -> Any:
    """The JSON object a datagram holds (WireError when it holds none)."""
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise WireError(f"not JSON: {error}") from None


@dataclass(frozen=True, slots=True, kw_only=True)
class ForkLimits:
    """The forked sandbox's rlimits (launch.Limits; ``address_space`` 0: none, as on GPUs)."""

    nofile: int
    fsize: int
    nproc: int
    address_space: int

    @classmethod
    def decode(cls, value: Any) -> ForkLimits:
        read = Fields(value, "fork limits")
        return cls(
            nofile=read.count("nofile"),
            fsize=read.count("fsize"),
            nproc=read.count("nproc"),
            address_space=read.count("address_space"),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ZygoteRequest:
    OP: ClassVar[str] = ""

    def to_header(self) -> dict[str, Any]:
        return header_of(self, ("op", self.OP))


@dataclass(frozen=True, slots=True, kw_only=True)
class ForkSandbox(ZygoteRequest):
    """Fork one sandbox (its four fds travel beside the message): its environment, limits, and either its
    contained view (isolation.ViewPlan.to_json) or, uncontained, its work dir."""

    OP: ClassVar[str] = "fork"
    workdir: str | None
    env: dict[str, str]
    view: dict[str, Any] | None
    limits: ForkLimits

    @classmethod
    def decode(cls, header: Any) -> ForkSandbox:
        read = Fields(header, "fork request")
        env, view = read.raw("env"), read.raw("view")
        if not isinstance(env, dict) or any(not isinstance(item, str) for item in [*env, *env.values()]):
            raise read.fail("env", "is not an object of strings")
        if view is not None and not isinstance(view, dict):
            raise read.fail("view", "is not an object")
        return cls(
            workdir=read.text("workdir", None, limit=4096),
            env=env,
            view=view,
            limits=ForkLimits.decode(read.raw("limits")),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusQuery(ZygoteRequest):
    """How a forked sandbox ended (None while it runs)."""

    OP: ClassVar[str] = "status"
    pid: int

    @classmethod
    def decode(cls, header: Any) -> StatusQuery:
        return cls(pid=Fields(header, "status request").count("pid"))


ZYGOTE_REQUESTS: dict[str, Any] = {kind.OP: kind for kind in (ForkSandbox, StatusQuery)}


def decode_zygote_request(header: Any) -> ZygoteRequest:
    op = header.get("op") if isinstance(header, dict) else None
    kind = ZYGOTE_REQUESTS.get(op) if isinstance(op, str) else None
    if kind is None:
        raise WireError(f"unknown op {op!r}")
    return kind.decode(header)


@dataclass(frozen=True, slots=True, kw_only=True)
class ZygoteReady:
    """The zygote's first message: it imported torch and triton, and whether a device was initialised
    (forking after that breaks the children's CUDA: the judge refuses such a zygote)."""

    pid: int
    cuda_initialized: bool

    def to_header(self) -> dict[str, Any]:
        return header_of(self, ("event", "ready"))

    @classmethod
    def decode(cls, header: Any) -> ZygoteReady:
        read = Fields(header, "zygote ready")
        return cls(pid=read.count("pid"), cuda_initialized=read.flag("cuda_initialized"))


@dataclass(frozen=True, slots=True, kw_only=True)
class ZygoteReply:
    """The answer to a fork (``pid``) or a status query (``pid``, ``returncode``), or what was wrong with
    the request (``error``)."""

    pid: int | None = None
    returncode: int | None = None
    error: str | None = None

    def to_header(self) -> dict[str, Any]:
        return plain(self)

    @classmethod
    def decode(cls, header: Any) -> ZygoteReply:
        read = Fields(header, "zygote reply")
        return cls(
            pid=read.count("pid", None),
            returncode=read.count("returncode", None, low=-(1 << 16), high=1 << 16),
            error=read.text("error", None, limit=NAME_CHARS),
        )

"""The byte format between the trusted judge and the sandbox: framed messages and tensors by storage.

A message is a JSON header plus raw binary blobs, never pickle: the trusted side parses what the untrusted
sandbox sends, and unpickling it would hand the candidate code execution in the judge. Tensors travel as the
bytes of each distinct untyped storage (sent once) plus (dtype, size, stride, storage offset) views, so sizes,
strides, offsets and aliasing between arguments survive the trip and are rebuilt with ``set_`` on the
receiving side's device.
"""

from __future__ import annotations

import json
import math
import os
import select
import struct
import time
from typing import Any

import torch

MAX_HEADER_BYTES = 64 * 1024 * 1024
MAX_BLOB_BYTES = 8 * 1024 * 1024 * 1024

DTYPES: dict[str, torch.dtype] = {
    str(dtype).removeprefix("torch."): dtype
    for dtype in (
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.complex32,
        torch.complex64,
        torch.complex128,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.uint8,
        torch.bool,
        torch.uint16,
        torch.uint32,
        torch.uint64,
    )
}
for _name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
    if hasattr(torch, _name):
        DTYPES[_name] = getattr(torch, _name)


def lazily_read(view: torch.Tensor, negated: bool, conjugated: bool) -> torch.Tensor:
    """``view`` with resolve_neg's and resolve_conj's lazy bits set: its storage holds raw values and the bits
    say how they read (``compare.with_lazy_bits`` keeps them on every copy, the wire carries them)."""
    if negated:
        view = view._neg_view()
    if conjugated:
        view = view.conj()
    return view


class WireError(Exception):
    """A malformed, oversized or forged message: the peer broke the protocol."""


class ChannelTimeout(Exception):
    """The peer did not answer within the deadline."""


class PeerClosed(Exception):
    """The peer closed its end (it exited or crashed)."""


def bounded(value: Any, kinds: tuple[type, ...] = (int, float), limit: float = 1e6) -> float | None:
    """An untrusted number from the sandbox (a phase's seconds, a count) as a float when it is one of
    ``kinds`` in [0, ``limit``); None otherwise, for the caller to ignore. One place for that check."""
    if isinstance(value, kinds) and 0 <= value < limit:
        return float(value)
    return None


# The memory formats a call may carry (clone / empty_like / contiguous take ``memory_format=``), by name.
MEMORY_FORMATS: dict[str, torch.memory_format] = {
    name: getattr(torch, name) for name in ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")
}


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# ---------------------------------------------------------------- values <-> JSON + storages


class Encoder:
    """Turns a tree of Python values and tensors into JSON plus one blob per distinct storage."""

    def __init__(self) -> None:
        self.blobs: list[bytes] = []
        self._storage_index: dict[tuple[str, int], int] = {}
        self._alive: list[torch.UntypedStorage] = []  # an address stays unique while this encoder lives

    def storage_of(self, tensor: torch.Tensor) -> int:
        storage = tensor.untyped_storage()
        key = (str(tensor.device), storage.data_ptr() if storage.nbytes() else -len(self.blobs) - 1)
        if key not in self._storage_index:
            host = storage.cpu() if tensor.device.type != "cpu" else storage
            # A view of the storage's bytes, not a copy (a copy of a large input costs as much as the pipe
            # transfer): the view keeps the storage alive, and the caller sends before it changes the
            # tensors (every caller encodes, then sends; the sandbox encodes its private host copies).
            raw = memoryview(torch.empty(0, dtype=torch.uint8).set_(host).numpy()) if host.nbytes() else b""
            self._storage_index[key] = len(self.blobs)
            self._alive.append(storage)
            self.blobs.append(raw)
        return self._storage_index[key]

    def encode(self, value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            header = {
                "storage": self.storage_of(value),
                "dtype": dtype_name(value.dtype),
                "size": list(value.shape),
                "stride": list(value.stride()),
                "offset": value.storage_offset(),
            }
            # A lazily negated or conjugated view sends its storage's raw values and the bit that says how
            # they read (compare.with_lazy_bits).
            if value.is_neg():
                header["neg"] = True
            if value.is_conj():
                header["conj"] = True
            return {"__tensor__": header}
        if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
            return value
        if isinstance(value, float):
            return value if math.isfinite(value) else {"__float__": repr(value)}
        if isinstance(value, complex):
            return {"__complex__": [self.encode(value.real), self.encode(value.imag)]}
        if isinstance(value, torch.dtype):
            return {"__dtype__": dtype_name(value)}
        if isinstance(value, torch.device):
            return {"__device__": str(value)}
        if isinstance(value, torch.memory_format):
            return {"__memory_format__": str(value).removeprefix("torch.")}
        if isinstance(value, tuple):
            return {"__tuple__": [self.encode(item) for item in value]}
        if isinstance(value, list):
            return [self.encode(item) for item in value]
        if isinstance(value, dict):
            return {"__dict__": [[str(key), self.encode(item)] for key, item in value.items()]}
        return {"__unsupported__": type(value).__name__}


class Decoder:
    """Rebuilds values from JSON plus storage blobs, on ``device``, validating every view's bounds."""

    def __init__(self, blobs: list[bytes], device: str | torch.device = "cpu", private: bool = True) -> None:
        """``private=False``: on the CPU, tensors are built straight on received buffers (``bytearray``) instead
        of copies; only for blobs decoded once and never read again (the trusted side's replies)."""
        self.blobs = blobs
        self.device = torch.device(device)
        self.private = private
        self._storages: dict[int, torch.UntypedStorage] = {}

    def storage(self, index: int) -> torch.UntypedStorage:
        if not isinstance(index, int) or not 0 <= index < len(self.blobs):
            raise WireError(f"bad storage index {index!r}")
        if index not in self._storages:
            raw = self.blobs[index]
            if not raw:
                host = torch.empty(0, dtype=torch.uint8)
            elif not self.private and isinstance(raw, bytearray):
                host = torch.frombuffer(raw, dtype=torch.uint8)  # the received buffer itself (on the CPU)
            elif self.device.type == "cpu" or not isinstance(raw, bytearray):
                # A private copy: the same blobs are decoded again for each ghost replay.
                host = torch.frombuffer(bytearray(raw), dtype=torch.uint8)
            else:
                host = torch.frombuffer(raw, dtype=torch.uint8)  # .to(device) below is the copy
            self._storages[index] = host.to(self.device).untyped_storage()
        return self._storages[index]

    def tensor(self, meta: Any) -> torch.Tensor:
        try:
            dtype = DTYPES[meta["dtype"]]
            size = [int(item) for item in meta["size"]]
            stride = [int(item) for item in meta["stride"]]
            offset = int(meta["offset"])
            index = meta["storage"]
        except (KeyError, TypeError, ValueError, OverflowError) as error:
            raise WireError(f"bad tensor header: {type(error).__name__}: {error}") from None
        if len(size) != len(stride) or any(item < 0 for item in size + stride) or offset < 0:
            raise WireError("bad tensor geometry")
        storage = self.storage(index)
        itemsize = torch.empty(0, dtype=dtype).element_size()
        if any(item == 0 for item in size):
            last = offset
        else:
            last = offset + sum((s - 1) * st for s, st in zip(size, stride, strict=True))
        if (last + 1) * itemsize > storage.nbytes() and not (any(item == 0 for item in size)):
            raise WireError("tensor view runs past its storage")
        try:  # metadata only (nothing is allocated): what torch refuses here is the view's description
            tensor = torch.empty(0, dtype=dtype, device=self.device).set_(storage, offset, size, stride)
            return lazily_read(tensor, negated=meta.get("neg") is True, conjugated=meta.get("conj") is True)
        except (RuntimeError, TypeError, ValueError) as error:
            raise WireError(f"bad tensor geometry: {str(error).splitlines()[0][:200]}") from None

    def decode(self, value: Any) -> Any:
        """The values ``value`` describes. Whatever in it is malformed (a tag's contents of the wrong type, a
        view past its storage, nesting too deep) is a WireError: the one failure a receiver turns into its
        verdict on the sender (the trusted side decodes what the untrusted process sent)."""
        try:
            return self._decode(value)
        except RecursionError:
            raise WireError("value nested too deeply") from None

    def _decode(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self._decode(item) for item in value]
        if not isinstance(value, dict):
            return value
        if "__tensor__" in value:
            return self.tensor(value["__tensor__"])
        if "__float__" in value:
            text = value["__float__"]
            try:
                return float(text if isinstance(text, str) else "")
            except ValueError:
                raise WireError(f"bad float {str(text)[:40]!r}") from None
        if "__complex__" in value:
            parts = value["__complex__"]
            if not isinstance(parts, list) or len(parts) != 2:
                raise WireError("bad complex value")
            real, imag = (self._decode(part) for part in parts)
            if any(not isinstance(part, (int, float)) or isinstance(part, bool) for part in (real, imag)):
                raise WireError("bad complex value")
            return complex(real, imag)
        if "__dtype__" in value:
            name = value["__dtype__"]
            if not isinstance(name, str) or name not in DTYPES:
                raise WireError(f"unknown dtype {str(name)[:40]!r}")
            return DTYPES[name]
        if "__device__" in value:
            # Records build calls on the CPU; a device argument (creation ops' ``device=``) always means the
            # device under test, exactly as tensors are placed there.
            try:
                sent = torch.device(str(value["__device__"]))
            except RuntimeError:
                raise WireError(f"bad device {str(value['__device__'])[:40]!r}") from None
            return self.device if sent.type == "cpu" else sent
        if "__memory_format__" in value:
            name = value["__memory_format__"]
            if not isinstance(name, str) or name not in MEMORY_FORMATS:
                raise WireError(f"unknown memory format {str(name)[:40]!r}")
            return MEMORY_FORMATS[name]
        if "__tuple__" in value:
            items = value["__tuple__"]
            if not isinstance(items, list):
                raise WireError("bad tuple")
            return tuple(self._decode(item) for item in items)
        if "__dict__" in value:
            pairs = value["__dict__"]
            if not isinstance(pairs, list) or any(not isinstance(pair, list) or len(pair) != 2 for pair in pairs):
                raise WireError("bad dict")
            return {str(key): self._decode(item) for key, item in pairs}
        if "__unsupported__" in value:
            return Unsupported(str(value["__unsupported__"]))
        raise WireError("unknown value tag")


class Unsupported:
    """Stands for a value the sender could not encode (its type name is kept for messages)."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<unsupported {self.type_name}>"


# ---------------------------------------------------------------- framing over pipe fds


def _write_all(fd: int, data: bytes, deadline: float | None = None) -> None:
    """Write everything; with a deadline the fd must be non-blocking, and a reader that stops reading (a hung
    or malicious sandbox) ends in ChannelTimeout instead of blocking the judge for ever. A reader that is
    gone ends in PeerClosed."""
    view = memoryview(data)
    while view:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise ChannelTimeout()
            _, ready, _ = select.select([], [fd], [], wait)
            if not ready:
                raise ChannelTimeout()
        try:
            written = os.write(fd, view[: 1 << 24])
        except BlockingIOError:
            continue
        except BrokenPipeError:
            raise PeerClosed() from None
        view = view[written:]


def send(fd: int, header: dict[str, Any], blobs: list[bytes] = (), deadline: float | None = None) -> None:
    """One frame: 8-byte header length, JSON header (with the blob lengths), then the blobs."""
    header = dict(header, blob_sizes=[len(blob) for blob in blobs])
    encoded = json.dumps(header).encode()
    _write_all(fd, struct.pack("<Q", len(encoded)) + encoded, deadline)
    for blob in blobs:
        _write_all(fd, blob, deadline)


def _read_exact(fd: int, count: int, deadline: float | None) -> bytearray:
    """``count`` bytes read straight into one buffer (no list of chunks to join: tensors are large)."""
    buffer = bytearray(count)
    view = memoryview(buffer)
    done = 0
    while done < count:
        if deadline is not None:
            wait = deadline - time.monotonic()
            if wait <= 0:
                raise ChannelTimeout()
            ready, _, _ = select.select([fd], [], [], wait)
            if not ready:
                raise ChannelTimeout()
        got = os.readv(fd, [view[done : done + (1 << 24)]])
        if not got:
            raise PeerClosed()
        done += got
    return buffer


def widen_pipe(fd: int) -> None:
    """Ask for a 1 MiB pipe buffer (Linux; the default 64 KiB costs a wake-up per 64 KiB of tensor data).
    Best effort: the size is capped by /proc/sys/fs/pipe-max-size and unprivileged users' quotas."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except OSError:
        pass


def parse_json(data: bytes, what: str) -> Any:
    """The JSON value in a peer's bytes; WireError when they hold none (nesting too deep included)."""
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise WireError(f"{what} is not JSON: {error}") from None
    except RecursionError:
        raise WireError(f"{what} is nested too deeply") from None
    except ValueError as error:  # an integer past the digit limit, which the peer's own process may lift
        raise WireError(f"{what} is not JSON this side reads: {str(error)[:200]}") from None


def receive(
    fd: int,
    deadline: float | None = None,
    max_blob_bytes: int = MAX_BLOB_BYTES,
) -> tuple[dict[str, Any], list[bytes]]:
    """Read one frame; WireError when it is malformed or larger than the caps."""
    (length,) = struct.unpack("<Q", _read_exact(fd, 8, deadline))
    if length > MAX_HEADER_BYTES:
        raise WireError(f"header of {length} bytes")
    header = parse_json(_read_exact(fd, length, deadline), "header")
    if not isinstance(header, dict):
        raise WireError("header is not an object")
    sizes = header.pop("blob_sizes", [])
    if not isinstance(sizes, list) or any(not isinstance(size, int) or size < 0 for size in sizes):
        raise WireError("bad blob sizes")
    if sum(sizes) > max_blob_bytes:
        raise WireError(f"{sum(sizes)} bytes of tensors exceed the cap of {max_blob_bytes}")
    return header, [_read_exact(fd, size, deadline) for size in sizes]

"""The timed loop's input sets: rotating the candidate's buffers through other sets' values between rounds
(ValueRotation), putting back what a call may change, and copying spot-checked calls for the trusted side."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from evaluation.judge import protocol, wire
from evaluation.judge.compare import flat_tensors, map_tensors, storage_bytes, storage_copier


class ValueRotation:
    """Fresh values for a candidate buffer in every round of the rotating sets (EXPLOITS 7).

    The sets rotate, so no call sees the buffers its predecessor used; but the same buffers come back every
    ``len(sets)`` calls, and a kernel that caches its result by address (``data_ptr``, ``id``) would return
    it, right and nearly free, from the second round on. So the storages behind every input of the
    candidate's sets are kept pristine, and before each call the storages of set ``i`` in round ``r`` are
    filled with those of set ``(i + r) mod k``: a buffer never holds the values it held the round before, and
    a cached answer is the answer to other inputs (the spot checks, taken from round 1 on, see it). Whole
    storages are copied (byte for byte: broadcast views and aliases need no care) and whole sets move
    together, so values that must agree across arguments (indices and the tensor they index) stay
    consistent. Only sets laid out identically are rotated: every argument, the poisoned outputs included
    (an output sized from the seed, such as a gather's destination, must fit the values it is given: on the
    H200 a rotated gather wrote past a smaller destination), every plain argument equal. ``describe`` says
    when a case is not rotated, and why. The copy is untimed device work (two passes over the inputs)."""

    def __init__(self, sets: list[dict[str, Any]], poison_keys: list[int | str]) -> None:
        self.reason = ""
        if len(sets) < 2:
            self.reason = "a single set"
        elif len({_layout(call) for call in sets}) != 1:
            self.reason = "the sets differ in structure"
        self.active = not self.reason
        poisoned = set(poison_keys)
        self.storages = [_input_storages(call, poisoned) for call in sets] if self.active else []
        self.pristine = [[storage.clone() for storage in storages] for storages in self.storages]
        self.fills = 0

    def fill(self, index: int, round_: int) -> None:
        if not self.active or round_ == 0:
            return  # the first round uses each set's own values, already in place
        source = self.pristine[(index + round_) % len(self.storages)]
        for target, values in zip(self.storages[index], source, strict=True):
            target.copy_(values)
        self.fills += 1

    def source(self, index: int, round_: int) -> int:
        """The set whose values set ``index`` holds in round ``round_`` (``fill``): what a spot check names, for
        the trusted side to check its inputs against the set it drew."""
        if not self.active or round_ == 0:
            return index
        return (index + round_) % len(self.storages)

    def describe(self) -> str:
        return f"on: {self.fills} fills" if self.active else f"off: {self.reason}"


def _keys(call: dict[str, Any]) -> list[int | str]:
    return [*range(len(call["args"])), *sorted(call["kwargs"])]


def _layout(call: dict[str, Any]) -> str:
    """What must match for two sets' values to be swapped: every tensor's geometry and its storage (by order
    of first use: the aliasing pattern, and the storage's size), and every other value itself."""
    storages: dict[int, int] = {}

    def one(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            storage = value.untyped_storage()
            index = storages.setdefault(storage.data_ptr(), len(storages)) if storage.nbytes() else -1
            return (
                "tensor",
                tuple(value.shape),
                tuple(value.stride()),
                str(value.dtype),
                value.storage_offset(),
                index,
                storage.nbytes(),
            )
        if isinstance(value, (list, tuple)):
            return (type(value).__name__, tuple(one(item) for item in value))
        if isinstance(value, dict):
            return ("dict", tuple((key, one(item)) for key, item in sorted(value.items())))
        return repr(value)

    return repr([(key, one(get_arg(call, key))) for key in _keys(call)])


def _input_storages(call: dict[str, Any], poisoned: set[Any]) -> list[torch.Tensor]:
    """The distinct storages behind the call's non-poisoned arguments, as byte tensors, in a fixed order."""
    seen: dict[int, torch.Tensor] = {}
    for key in _keys(call):
        if key in poisoned:
            continue
        for tensor in flat_tensors(get_arg(call, key)):
            storage = tensor.untyped_storage()
            if storage.nbytes() and storage.data_ptr() not in seen:
                seen[storage.data_ptr()] = storage_bytes(tensor)
    return list(seen.values())


def device_snapshot(value: Any, device: torch.device | None = None) -> Any:
    """A copy of ``value``'s plain tensors on their device (or on ``device``), one copy per storage, every view
    rebuilt on it (aliases stay aliases, as the wire encoding keeps them). Anything else is kept as it is."""
    copy = storage_copier(device)
    return map_tensors(
        value,
        lambda tensor: (
            copy(tensor.detach()) if type(tensor) is torch.Tensor and tensor.layout == torch.strided else tensor
        ),
    )


def encode_spots(
    spots: list[dict[str, Any]], first_blob: int = 0
) -> tuple[tuple[protocol.SpotEntry, ...], list[bytes]]:
    """The spot snapshots as wire values and blobs, for the trusted side's comparison (``first_blob``: where
    these blobs start in the reply)."""
    blobs: list[bytes] = []
    encoded = []
    for spot in spots:
        # One encoder per snapshot: snapshots share no storage, and offsets stay per spot.
        encoder = wire.Encoder()
        value = encoder.encode(spot)
        encoded.append(
            protocol.SpotEntry(value=value, blob_offset=first_blob + len(blobs), blob_count=len(encoder.blobs))
        )
        blobs.extend(encoder.blobs)
    return tuple(encoded), blobs


def clone_value(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return [clone_value(item) for item in value]
    return None


def restore_value(target: Any, pristine: Any) -> None:
    """Put an in-out argument (a tensor or a list of them) back to its first contents, in place."""
    if isinstance(target, torch.Tensor) and isinstance(pristine, torch.Tensor):
        target.copy_(pristine)
    elif isinstance(target, (list, tuple)) and isinstance(pristine, list):
        for item, value in zip(target, pristine, strict=False):
            restore_value(item, value)


def get_arg(call: dict[str, Any], key: int | str) -> Any:
    return call["args"][key] if isinstance(key, int) else call["kwargs"].get(key)


def restorer(call: dict[str, Any], keys: list[int | str]) -> Callable[[], None] | None:
    """A function that puts ``call``'s in-out arguments ``keys`` back to their present contents (None: none
    of them holds a tensor)."""
    pristine = [(key, clone_value(get_arg(call, key))) for key in keys]
    pristine = [(key, value) for key, value in pristine if value is not None]
    if not pristine:
        return None

    def restore() -> None:
        for key, value in pristine:
            restore_value(get_arg(call, key), value)

    return restore


def host_snapshot(value: Any) -> Any:
    """``value`` with its plain tensors copied to the host (aliases kept: device_snapshot)."""
    return device_snapshot(value, torch.device("cpu"))

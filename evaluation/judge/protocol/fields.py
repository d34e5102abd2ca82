"""Typed reads of a message header's fields (protocol's decoders): types, ranges, sizes, in one place."""

from __future__ import annotations

import math
from dataclasses import fields
from typing import Any

from evaluation.judge.wire import WireError, bounded

TEXT_CHARS = 16000  # tracebacks (the harness keeps 6000 of each, and a call may report two)
NAME_CHARS = 400  # entry points, ops, integrity findings, keys
LIST_ITEMS = 10_000  # names, keys, ghost replays, spot checks
MAX_SAMPLES = 1 << 20  # timing samples per side and list (the iteration cap is far below)
MAX_MS = 1e7  # one timed call's milliseconds (the per-call limit ends any call long before)
MAX_COUNT = 1 << 62

MISSING: Any = object()


class Fields:
    """Typed reads of one header's fields; every failure names the message and the field."""

    def __init__(self, header: Any, what: str) -> None:
        if not isinstance(header, dict):
            raise WireError(f"{what}: not an object")
        self.header, self.what = header, what

    def fail(self, name: str, problem: str) -> WireError:
        return WireError(f"{self.what}: field {name!r} {problem}")

    def raw(self, name: str, default: Any = MISSING) -> Any:
        if name in self.header:
            return self.header[name]
        if default is MISSING:
            raise self.fail(name, "is missing")
        return default

    def flag(self, name: str, default: Any = MISSING) -> bool:
        value = self.raw(name, default)
        if not isinstance(value, bool):
            raise self.fail(name, "is not a boolean")
        return value

    def count(self, name: str, default: Any = MISSING, low: int = 0, high: int = MAX_COUNT) -> int:
        value = self.raw(name, default)
        if value is None and default is None:
            return None  # type: ignore[return-value]
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise self.fail(name, f"is not an integer in [{low}, {high}]")
        return value

    def number(self, name: str, low: float, high: float, default: Any = MISSING) -> float:
        value = self.raw(name, default)
        if value is None and default is None:
            return None  # type: ignore[return-value]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high:
            raise self.fail(name, f"is not a number in [{low:g}, {high:g}]")
        return float(value)

    def text(self, name: str, default: Any = MISSING, limit: int = TEXT_CHARS, tail: bool = False) -> str:
        value = self.raw(name, default)
        if value is None and default is None:
            return None  # type: ignore[return-value]
        if not isinstance(value, str):
            raise self.fail(name, "is not a string")
        return value[-limit:] if tail else value[:limit]

    def texts(self, name: str, default: Any = MISSING, limit: int = NAME_CHARS) -> tuple[str, ...]:
        items = self.items(name, default)
        if any(not isinstance(item, str) for item in items):
            raise self.fail(name, "holds something other than strings")
        return tuple(item[:limit] for item in items)

    def items(self, name: str, default: Any = MISSING, limit: int = LIST_ITEMS) -> tuple[Any, ...]:
        value = self.raw(name, default)
        if not isinstance(value, (list, tuple)):
            raise self.fail(name, "is not a list")
        if len(value) > limit:
            raise self.fail(name, f"has {len(value)} items, over {limit}")
        return tuple(value)

    def keys(self, name: str, default: Any = MISSING) -> tuple[int | str, ...]:
        """Argument keys: positions or keyword names."""
        items = self.items(name, default)
        if any(not isinstance(item, (int, str)) or isinstance(item, bool) for item in items):
            raise self.fail(name, "holds something other than argument positions and names")
        return items

    def samples(self, name: str, default: Any = MISSING) -> tuple[float, ...]:
        """Milliseconds, each in [0, MAX_MS) or not finite (``Timed.finite`` says so; a verdict follows)."""
        items = self.items(name, default, limit=MAX_SAMPLES)
        numbers = []
        for item in items:
            value = bounded(item, limit=MAX_MS)
            if value is None and isinstance(item, float) and not math.isfinite(item):
                value = item
            if value is None or isinstance(item, bool):
                raise self.fail(name, f"holds {str(item)[:40]!r}, not milliseconds")
            numbers.append(value)
        return tuple(numbers)


def plain(value: Any) -> Any:
    """A message as a JSON object. Nested messages (a reply's outcomes, spot entries) become objects; the JSON
    values messages carry (a call's payload, wire trees) are passed as they are, not walked (they are large)."""
    if not hasattr(value, "__dataclass_fields__"):
        return value
    return {item.name: _member(getattr(value, item.name)) for item in fields(value)}


def _member(value: Any) -> Any:
    if isinstance(value, tuple):  # a message's own sequences: their items may be messages
        return [plain(item) for item in value]
    if isinstance(value, dict) and any(isinstance(item, tuple) for item in value.values()):
        return {key: _member(item) for key, item in value.items()}  # messages by key (Spots.spots)
    return plain(value)


def header_of(message: Any, tag: tuple[str, str]) -> dict[str, Any]:
    return {tag[0]: tag[1], **plain(message)}

"""JSON from uploads (progress.json, usage files) read with limits: nesting depth, integer size and finite
numbers. ``json.loads`` alone turns ``1e400`` into infinity, ``NaN`` into a float, a 5,000-digit integer into
a ValueError outside JSONDecodeError and deep nesting into a RecursionError: here each is a ``JSONRejected``
(a ValueError) with a message a person can act on."""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 32  # progress.json is three or four levels deep
MAX_INTEGER = 2**63 - 1  # the database's BIGINT


class JSONRejected(ValueError):
    """The document is not JSON, or is JSON outside the limits; the message says which."""


def loads_bounded(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """Decode ``text`` (bytes as UTF-8); JSONRejected for bad JSON, nesting deeper than ``max_depth``,
    integers beyond 64 bits and numbers that are not finite."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONRejected(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    depth = nesting_depth(text)
    if depth > max_depth:
        raise JSONRejected(f"nested {depth} levels deep; at most {max_depth} are accepted")
    try:
        return json.loads(text, parse_int=_integer, parse_float=_finite, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise JSONRejected(f"not valid JSON ({exc})") from None


def nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects, counted without decoding (strings skipped)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _integer(literal: str) -> int:
    if len(literal.lstrip("-")) > 19 or abs(value := int(literal)) > MAX_INTEGER:
        shown = literal if len(literal) <= 24 else f"{literal[:20]}... ({len(literal)} digits)"
        raise JSONRejected(f"the number {shown} is too large (at most {MAX_INTEGER})")
    return value


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise JSONRejected(f"the number {literal[:40]} is out of range")
    return value


def _no_constant(literal: str) -> float:
    raise JSONRejected(f"{literal} is not a number JSON allows")

"""JSON from outside (a web request, a message on the hall's bus), parsed within bounds.

Python's json parser recurses once per nesting level: a 2-KB body of 1000 brackets raises a
RecursionError that most callers do not expect (it killed the desk's MQTT thread). Here the
size and the nesting depth are checked before anything is parsed, NaN and Infinity are
refused, and every failure is one exception, BadJSON, whose message never echoes the input."""

from __future__ import annotations

import json
import re

MAX_DEPTH = 12  # a status is 4 deep; nothing the box or the desk reads needs more
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


class BadJSON(ValueError):
    """Not JSON, or JSON beyond the bounds (size, depth, NaN); says which, never the input."""


def loads(data: bytes | str, max_bytes: int, max_depth: int = MAX_DEPTH) -> object:
    """The JSON value of `data`, at most `max_bytes` long and `max_depth` deep."""
    if len(data) > max_bytes:
        raise BadJSON(f"{len(data)} bytes (at most {max_bytes})")
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError:
        raise BadJSON("not UTF-8 text") from None
    depth = deepest = 0
    for bracket in _BRACKET.finditer(_STRING.sub("", text)):
        depth += 1 if bracket.group() in "[{" else -1
        deepest = max(deepest, depth)
        if deepest > max_depth:
            raise BadJSON(f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise BadJSON("not JSON" if not isinstance(exc, BadJSON) else str(exc)) from None


def _no_constant(name: str) -> object:
    raise BadJSON(f"{name} is not a number JSON allows")

"""JSON for the hot paths (provider requests and replies, JSON columns): orjson, which
encodes and decodes several times faster than the standard library, with the standard
library as the fallback for what orjson refuses (integers beyond 64 bits)."""

from __future__ import annotations

import json
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS


def dumps_bytes(value: Any) -> bytes:
    try:
        return orjson.dumps(value, option=_OPTIONS)
    except TypeError:
        return json.dumps(value).encode()


def dumps(value: Any) -> str:
    return dumps_bytes(value).decode()


def loads(data: str | bytes) -> Any:
    """Raises ValueError (json.JSONDecodeError's base) on malformed input."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)  # the standard library's message says where it broke

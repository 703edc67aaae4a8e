"""API bodies through orjson (api/json_bodies.py) are the bytes Flask's own encoder wrote
(sorted keys, compact, Flask's forms for dates, decimals and dataclasses; what orjson
refuses falls back whole), but for text beyond ASCII, written as UTF-8 rather than
escaped: the same JSON."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from flask import Flask

from assay.api.json_bodies import FastJSONProvider


@dataclass
class _Point:
    x: int
    at: datetime


def _apps() -> tuple[Flask, Flask]:
    fast, plain = Flask("fast"), Flask("plain")
    fast.json = FastJSONProvider(fast)
    return fast, plain


@pytest.mark.parametrize("value", [
    {"b": 1, "a": {"z": [1, 2.5, None, True], "y": "<script>\n\"quoted\""}},
    [{"when": datetime(2026, 11, 27, 3, 4, 5, tzinfo=UTC), "day": date(2026, 11, 27)}],
    {"price": Decimal("1.10"), "id": uuid.UUID(int=7), "point": _Point(3, datetime(2026, 1, 1))},
    {"huge": 2 ** 70, "small": 1},  # beyond 64 bits: Flask's encoder, whole
    {"items": [], "total": 0, "exact": False, "ratio": 0.1 + 0.2},
])
def test_a_body_is_the_bytes_flask_wrote(value: Any) -> None:
    fast, plain = _apps()
    with fast.app_context():
        got = fast.json.response(value)
    with plain.app_context():
        wanted = plain.json.response(value)
    assert got.get_data() == wanted.get_data()
    assert got.mimetype == wanted.mimetype == "application/json"


@pytest.mark.parametrize("value", [{10: "ten", 9: "nine"}, {"name": "é \u2028 日本"}])
def test_integer_keys_and_text_beyond_ascii_read_the_same(value: Any) -> None:
    fast, plain = _apps()
    with fast.app_context():
        got = json.loads(fast.json.response(value).get_data())
    with plain.app_context():
        assert got == json.loads(plain.json.response(value).get_data())


def test_debug_bodies_stay_indented() -> None:
    fast, _ = _apps()
    fast.debug = True
    with fast.app_context():
        assert fast.json.response({"a": 1}).get_data() == b'{\n  "a": 1\n}\n'


def test_text_beyond_ascii_is_written_as_utf8() -> None:
    fast, _ = _apps()
    with fast.app_context():
        assert fast.json.response({"name": "Café 日本"}).get_data() == (
            '{"name":"Café 日本"}\n'.encode())

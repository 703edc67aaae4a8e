"""The SSE frame generator: a Redis error while tailing costs the client nothing (it keeps
its stream and gets every event after), and a run that is over ends the stream even when
its finished event was lost."""

from __future__ import annotations

import json
from typing import Any

import pytest
import redis

from assay.events import stream
from assay.events.stream import sse


class FlakyStream:
    """XREAD that fails `failures` times, then serves `events` once."""

    def __init__(self, failures: int, events: list[tuple[bytes, dict[bytes, bytes]]]) -> None:
        self.failures, self.events, self.reads = failures, events, 0

    def xread(self, streams: dict[str, str], count: int, block: int) -> Any:
        self.reads += 1
        if self.failures:
            self.failures -= 1
            raise redis.TimeoutError("Timeout reading from socket")
        events, self.events = self.events, []
        return [(b"k", events)] if events else []


def _event(event_id: str, event_type: str) -> tuple[bytes, dict[bytes, bytes]]:
    return event_id.encode(), {b"type": event_type.encode(),
                               b"data": json.dumps({"type": event_type}).encode()}


def test_a_redis_timeout_keeps_the_stream_and_loses_no_event(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "RETRY_S", 0)
    conn = FlakyStream(2, [_event("1-0", "run.progress"), _event("2-0", "run.finished")])
    frames = list(sse(conn, "k", "0-0", 0.01, lambda: None))  # type: ignore[arg-type]
    assert frames[0].startswith("retry:")
    assert frames[1:3] == [": reconnecting\n\n"] * 2
    assert [f.split("\n")[1] for f in frames[3:]] == ["event: run.progress",
                                                      "event: run.finished"]


def test_a_run_over_in_the_database_ends_the_stream_when_its_event_was_lost() -> None:
    conn = FlakyStream(0, [])
    frames = list(sse(conn, "k", "0-0", 0.01,  # type: ignore[arg-type]
                      lambda: {"run_id": 1, "status": "cancelled"}))
    assert frames[-1].startswith("event: run.finished\n")
    assert json.loads(frames[-1].split("data: ")[1])["status"] == "cancelled"

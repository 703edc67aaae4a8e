"""Server-Sent Events for a run: replay after Last-Event-ID, then tail, with heartbeats."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import redis

from assay.events.publish import FINISHED

FINISH_GRACE_MS = 2000
RETRY_S = 0.5  # after a Redis error, before reading again
_STREAM_ID = re.compile(r"^\d{1,20}-\d{1,20}$")


def valid_last_id(value: str | None) -> str:
    """The id to resume after; anything that is not a stream id replays from the start."""
    return value if value and _STREAM_ID.match(value) else "0-0"


def _frame(event_id: str, event_type: str, data: str) -> str:
    return f"id: {event_id}\nevent: {event_type}\ndata: {data}\n\n"


def sse(conn: redis.Redis, key: str, last_id: str, heartbeat_s: float,
        final_snapshot: Callable[[], dict[str, Any] | None],
        finished: str = FINISHED, grace_ms: int = FINISH_GRACE_MS) -> Iterator[str]:
    """Yield SSE frames until the `finished` event (a run's, or a job's) has been sent.

    `final_snapshot` returns the progress when the work is already over, so a stream that
    lost its events (capped, or Redis restarted) still ends with a truthful finish;
    `grace_ms` is how long the finished event may still be on its way then.
    """
    yield "retry: 2000\n\n"
    while True:
        over = final_snapshot()
        block = grace_ms if over is not None else int(heartbeat_s * 1000)
        try:
            reply = conn.xread({key: last_id}, count=500, block=block)
        except (redis.ConnectionError, redis.TimeoutError):
            # Redis restarting or too busy to answer in time: keep the client, try again
            # (the database has the truth; the snapshot ends the stream if the run ends)
            yield ": reconnecting\n\n"
            time.sleep(RETRY_S)
            continue
        if not reply:
            if over is not None:
                # The run is over in the database; its finished event is written just
                # after, so that wait was for it: it is lost, stand in for it.
                yield f"event: {finished}\ndata: {json.dumps({'type': finished, **over})}\n\n"
                return
            yield ": heartbeat\n\n"
            continue
        for raw_id, fields in reply[0][1]:
            last_id = raw_id.decode()
            event_type = fields[b"type"].decode()
            yield _frame(last_id, event_type, fields[b"data"].decode())
            if event_type == finished:
                return

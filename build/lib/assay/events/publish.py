"""Progress events: one capped Redis Stream per run; the stream id is the SSE event id."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from assay.core.base import utcnow

if TYPE_CHECKING:
    import redis

STARTED, PROGRESS, FINISHED = "run.started", "run.progress", "run.finished"
STATUS, BUDGET_ALERT = "run.status", "run.budget_alert"
SCORING_FINISHED = "run.scoring_finished"  # a scoring job ended (jobs/scoring.py)


def stream_key(prefix: str, run_id: int) -> str:
    return f"{prefix}:run:{run_id}:events"


def publish(conn: redis.Redis, key: str, event_type: str, data: dict[str, Any],
            maxlen: int = 10_000) -> str:
    payload = {"type": event_type, **data, "at": utcnow().isoformat()}
    event_id = conn.xadd(key, {"type": event_type, "data": json.dumps(payload)},
                         maxlen=maxlen, approximate=True)
    return event_id.decode() if isinstance(event_id, bytes) else str(event_id)

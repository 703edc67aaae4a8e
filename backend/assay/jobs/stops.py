"""Stop requests: a cancel or a pause reaches the work in flight, which aborts its calls.

The database says whether something is cancelled or paused; a Redis key per subject (a
run, so far) tells the workers to look now.
The key is only a hint: a worker that sees a value it has not seen yet asks its own
source of truth (the run's status...) and aborts only when that says so, so a key left
from before a resume stops nothing. Watchers read it a few times a second at most, never
per call (DESIGN.md section 9: no Redis round trip per call).

Aborting closes the HTTP requests (the asyncio tasks awaiting them are cancelled): the
provider never answers them and bills nothing for them; whatever it did answer is
recorded and billed as usual.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis

    from assay.runtime import Runtime

log = logging.getLogger(__name__)
KEEP_S = 7 * 24 * 3600  # outlives any job; a value already seen costs one check per worker
POLL_S = 0.2  # how often a watcher looks (one GET), whatever the calls in flight

RUN = "run"  # the one kind a stop reaches so far: a run's shards


def key(prefix: str, kind: str, ident: object) -> str:
    return f"{prefix}:stop:{kind}:{ident}"


def request(rt: Runtime, kind: str, ident: object) -> None:
    """Tell the workers of `kind` `ident` to look at its state now (after the commit that
    cancelled or paused it). Best effort: without Redis the calls in flight finish and are
    recorded, as they are billed."""
    try:
        rt.redis.set(key(rt.settings.redis_prefix, kind, ident), uuid.uuid4().hex, ex=KEEP_S)
    except Exception as exc:
        log.warning("%s %s: the stop was not signalled to its workers: %s", kind, ident, exc)


class Signal:
    """One worker's view of a subject's stop key. `check()` (blocking: call it in a thread)
    returns True once the key holds a value not seen before and `confirmed()` (the source
    of truth) says the work must stop."""

    def __init__(self, conn: redis.Redis | None, name: str,
                 confirmed: Callable[[], bool]) -> None:
        self.conn, self.name, self.confirmed = conn, name, confirmed
        self.seen: bytes | None = None

    def check(self) -> bool:
        if self.conn is None:
            return False
        try:
            value = self.conn.get(self.name)
        except Exception:  # Redis away: the work goes on, and is recorded as it lands
            return False
        if value is None or value == self.seen:
            return False
        self.seen = value
        return self.confirmed()

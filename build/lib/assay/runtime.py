"""The process-wide wiring shared by the API and the workers: settings, database, Redis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.db import Database
from assay.events.publish import publish, stream_key
from assay.extensions import db
from assay.redis_conn import connect
from assay.settings import Settings

if TYPE_CHECKING:  # imported with the first connection: `assay eval` runs without one
    import redis


@dataclass
class Runtime:
    settings: Settings
    db: Database
    _redis: redis.Redis | None = None

    @property
    def redis(self) -> redis.Redis:
        """Connected on first use, so commands that need no Redis never start one."""
        if self._redis is None:
            self._redis = connect(self.settings)
        return self._redis

    def events_key(self, run_id: int) -> str:
        return stream_key(self.settings.redis_prefix, run_id)

    def publish(self, run_id: int, event_type: str, data: dict[str, Any]) -> str:
        return publish(self.redis, self.events_key(run_id), event_type, data,
                       self.settings.stream_maxlen)


class SharedIntervals:
    """The reports' intervals kept in Redis for every process (uncertainty.Shared): an
    input always gives the same interval, so an entry never goes stale; the TTL bounds the
    memory."""

    TTL_S = 7 * 86400

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt

    def _key(self, key: bytes) -> str:
        return f"{self.rt.settings.redis_prefix}:interval:{key.hex()}"

    def get(self, key: bytes) -> bytes | None:
        found = self.rt.redis.get(self._key(key))
        return None if found is None else bytes(found)

    def put(self, key: bytes, value: bytes) -> None:
        self.rt.redis.set(self._key(key), value, ex=self.TTL_S)


def share_intervals(rt: Runtime) -> Runtime:
    """Draw each big report interval once for the API and the workers together."""
    from assay.core.reports import uncertainty  # NumPy: only for processes that report

    uncertainty.share(SharedIntervals(rt))
    return rt


_current: Runtime | None = None


def configure(settings: Settings) -> Runtime:
    global _current
    db.configure(settings)
    _current = Runtime(settings=settings, db=db)
    return _current


def current() -> Runtime:
    """The configured runtime, configuring from the environment on first use (workers)."""
    return _current or configure(Settings.from_env())

"""The process-wide wiring shared by the API and the workers: settings, database, Redis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import redis

from assay.db import Database
from assay.events.publish import publish, stream_key
from assay.extensions import db
from assay.redis_conn import connect
from assay.settings import Settings


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


_current: Runtime | None = None


def configure(settings: Settings) -> Runtime:
    global _current
    db.configure(settings)
    _current = Runtime(settings=settings, db=db)
    return _current


def current() -> Runtime:
    """The configured runtime, configuring from the environment on first use (workers)."""
    return _current or configure(Settings.from_env())

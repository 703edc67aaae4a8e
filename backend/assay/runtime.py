"""The process-wide wiring shared by the API and the workers: settings, database, Redis."""

from __future__ import annotations

from dataclasses import dataclass

import redis

from assay.db import Database
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

    @property
    def runs_queue(self) -> str:
        return f"{self.settings.queue_prefix}-runs"


_current: Runtime | None = None


def configure(settings: Settings) -> Runtime:
    global _current
    db.configure(settings)
    _current = Runtime(settings=settings, db=db)
    return _current


def current() -> Runtime:
    """The configured runtime, configuring from the environment on first use (workers)."""
    return _current or configure(Settings.from_env())

"""Fixed-window counters in Redis, shared by every API process."""

from __future__ import annotations

import redis

from assay.core.errors import RateLimited
from assay.runtime import current


class Limiter:
    def __init__(self, conn: redis.Redis, name: str, limit: int, window_s: int, message: str,
                 prefix: str | None = None):
        self.conn, self.name, self.limit, self.window_s = conn, name, limit, window_s
        self.message = message
        self.prefix = prefix or current().settings.redis_prefix

    def _key(self, subject: str) -> str:
        return f"{self.prefix}:limit:{self.name}:{subject}"

    def check(self, subject: str) -> None:
        used = self.conn.get(self._key(subject))
        if used is not None and int(used) >= self.limit:
            raise RateLimited(self.message)

    def hit(self, subject: str) -> None:
        key = self._key(subject)
        with self.conn.pipeline() as pipe:
            # SET NX opens the window: Redis 6 (embedded) has no EXPIRE NX
            pipe.set(key, 0, ex=self.window_s, nx=True)
            pipe.incr(key)
            pipe.execute()

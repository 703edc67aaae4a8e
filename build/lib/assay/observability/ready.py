"""Readiness: can this instance do its work now? The database answers, Redis answers, a
worker has sent a heartbeat recently, and the database schema is at the migrations' head
(an API on a database that `assay db upgrade` has not reached yet must take no traffic).
Liveness is /api/health: it answers whenever the process does."""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

from assay.runtime import Runtime
from assay.settings import REPO_ROOT

HEARTBEAT_SLACK_S = 60  # past a worker's own TTL, which RQ's heartbeats keep renewing


@functools.cache
def migrations_head() -> str | None:
    """The newest revision of the migrations shipped with this code (read once)."""
    from alembic.config import Config
    from alembic.script import ScriptDirectory

    config = Config()
    config.set_main_option("script_location", str(REPO_ROOT / "migrations"))
    return ScriptDirectory.from_config(config).get_current_head()


def _probe(work: Callable[[], Any]) -> dict[str, Any]:
    """ok, and on failure the exception's class only: the probe is public, and a message
    may name hosts or users."""
    try:
        found = work()
    except Exception as exc:
        return {"ok": False, "error": type(exc).__name__}
    return {"ok": True} if found is None or found is True else found


def _database(session: Session) -> dict[str, Any]:
    def work() -> dict[str, Any]:
        current = session.execute(text("SELECT version_num FROM alembic_version")).scalar()
        head = migrations_head()
        at_head = current == head
        return {"ok": True, "migrations": {"ok": at_head, "current": current, "head": head}}
    result = _probe(work)
    if not result["ok"]:
        session.rollback()
        result["migrations"] = {"ok": False, "current": None, "head": migrations_head()}
    return result


def _workers(rt: Runtime) -> dict[str, Any]:
    from rq import Queue, Worker

    queue = Queue(rt.settings.runs_queue, connection=rt.redis)
    now = datetime.now(UTC)
    alive = 0
    for worker in Worker.all(queue=queue):
        beat = worker.last_heartbeat
        if beat is not None and beat.tzinfo is None:
            beat = beat.replace(tzinfo=UTC)
        if beat is not None and now - beat < timedelta(
                seconds=worker.worker_ttl + HEARTBEAT_SLACK_S):
            alive += 1
    return {"ok": alive > 0, "count": alive}


def readiness(rt: Runtime, session: Session) -> dict[str, Any]:
    database = _database(session)
    redis = _probe(lambda: bool(rt.redis.ping()))
    workers: dict[str, Any] = (_probe(lambda: _workers(rt)) if redis["ok"]
                               else {"ok": False, "error": "RedisDown"})
    workers.setdefault("count", 0)
    ready = (database["ok"] and database["migrations"]["ok"] and redis["ok"]
             and workers["ok"])
    return {"ready": ready, "database": database, "redis": redis, "workers": workers}

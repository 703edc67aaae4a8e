"""A request that cannot get a database connection within ASSAY_DB_POOL_TIMEOUT_S gets 503
DATABASE_BUSY with Retry-After (never a 30 s hang and a 500), counted on /metrics; and
/api/health is 503 "down" while the database cannot serve a query, 200 again after."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import create_engine
from sqlalchemy.orm import Session as OrmSession

from assay.api.health import routes as health_routes
from assay.extensions import db
from assay.settings import Settings
from tests.factories import Factory

WAIT_S = 0.3


@pytest.fixture
def one_connection(settings: Settings) -> Iterator[None]:
    """The process's pool made one connection, no overflow, a short wait."""
    with db.put_back():
        db.configure(replace(settings, db_pool_size=1, db_max_overflow=0,
                             db_pool_timeout_s=WAIT_S))
        yield
        db.scoped.remove()


def _gauge(name: str) -> float | None:
    return REGISTRY.get_sample_value(name, {"pool": "main"})


def _timeouts() -> float:
    return REGISTRY.get_sample_value("assay_db_pool_timeouts_total") or 0.0


def test_no_connection_free_is_503_with_retry_after(factory: Factory,
                                                     one_connection: None) -> None:
    owner = factory.user()
    project = factory.project(owner)
    browser = factory.login(owner)
    url = f"/api/projects/{project.id}/datasets"
    assert browser.get(url).status_code == 200
    before = _timeouts()
    with ExitStack() as held:  # someone else holds the only connection (of each engine)
        for engine in {db.engine, db.autocommit_engine}:
            held.enter_context(engine.connect())
        started = time.monotonic()
        busy = browser.get(f"{url}?page_size=5")  # not a list this process kept
        waited = time.monotonic() - started
        health = browser.get("/api/health")
        assert _gauge("assay_db_pool_checked_out") == 1  # the one held, on /metrics
    assert _gauge("assay_db_pool_checked_out") == 0
    assert _gauge("assay_db_pool_size") == 1
    assert busy.status_code == 503, busy.json
    assert busy.headers["Retry-After"] == "1"
    assert busy.json == {"code": "DATABASE_BUSY", "status": 503, "errors": {},
                         "message": "The server is busy: try again in a moment."}
    assert WAIT_S <= waited < 10  # the configured wait, not SQLAlchemy's 30 s
    assert _timeouts() >= before + 1
    assert health.status_code == 503 and health.json["status"] == "down"
    assert health.json["database"]["ok"] is False
    assert "TimeoutError" in health.json["database"]["error"]
    assert browser.get(url).status_code == 200  # the connection back: served again
    assert browser.get("/api/health").json["database"] == {"ok": True}


def test_health_is_503_while_the_database_is_gone(client: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    assert client.get("/api/health").status_code == 200  # no worker: degraded, still 200
    gone = create_engine(f"sqlite:///{tmp_path / 'missing' / 'assay.db'}")
    monkeypatch.setattr(health_routes, "session", lambda: OrmSession(gone))
    down = client.get("/api/health")
    assert down.status_code == 503
    assert down.json["status"] == "down" and down.json["database"]["ok"] is False
    assert down.json["redis"] == {"ok": True}
    monkeypatch.undo()
    assert client.get("/api/health").status_code == 200


def test_pool_sizes_follow_the_settings_on_either_database(settings: Settings) -> None:
    from assay.db import make_engine

    engine = make_engine(replace(settings, db_pool_size=7, db_max_overflow=3,
                                 db_pool_timeout_s=1.5))
    try:
        pool: Any = engine.pool
        assert (pool.size(), pool._max_overflow, pool._timeout) == (7, 3, 1.5)
    finally:
        engine.dispose()


def test_pool_settings_come_from_the_environment(tmp_path: Path) -> None:
    env = {"ASSAY_INSTANCE_PATH": str(tmp_path), "ASSAY_DB_POOL_TIMEOUT_S": "2.5",
           "ASSAY_DB_MAX_OVERFLOW": "4", "ASSAY_DB_POOL_SIZE": "16"}
    found = Settings.from_env(env)
    assert (found.db_pool_size, found.db_max_overflow, found.db_pool_timeout_s) == (16, 4, 2.5)
    default = Settings.from_env({"ASSAY_INSTANCE_PATH": str(tmp_path)})
    assert default.db_pool_timeout_s == 3.0

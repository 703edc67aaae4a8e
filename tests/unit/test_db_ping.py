"""Pooled PostgreSQL connections are pinged only after sitting idle (assay/db.py): a
connection killed while idle is replaced before a request uses it; one used moments ago is
not pinged (a round trip per request under load)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, text

from assay import db
from assay.settings import Settings
from tests.conftest import end_other_connections


@pytest.fixture
def engine(settings: Settings) -> Iterator[Engine]:
    if settings.is_sqlite:
        pytest.skip("the pool pings PostgreSQL connections only")
    made = db.make_engine(settings)
    yield made
    made.dispose()


def _pings(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    pings: list[int] = []
    ping = engine.dialect.do_ping
    monkeypatch.setattr(engine.dialect, "do_ping",
                        lambda dbapi: pings.append(1) or ping(dbapi))
    return pings


def _backend(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())


def test_a_connection_used_moments_ago_is_not_pinged(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    pings = _pings(engine, monkeypatch)
    first = _backend(engine)
    assert [_backend(engine) for _ in range(5)] == [first] * 5
    assert pings == []
    monkeypatch.setattr(db, "PING_AFTER_IDLE_S", 0.0)  # every checkout counts as idle
    assert _backend(engine) == first
    assert pings == [1]


def test_a_connection_killed_while_idle_is_replaced_before_use(
        engine: Engine, test_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    first = _backend(engine)
    ended = end_other_connections(test_env["DATABASE_URL"])  # as a database restart would
    assert first in [row[0] for row in ended]
    monkeypatch.setattr(db, "PING_AFTER_IDLE_S", 0.0)
    assert _backend(engine) != first  # no error reached the caller


def test_without_the_idle_ping_a_killed_connection_fails_its_request(
        engine: Engine, test_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """What the ping is for: within the idle window the dead connection is handed out, its
    statement fails, and the pool replaces it for the next one."""
    first = _backend(engine)
    end_other_connections(test_env["DATABASE_URL"])
    monkeypatch.setattr(db, "PING_AFTER_IDLE_S", 3600.0)
    with pytest.raises(Exception, match="terminat|closed|connection"):
        _backend(engine)
    assert _backend(engine) != first

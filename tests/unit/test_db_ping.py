"""Pooled PostgreSQL connections (assay/db.py): an API process (ASSAY_DB_PING_IDLE_S, set
by `assay serve`) pings one only after it sat idle, so a connection killed while idle is
replaced before a request uses it and one used moments ago costs no round trip; elsewhere
every checkout pings (SQLAlchemy's pre-ping)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

import psycopg
import pytest
from sqlalchemy import Engine, make_url, text
from sqlalchemy.exc import OperationalError

from assay import db
from assay.settings import Settings

Made = Callable[[float | None], Engine]


@pytest.fixture
def engine(settings: Settings) -> Iterator[Made]:
    if settings.is_sqlite:
        pytest.skip("the pool pings PostgreSQL connections only")
    made: list[Engine] = []

    def make(idle_s: float | None) -> Engine:
        made.append(db.make_engine(dataclasses.replace(settings, db_ping_idle_s=idle_s)))
        return made[-1]

    yield make
    for each in made:
        each.dispose()


def _backend(engine: Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _kill(settings: Settings, pid: int) -> None:
    """End one backend, as a restarted database or a proxy's idle timeout would."""
    conninfo = make_url(settings.database_url).set(drivername="postgresql").render_as_string(
        hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))


def _count_pings(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    pings: list[int] = []
    ping = engine.dialect.do_ping
    monkeypatch.setattr(engine.dialect, "do_ping",
                        lambda dbapi: pings.append(1) or ping(dbapi))
    return pings


def test_an_api_process_pings_only_a_connection_that_sat_idle(
        engine: Made, monkeypatch: pytest.MonkeyPatch) -> None:
    busy = engine(3600.0)
    pings = _count_pings(busy, monkeypatch)
    first = _backend(busy)
    assert [_backend(busy) for _ in range(5)] == [first] * 5
    assert pings == []
    idle = engine(0.0)  # every connection has sat idle long enough
    pings = _count_pings(idle, monkeypatch)
    assert _backend(idle) == _backend(idle)
    assert pings == [1]


def test_a_connection_killed_while_idle_is_replaced_before_use(
        engine: Made, settings: Settings) -> None:
    idle = engine(0.0)
    first = _backend(idle)
    _kill(settings, first)
    assert _backend(idle) != first  # no error reached the caller


def test_within_the_idle_window_a_killed_connection_fails_one_request(
        engine: Made, settings: Settings) -> None:
    """The price of skipping the ping, and its bound: the next request gets a fresh one."""
    busy = engine(3600.0)
    first = _backend(busy)
    _kill(settings, first)
    with pytest.raises(OperationalError, match=r"terminat|closed|connection"):
        _backend(busy)
    assert _backend(busy) != first


def test_elsewhere_every_checkout_pings(engine: Made, settings: Settings) -> None:
    always = engine(None)
    first = _backend(always)
    _kill(settings, first)
    assert _backend(always) != first


def test_the_idle_ping_is_read_from_the_environment() -> None:
    assert Settings.from_env({}).db_ping_idle_s is None
    assert Settings.from_env({"ASSAY_DB_PING_IDLE_S": "1"}).db_ping_idle_s == 1.0

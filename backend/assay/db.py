"""Engine and sessions for the API and the workers, built from settings."""

from __future__ import annotations

import time
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import Session, scoped_session, sessionmaker

from assay import jsonio
from assay.settings import Settings


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def make_engine(settings: Settings) -> Engine:
    if settings.is_sqlite:
        engine = create_engine(
            settings.database_url, connect_args={"check_same_thread": False, "timeout": 10},
            json_serializer=jsonio.dumps, json_deserializer=jsonio.loads)
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    engine = create_engine(settings.database_url, pool_size=settings.db_pool_size,
                           max_overflow=20, pool_pre_ping=settings.db_ping_idle_s is None,
                           json_serializer=jsonio.dumps, json_deserializer=jsonio.loads)
    if settings.db_ping_idle_s is not None:
        _ping_when_idle(engine, settings.db_ping_idle_s)
    return engine


def _ping_when_idle(engine: Engine, idle_s: float) -> None:
    """SQLAlchemy's pre-ping, for connections idle over `idle_s` only (API processes). One
    used moments ago was alive then, and pinging it cost every read a round trip (a tenth of
    a kept read under load, measured). One killed while idle (a proxy's timeout, a database
    restarted in a quiet hour) is replaced before use, as with pre-ping. The price: after a
    restart, the first request on a recently used connection fails (and has the pool replace
    every older one, SQLAlchemy's disconnect handling) as the requests in flight do anyway.
    Workers keep pinging before every use: a shard whose write fails stops until the reaper
    hands its cells on."""
    dialect = engine.dialect

    def checkin(_dbapi: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    def checkout(dbapi: Any, record: Any, _proxy: Any) -> None:
        since = record.info.pop("idle_since", None)
        if since is None or time.monotonic() - since <= idle_s:
            return
        try:
            dialect.do_ping(dbapi)
        except dialect.loaded_dbapi.Error as error:  # the pool connects afresh
            raise DisconnectionError(f"the idle connection is gone: {error}") from error

    event.listen(engine, "checkin", checkin)
    event.listen(engine, "checkout", checkout)


class Database:
    """Holds the engine, a session factory, and a thread-scoped session for requests."""

    def __init__(self) -> None:
        self._engine: Engine | None = None
        self._autocommit: tuple[Engine, Engine] | None = None  # (engine, its autocommit view)
        self.factory: sessionmaker[Session] = sessionmaker(expire_on_commit=False)
        self.scoped: scoped_session[Session] = scoped_session(self.factory)

    def configure(self, settings: Settings) -> None:
        if self._engine is not None:
            self._engine.dispose()
        self._engine = make_engine(settings)
        self.factory.configure(bind=self._engine)

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("database not configured")
        return self._engine

    @property
    def autocommit_engine(self) -> Engine:
        """The engine's pool, each statement committed on its own (no BEGIN, no ROLLBACK)."""
        engine = self.engine
        if self._autocommit is None or self._autocommit[0] is not engine:
            self._autocommit = (engine, engine.execution_options(isolation_level="AUTOCOMMIT"))
        return self._autocommit[1]

    @property
    def session(self) -> Session:
        return self.scoped()

    @property
    def metadata(self) -> Any:  # Flask-Migrate reads db.metadata
        from assay.core.models import Base

        return Base.metadata

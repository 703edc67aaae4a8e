"""Engine and sessions for the API and the workers, built from settings."""

from __future__ import annotations

import os
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.orm import Session, scoped_session, sessionmaker
from sqlalchemy.pool import QueuePool

from assay import jsonio
from assay.settings import Settings


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cursor = dbapi_conn.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def pool_shape(settings: Settings) -> dict[str, Any]:
    """The same queue pool on either database (SQLite's default, 5 + 10, was smaller than the
    API's 16 threads); a caller waits `db_pool_timeout_s` at most for a connection, then the
    request gets 503 (api/errors.py) instead of hanging 30 s."""
    return {"pool_size": settings.db_pool_size, "max_overflow": settings.db_max_overflow,
            "pool_timeout": settings.db_pool_timeout_s}


def _in_memory(url: str) -> bool:
    return url in ("sqlite://", "sqlite:///:memory:") or "mode=memory" in url


def make_engine(settings: Settings, autocommit: bool = False) -> Engine:
    """The database's engine; `autocommit` (PostgreSQL): its connections commit each
    statement on their own from the start, so none is switched in and out of that mode,
    or rolled back, as it leaves and rejoins the pool."""
    if settings.is_sqlite:
        engine = create_engine(
            settings.database_url, connect_args={"check_same_thread": False, "timeout": 10},
            json_serializer=jsonio.dumps, json_deserializer=jsonio.loads,
            **({} if _in_memory(settings.database_url) else pool_shape(settings)))
        event.listen(engine, "connect", _sqlite_pragmas)
        _fresh_pool_after_fork(engine)
        _observe(engine, "main")
        return engine
    modes: dict[str, Any] = {"isolation_level": "AUTOCOMMIT",
                             "pool_reset_on_return": None} if autocommit else {}
    engine = create_engine(settings.database_url, pool_pre_ping=settings.db_ping_idle_s is None,
                           json_serializer=jsonio.dumps, json_deserializer=jsonio.loads,
                           **pool_shape(settings), **modes)
    if settings.db_ping_idle_s is not None:
        _ping_when_idle(engine, settings.db_ping_idle_s)
    _fresh_pool_after_fork(engine)
    _observe(engine, "autocommit" if autocommit else "main")
    return engine


def _fresh_pool_after_fork(engine: Engine) -> None:
    """A forked child (an RQ work horse, a gunicorn worker) starts with an empty pool of its
    own. The parent's connections are left open for the parent (`close=False`: closing
    them here would end the parent's sessions on the server), and the child never uses
    them: two processes on one socket mix up their statements. RQ's `assay worker` builds
    the app (and this engine) before it forks a horse per job, so without this every horse
    shared the worker's pool state. SQLAlchemy's "Using Connection Pools with
    Multiprocessing or os.fork()"."""
    ref = weakref.ref(engine)  # the hook outlives engines that tests make and drop

    def in_child() -> None:
        found = ref()
        if found is not None:
            found.dispose(close=False)

    os.register_at_fork(after_in_child=in_child)


def _observe(engine: Engine, name: str) -> None:
    from assay.observability.metrics import observe_pool  # once PROMETHEUS_MULTIPROC_DIR is set

    observe_pool(engine, name)


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
        self._settings: Settings | None = None
        self._autocommit: Engine | None = None
        self.factory: sessionmaker[Session] = sessionmaker(expire_on_commit=False)
        self.scoped: scoped_session[Session] = scoped_session(self.factory)

    def configure(self, settings: Settings) -> None:
        for engine in (self._engine, self._autocommit):
            if engine is not None:
                engine.dispose()
        self._engine, self._autocommit = make_engine(settings), None
        self._settings = settings
        self.factory.configure(bind=self._engine)

    @contextmanager
    def put_back(self) -> Iterator[None]:
        """Whatever is configured inside is disposed of, and what was configured before is
        put back (a local eval run's own database, in a process serving another)."""
        before = (self._engine, self._settings, self._autocommit)
        try:
            yield
        finally:
            for engine in (self._engine, self._autocommit):
                if engine is not None and engine not in before:
                    engine.dispose()
            self._engine, self._settings, self._autocommit = before
            self.factory.configure(bind=self._engine)

    @property
    def engine(self) -> Engine:
        if self._engine is None:
            raise RuntimeError("database not configured")
        return self._engine

    @property
    def autocommit_engine(self) -> Engine:
        """On PostgreSQL, an engine of its own (made on first use) whose statements each
        commit on their own: no BEGIN, no ROLLBACK (measured: its connections, always in
        that mode, cost a kept read's statement 0.22 ms of CPU against 0.26 switched per
        checkout from the engine's pool). On SQLite, the engine."""
        engine = self.engine
        if engine.dialect.name != "postgresql":
            return engine
        if self._autocommit is None:
            assert self._settings is not None  # set with the engine
            self._autocommit = make_engine(self._settings, autocommit=True)
        return self._autocommit

    def checked_out(self) -> int:
        """Connections this process holds checked out of its pools now."""
        return sum(engine.pool.checkedout() for engine in (self._engine, self._autocommit)
                   if engine is not None and isinstance(engine.pool, QueuePool))

    @property
    def session(self) -> Session:
        return self.scoped()

    @property
    def metadata(self) -> Any:  # Flask-Migrate reads db.metadata
        from assay.core.models import Base

        return Base.metadata

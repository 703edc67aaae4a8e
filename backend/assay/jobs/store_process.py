"""A shard's database side in a process of its own.

At 2,000 calls/s the claims and writes cost about as much CPU as the calls themselves; in
the shard's process they would share one core (the GIL) with the event loop. Forked from
the shard, this process runs them on the other core: the shard sends a request down a pipe
and awaits the answer in a thread, so the loop keeps sending calls meanwhile.

Forking is only safe while the process has one thread (a lock another thread holds at the
fork, SQLite's for one, is held for ever in the child): a shard in a worker's work horse
has, one started in a thread (tests run several shards as threads of one process) keeps
its database work in threads of its own process instead (`InProcessStore`).

Requests are served one at a time, in the order sent. If this process dies, the call that
was waiting raises, which stops the shard like a failed write would: its leases expire and
the reaper hands its cells to another shard. If the shard dies, the pipe closes and this
process ends.
"""

from __future__ import annotations

import logging
import multiprocessing
import pickle
import threading
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, Protocol

from assay.db import Database

log = logging.getLogger(__name__)
STOP_WAIT_S = 30.0


class Store(Protocol):
    def call(self, name: str, *args: Any) -> Any: ...

    def close(self) -> None: ...


def open_store(db: Database, handlers: dict[str, Callable[..., Any]]) -> Store:
    """A database process when this process may fork, else the shard's own threads."""
    if threading.active_count() == 1:
        return StoreProcess(db, handlers)
    return InProcessStore(handlers)


class InProcessStore:
    """The handlers run in the calling thread (as before the shard had a process)."""

    def __init__(self, handlers: dict[str, Callable[..., Any]]) -> None:
        self._handlers = handlers

    def call(self, name: str, *args: Any) -> Any:
        return self._handlers[name](*args)

    def close(self) -> None:
        pass


class StoreProcess:
    """Runs `handlers[name](*args)` in a forked process; `call` blocks (use it from a
    thread). Fork it before the shard starts threads or its event loop's connections."""

    def __init__(self, db: Database, handlers: dict[str, Callable[..., Any]]) -> None:
        ours, theirs = multiprocessing.Pipe()
        self._process = multiprocessing.get_context("fork").Process(
            target=_serve, args=(theirs, ours, db, handlers), name="assay-shard-store",
            daemon=True)
        self._process.start()
        theirs.close()
        self._conn = ours
        self._lock = threading.Lock()

    def call(self, name: str, *args: Any) -> Any:
        with self._lock:
            try:
                self._conn.send((name, args))
                ok, value = self._conn.recv()
            except (EOFError, OSError):  # closed, reset or broken: it died
                raise RuntimeError("the shard's database process ended") from None
        if not ok:
            raise value
        return value

    def close(self) -> None:
        """Ends the process once the request in progress (if any) is answered."""
        if self._lock.acquire(timeout=STOP_WAIT_S):
            try:
                self._conn.send(None)
            except (OSError, ValueError):
                pass  # already gone
            finally:
                self._lock.release()
        self._process.join(STOP_WAIT_S)
        if self._process.is_alive():
            self._process.kill()
            self._process.join()
        self._conn.close()


def _serve(conn: Connection, parents: Connection, db: Database,
           handlers: dict[str, Callable[..., Any]]) -> None:
    parents.close()  # so the pipe closes when the shard's process goes
    db.engine.dispose(close=False)  # the shard's connections stay the shard's
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        name, args = request
        try:
            answer: tuple[bool, Any] = (True, handlers[name](*args))
        except Exception as exc:
            log.exception("shard database request %s failed", name)
            answer = (False, _sendable(exc))
        conn.send(answer)


def _sendable(exc: Exception) -> Exception:
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:  # not every driver error survives pickling: keep its words
        return RuntimeError(f"{type(exc).__name__}: {exc}")

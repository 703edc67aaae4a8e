"""Jobs for tests/engine/test_pool_horses.py, run by a real `assay worker`'s work horses."""

from __future__ import annotations

import os
import signal

from sqlalchemy import text

from assay.runtime import current


def die_holding_connections(count: int) -> None:
    """Check out `count` connections, each mid-transaction, and die as a horse killed by a
    stop, a timeout or the kernel does: at once, nothing given back."""
    engine = current().db.engine
    held = [engine.connect() for _ in range(count)]
    for connection in held:
        connection.execute(text("SELECT 1"))
    os.kill(os.getpid(), signal.SIGKILL)


def end_holding_connections(count: int) -> int:
    """Return with `count` connections still checked out (a job that forgot to close)."""
    engine = current().db.engine
    held = [engine.connect() for _ in range(count)]
    for connection in held:
        connection.execute(text("SELECT 1"))
    _KEPT.extend(held)
    return len(held)


_KEPT: list[object] = []

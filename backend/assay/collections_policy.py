"""Garbage collection for shard runs, the fake provider serving them, and API processes.

A shard at 2,000 calls/s allocates millions of short-lived objects; with CPython's
default thresholds the cyclic collector ran about 200 times a second and paused the event
loop for up to 200 ms at a time (a quarter of a run's wall time at concurrency 200).
Almost everything a cell allocates is freed by reference counting, so the shard asks for
far fewer collections, and freezes what was imported before it starts (never garbage) so
the collections that do run skip it. Memory stays flat: `make bench` measures the worker's
RSS through a 100,000-cell run.

The fake provider serving such a run is no different: with the defaults, one full collection
in ten first windows held 200 replies back by 100 to 200 ms."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

SHARD_THRESHOLDS = (20_000, 20, 20)

_lock = threading.Lock()
_active = 0
_before: tuple[int, int, int] = gc.get_threshold()


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Shard thresholds while any shard of this process runs (tests run several shards as
    threads of one process); the previous ones back after the last."""
    global _active, _before
    with _lock:
        if _active == 0:
            _before = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(*SHARD_THRESHOLDS)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                gc.set_threshold(*_before)
                gc.unfreeze()


SERVER_THRESHOLDS = (50_000, 20, 20)


def for_a_server() -> None:
    """For good, in a server process once its app is loaded: what it imported and built
    is frozen, and young objects are collected after 50,000 allocations instead of 700."""
    gc.freeze()
    gc.set_threshold(*SERVER_THRESHOLDS)

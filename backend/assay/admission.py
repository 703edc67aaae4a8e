"""How many requests one API process works on at once.

A gthread worker has a thread per request in flight, and Python runs one of them at a time
(the GIL), switching every few milliseconds: with 25 requests in flight each gets a 25th of
the core, so a read that needs 4 ms of CPU takes 100 ms, and the slowest reads set the
p95. Admitting a few at a time, the others waiting in arrival order, gives every read
about the same wait and its own CPU time on top (measured in `make bench`'s API reads: the
p95 of the mixed load fell from ~110 to ~60 ms at the same throughput).

A progress stream is admitted like any request, and leaves its place as soon as its
headers are out: it then holds its thread (README, Deploying) but not a place. So do
other streamed bodies (exports), which are read outside the place they were made in. The
time a request waited is in its latency metric (ARRIVED)."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

ARRIVED = "assay.arrived"  # environ: time.perf_counter() when the request came to the door
Environ = dict[str, Any]
StartResponse = Callable[..., Any]
WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]


class Places:
    """A semaphore that hands a freed place to the longest waiter (a plain one lets a
    newcomer take it first, so under load some requests wait many turns)."""

    def __init__(self, places: int):
        self._lock = threading.Lock()
        self._free = places
        self._waiting: deque[threading.Lock] = deque()

    def __enter__(self) -> None:
        with self._lock:
            if self._free:
                self._free -= 1
                return
            turn = threading.Lock()
            turn.acquire()
            self._waiting.append(turn)
        turn.acquire()  # until a leaving request hands its place over

    def __exit__(self, *_exc: object) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().release()
            else:
                self._free += 1


class Admission:
    """WSGI middleware: at most `places` requests inside `app` at once."""

    def __init__(self, app: WSGIApp, places: int):
        self.app = app
        self.places = Places(places)

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        environ[ARRIVED] = time.perf_counter()
        with self.places:
            return self.app(environ, start_response)

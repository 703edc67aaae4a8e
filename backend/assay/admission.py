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
time a request waited is in its latency metric (ARRIVED).

Slow work (a model call, a sandbox, a big download: `aside`) never takes one of these
places: it has its own, on threads of its own (api/slow_lane.py), so however much of it is
in flight the reads keep all their places."""

from __future__ import annotations

import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import IO, Any

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
    """WSGI middleware: at most `places` requests inside `app` at once. A request's body
    (up to `max_body` bytes; a bigger one is refused inside without being read) is read
    before it waits, so a slow upload holds a thread but not a place."""

    def __init__(self, app: WSGIApp, places: int, max_body: int | None = None,
                 aside: Callable[[Environ], bool] | None = None):
        self.app = app
        self.places = Places(places)
        self.max_body = max_body
        self.aside = aside  # True: the request is admitted by a lane of its own

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        environ[ARRIVED] = time.perf_counter()
        length = _length(environ)
        if length > 0 and (self.max_body is None or length <= self.max_body):
            environ["wsgi.input"] = _read(environ["wsgi.input"], length)
        if self.aside is not None and self.aside(environ):
            return self.app(environ, start_response)
        with self.places:
            return self.app(environ, start_response)


def _length(environ: Environ) -> int:
    try:
        return int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0  # the app refuses it in its own words


def _read(stream: IO[bytes], length: int) -> IO[bytes]:
    """The body, in memory up to 1 MB and in a temporary file beyond; shorter than said if
    the client went away (the app then answers as for any cut body)."""
    body = tempfile.SpooledTemporaryFile(max_size=1 << 20)  # noqa: SIM115 (the app's wsgi.input)
    while length > 0:
        chunk = stream.read(min(length, 1 << 16))
        if not chunk:
            break
        body.write(chunk)
        length -= len(chunk)
    body.seek(0)
    return body

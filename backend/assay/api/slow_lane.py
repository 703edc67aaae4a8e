"""Slow work has a lane of its own, so that no user's slow work can starve the reads.

Slow work is a request that waits on something slow while it is answered: a model
(scorer trials, AI assist, rubric critiques, the arena's judge), a provider's connection
test or model list, the code sandbox, a big download. Such a request used to hold one of
the API's few admission places for as long (admission.py): four trials of a minute each
took all four, and every other user's reads waited behind them (`/api/auth/me`: 4 ms ->
3.5 s). Its view is marked `@slow_work`; in front of Flask this lane:

- admits it without a read place (Admission's `aside`), on threads added for the lane
  (serve.py: gunicorn's threads are the reads' plus `ASSAY_WEB_SLOW`), so reads keep
  every place and thread they had;
- admits at most ASSAY_WEB_SLOW of them per process at once (8), and of those at most
  ASSAY_WEB_SLOW_PER_USER (4) for one user (signed in in the browser; an API token counts
  as its own requester). Past either it refuses at once
  with 503 SLOW_WORK_BUSY or 429 SLOW_WORK_LIMIT and `Retry-After`: a refused request holds
  no thread waiting, and a user can always read while their trials run;
- holds the place until the body is sent (a download's whole stream);
- the work itself is bounded in time (ASSAY_SLOW_DEADLINE_S, 90 s, under the 120 s nginx
  gives an API answer; each call has its own timeout besides) and holds no database
  connection while it waits on a model (core/scoring/trial.py).

Why not the worker, with 202 and a progress resource: on one box the worker is the runs'
(one process under `assay up`), and RQ runs one job at a time; a shard runner holds it for
its whole run, so a trial queued behind someone's 100,000-cell run would wait minutes for
an answer the editor shows in seconds. A queue and workers of their own would add
processes (a worker is ~100 MB, a fork per job) to keep a person waiting either way. A
thread waiting on a socket or a sandboxed child costs the API no CPU (no GIL held); what it
took from the reads was the shared places, and that the lane fixes. The honest cost: slow
work in flight ends with its API process (a restart answers it with an error; a trial
charges what came back before, nothing is half-written)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from assay.admission import Environ, StartResponse, WSGIApp
from assay.api import security
from assay.core.errors import DomainError, RateLimited
from assay.settings import Settings

SLOW = "_assay_slow_work"  # the view's mark (functools.wraps carries it to the endpoint)
IS_SLOW = "assay.slow"  # environ: this request was classified (True / False)
REFUSED = "assay.slow_refused"  # environ: the error Flask answers with, instead of the view
STREAMED = "assay.slow_streamed"  # environ: Flask's answer is made as it is sent
RETRY_AFTER_S = 5
UNSAFE = frozenset({"POST", "PUT", "PATCH"})
F = TypeVar("F", bound=Callable[..., Any])


DOC = ("Slow work (it waits on a model, a provider or a download): it has places of its "
       "own, and answers 503 SLOW_WORK_BUSY when the server has ASSAY_WEB_SLOW of them in "
       "flight, 429 SLOW_WORK_LIMIT when you have ASSAY_WEB_SLOW_PER_USER, both with "
       "Retry-After.")


def slow_work(view: F) -> F:
    """Mark a view as slow work: it runs in the slow lane (put it right above the `def`,
    under the other decorators, which carry the mark). Its doc names the refusals."""
    setattr(view, SLOW, True)
    view.__doc__ = f"{(view.__doc__ or '').rstrip()}\n\n{DOC}".lstrip()
    return view


class SlowWorkBusy(DomainError):
    status, code = 503, "SLOW_WORK_BUSY"


def _busy(places: int) -> DomainError:
    return SlowWorkBusy(f"The server is working on {places} slow requests (model calls, "
                        "tests, downloads) already; try again in a few seconds",
                        retry_after=RETRY_AFTER_S)


def _yours(share: int) -> DomainError:
    return RateLimited(f"You have {share} slow requests (model calls, tests, downloads) in "
                       "flight already; try again when one has finished",
                       code="SLOW_WORK_LIMIT", retry_after=RETRY_AFTER_S)


class Lane:
    """Counts of the slow requests in flight, in all and per user; never waits."""

    def __init__(self, places: int, per_user: int):
        self.places, self.per_user = places, min(per_user, places)
        self._lock = threading.Lock()
        self.in_flight = 0
        self._held: dict[str, int] = {}

    def take(self, who: str) -> DomainError | None:
        """None when `who` has a place now, else the refusal to answer with."""
        with self._lock:
            if self._held.get(who, 0) >= self.per_user:
                return _yours(self.per_user)
            if self.in_flight >= self.places:
                return _busy(self.places)
            self.in_flight += 1
            self._held[who] = self._held.get(who, 0) + 1
            return None

    def give(self, who: str) -> None:
        with self._lock:
            self.in_flight -= 1
            left = self._held[who] - 1
            if left:
                self._held[who] = left
            else:
                del self._held[who]


class _Held:
    """A streamed body (a download) that gives its lane place back after its last chunk,
    or when the server closes it (the client went away mid-way), whichever comes first."""

    def __init__(self, body: Iterable[bytes], release: Callable[[], None]):
        self.body = body
        self._release: Callable[[], None] | None = release

    def __iter__(self) -> Iterator[bytes]:
        yield from self.body
        self._give()

    def _give(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()

    def close(self) -> None:
        try:
            close = getattr(self.body, "close", None)
            if close is not None:
                close()
        finally:
            self._give()


class SlowLane:
    """WSGI, in front of Flask: a slow request takes a lane place or is refused (Flask
    answers the refusal, so it has the API's error body, headers and metrics)."""

    def __init__(self, app: Flask, wsgi_app: WSGIApp, places: int, per_user: int):
        self.app, self.wsgi_app = app, wsgi_app
        self.lane = Lane(places, per_user)
        self.endpoints = frozenset(endpoint for endpoint, view in app.view_functions.items()
                                   if getattr(view, SLOW, False))

    def is_slow(self, environ: Environ) -> bool:
        found = environ.get(IS_SLOW)
        if found is None:
            found = environ[IS_SLOW] = self._classify(environ)
        return bool(found)

    def _classify(self, environ: Environ) -> bool:
        method = environ.get("REQUEST_METHOD", "")
        if method not in UNSAFE and not (method == "GET" and
                                         environ.get("PATH_INFO", "").endswith("/export")):
            return False  # a read: no routing spent on it here
        try:
            endpoint, _ = self.app.url_map.bind_to_environ(environ).match()
        except HTTPException:
            return False  # Flask says 404 or 405 in its own words
        return endpoint in self.endpoints

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        if not self.is_slow(environ):
            return self.wsgi_app(environ, start_response)
        who = security.requester_key(environ)
        refusal = self.lane.take(who)
        if refusal is not None:
            environ[REFUSED] = refusal
            return self.wsgi_app(environ, start_response)
        try:
            body = self.wsgi_app(environ, start_response)
        except BaseException:
            self.lane.give(who)
            raise
        if not environ.get(STREAMED):
            self.lane.give(who)  # the work is done: the body is in memory
            return body
        return _Held(body, lambda: self.lane.give(who))


def refuse_when_full() -> None:
    """before_request, after authentication (an anonymous caller hears 401 first)."""
    refusal = request.environ.get(REFUSED)
    if refusal is not None:
        raise refusal


def _note_streamed(response: Response) -> Response:
    request.environ[STREAMED] = response.is_streamed
    return response


def init_app(app: Flask, settings: Settings) -> None:
    """After every blueprint is registered: the lane finds the marked views."""
    lane = SlowLane(app, app.wsgi_app, settings.slow_places, settings.slow_per_user)
    app.wsgi_app = lane  # type: ignore[method-assign]
    app.extensions["assay.slow_lane"] = lane
    app.before_request(refuse_when_full)
    app.after_request(_note_streamed)


def of(app: Flask) -> SlowLane:
    lane: SlowLane = app.extensions["assay.slow_lane"]
    return lane

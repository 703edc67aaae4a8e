"""A response body read after its view returned (an export, an event stream).

Flask tears the request down when the view returns, before the server reads the body: the
request's session is closed and taken out of the registry then. A body that goes on
reading through that session object (the export functions are handed it) checks out a
fresh connection that no teardown returns, since the registry no longer knows the session,
and the server's relaxed garbage collection (collections_policy.py) never reclaims the
cycle that holds it: every export leaked a connection, and the sixteenth hung the pool for
good. So the body closes the session itself, however it ends: read to the end, failed, or
closed by the server because the client went away mid-download (gunicorn calls close() on
the body even when it was never read, which a generator's own `finally` would not see)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from flask import stream_with_context

from assay.extensions import db


class ClosingBody:
    """The WSGI body: iterates `body` in the request's contexts, and on close() closes it
    and every session it could have used (the request's, and the thread's registry)."""

    def __init__(self, body: Iterable[Any]):
        self._session = db.scoped()  # the request's: what the view handed the body
        self._body: Iterator[Any] = stream_with_context(iter(body))

    def __iter__(self) -> Iterator[Any]:
        return self._body

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()  # pops the contexts it pushed (their teardown removes the registry's)
        finally:
            self._session.close()
            db.scoped.remove()


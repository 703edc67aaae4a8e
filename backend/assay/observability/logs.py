"""Log records that say whose work they are about: request id, user, project and run.

In a request they come from Flask (`g.request_id`, `g.user`, the URL's `project_id` and
`run_id`); in a job from a context variable the worker sets from the job's meta, which the
enqueueing request filled in (`job_meta`), so one request id follows a request into the
jobs it starts. ASSAY_LOG_FORMAT=json writes one JSON object a line (python-json-logger);
the default stays human-readable. Messages never carry a key or a prompt body: the code
logs ids and error classes; provider payloads are logged only at DEBUG, which an operator
opts into with ASSAY_LOG_LEVEL=DEBUG.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import IO, Any

from sqlalchemy import inspect as sa_inspect

from assay.observability import tracing

FIELDS = ("request_id", "user_id", "project_id", "run_id")
REQUEST_ID_HEADER = "X-Request-ID"
_VALID_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
_job_context: ContextVar[Mapping[str, Any] | None] = ContextVar("assay_log_context",
                                                               default=None)


def request_id_from(header: str | None) -> str:
    """The caller's X-Request-ID when it is a short plain token (a proxy's), else a new one:
    a header is never logged as sent, so it cannot forge log lines."""
    if header and _VALID_ID.fullmatch(header):
        return header
    return os.urandom(16).hex()  # as random as uuid4().hex, without building a UUID


def current() -> dict[str, Any]:
    """The ids of the work this thread is doing (None where unknown)."""
    # no request without Flask imported: processes that never serve (`assay eval`, a
    # worker) do not import it for this
    if "flask" in sys.modules and _in_request():
        from flask import g, request

        args = request.view_args or {}
        return {"request_id": g.get("request_id"), "user_id": _user_id(g.get("user")),
                "project_id": args.get("project_id"), "run_id": args.get("run_id")}
    found = _job_context.get()
    return {name: (found or {}).get(name) for name in FIELDS}


def _in_request() -> bool:
    from flask import has_request_context

    return has_request_context()


def _user_id(user: Any) -> Any:
    """The signed-in user's id from the identity map: reading `user.id` after a commit
    would reload the row (a query per log line), or raise once the session is gone."""
    if user is None:
        return None
    state = sa_inspect(user, raiseerr=False)
    identity = getattr(state, "identity", None)
    return identity[0] if identity else None


def job_meta(run_id: int | None = None, project_id: int | None = None) -> dict[str, Any]:
    """What a job enqueued now carries, so that its log lines name the same request."""
    ids = current()
    if run_id is not None:
        ids["run_id"] = run_id
    if project_id is not None:
        ids["project_id"] = project_id
    meta: dict[str, Any] = {"log": {k: v for k, v in ids.items() if v is not None}}
    carrier = tracing.inject()
    if carrier:
        meta["trace"] = carrier
    return meta


@contextmanager
def job_context(meta: Mapping[str, Any] | None) -> Iterator[None]:
    """Inside: log records carry the ids of the job's meta (`job_meta`)."""
    token = _job_context.set(dict((meta or {}).get("log") or {}))
    try:
        yield
    finally:
        _job_context.reset(token)


class ContextFilter(logging.Filter):
    """Puts the ids on every record (a handler filter: records of every logger pass)."""

    def filter(self, record: logging.LogRecord) -> bool:
        ids = current()
        for name in FIELDS:
            setattr(record, name, ids[name])
        record.context = "".join(f" {k}={v}" for k, v in ids.items() if v is not None)
        return True


HUMAN_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s%(context)s"


def json_formatter() -> logging.Formatter:
    from pythonjsonlogger.core import RESERVED_ATTRS
    from pythonjsonlogger.json import JsonFormatter

    return JsonFormatter(
        "%(asctime)s %(levelname)s %(name)s %(message)s %(process)d "
        + " ".join(f"%({name})s" for name in FIELDS),
        rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
        reserved_attrs=[*RESERVED_ATTRS, "context"])  # `context`: the text format's


def handler(fmt: str | None = None, stream: IO[str] | None = None) -> logging.Handler:
    """A stream handler (stderr) in ASSAY_LOG_FORMAT (`text`, the default, or `json`)."""
    fmt = (fmt or os.environ.get("ASSAY_LOG_FORMAT") or "text").lower()
    found = logging.StreamHandler(stream)
    found.addFilter(ContextFilter())
    found.setFormatter(json_formatter() if fmt == "json" else logging.Formatter(HUMAN_FORMAT))
    return found


def configure(level: str | None = None, fmt: str | None = None) -> None:
    """The root handler: ASSAY_LOG_LEVEL (INFO) and ASSAY_LOG_FORMAT."""
    level = level or os.environ.get("ASSAY_LOG_LEVEL", "INFO")
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler(fmt))
    root.setLevel(level)

"""The wire side of core/row_versions.py, for every editable resource: its version goes out
as the ETag header (and as `row_version` in its body, so lists carry it too); a write sends it
back in If-Match and is refused with 412 STALE_WRITE, the current state in `current`, when
it is not the current version. A write without If-Match is accepted as based on whatever
is stored (API and CLI clients that predate it keep working); the SPA always sends it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flask_smorest
from flask import request

from assay.api.base import session
from assay.core import row_versions
from assay.core.errors import Invalid

IF_MATCH = "If-Match"
_MAX_DIGITS = 18  # a version beyond BIGINT is no version of ours
MAX_LENGTH = 64

DOC_PARAMETER = {
    "in": "header", "name": IF_MATCH, "required": False,
    "schema": {"type": "string", "maxLength": MAX_LENGTH},
    "description": 'The ETag (`"<version>"`) of the resource this write is based on; a stale '
                   "one is refused with 412 STALE_WRITE and the current state. Without it the "
                   'write applies to whatever is stored; `*` says so explicitly.'}
ETAG_HEADER = {"ETag": {"description": "The version of the resource, for If-Match",
                        "schema": {"type": "string"}}}


def _bad(message: str) -> Invalid:
    return Invalid("Invalid input", {"headers": {IF_MATCH: [message]}})


def based_on() -> int | None:
    """The version named by If-Match; None without one (or with `*`). 422 when it is not an
    ETag this server gives out."""
    raw = request.headers.get(IF_MATCH)
    if raw is None or raw.strip() == "*":
        return None
    value = raw.strip()
    if len(value) > MAX_LENGTH:
        raise _bad(f"At most {MAX_LENGTH} characters: an ETag is a number in double quotes.")
    if value.startswith("W/"):
        raise _bad('A weak ETag cannot guard a write: send the ETag as given, e.g. "3".')
    if "," in value:
        raise _bad("Send one ETag: the version this write is based on.")
    if len(value) < 2 or value[0] != '"' or value[-1] != '"':
        raise _bad(f'An ETag is in double quotes: If-Match: "{value.strip(chr(34))}".')
    inner = value[1:-1]
    if not (inner.isascii() and inner.isdigit()) or len(inner) > _MAX_DIGITS:
        raise _bad(f"{value} is not an ETag of this resource: send the ETag header (or the "
                   "`row_version`) of what you read.")
    return int(inner)


def etag(row: Any) -> str:
    return f'"{row_versions.version_of(row)}"'


def guard(row: Any, current: Callable[[], Any]) -> None:
    """Before a write to `row`: takes its next version, or raises 412 with `current()`
    (the resource as a GET shows it) and its ETag."""
    guard_at(row, based_on(), current)


def guard_at(row: Any, version: int | None, current: Callable[[], Any]) -> None:
    """guard() with the version named in the body (a write of several rows at once)."""
    try:
        row_versions.claim(session(), row, version)
    except row_versions.StaleWrite as error:
        raise _refused(error, current) from None


def _refused(error: row_versions.StaleWrite, current: Callable[[], Any]
             ) -> row_versions.StaleWrite:
    error.extra = {"current": current(), "current_version": error.current}
    error.headers = {"ETag": f'"{error.current}"'}
    return error


def refusal(sent: int, version: int, current: Callable[[], Any]) -> row_versions.StaleWrite:
    """The 412 of a write based on `sent` when `version` is stored."""
    return _refused(row_versions.StaleWrite(sent, version), current)


def expect(version: int, current: Callable[[], Any], implied: int | None = None) -> None:
    """For a resource whose rows never change (an edit makes a new one, as a case's does):
    412 unless If-Match, or else `implied` (the version the URL names), is `version`."""
    sent = based_on()
    sent = implied if sent is None else sent
    if sent is not None and sent != version:
        raise refusal(sent, version, current)


def tagged(body: Any, row: Any) -> tuple[Any, dict[str, str]]:
    """A view's return value with the ETag of `row` (after its write), or of a version."""
    return body, {"ETag": f'"{row}"' if isinstance(row, int) else etag(row)}


def read(status: int = 200) -> Callable[[Any], Any]:
    """Documents the ETag of a response."""
    return flask_smorest.Blueprint.doc(responses={status: {"headers": ETAG_HEADER}})


def write(status: int = 200) -> Callable[[Any], Any]:
    """Documents If-Match, the 412 and the ETag of the response of a guarded write."""
    return flask_smorest.Blueprint.doc(
        parameters=[DOC_PARAMETER],
        responses={status: {"headers": ETAG_HEADER}, 412: "STALE_WRITE"})

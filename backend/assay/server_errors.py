"""gunicorn's own refusals (a request line or headers too long, a malformed request line,
an unsupported transfer coding) answered with the API's JSON Error body instead of
gunicorn's HTML page: a client (and the OpenAPI document, which declares 414 on every
operation) sees one error shape whichever layer refused. The app never sees these
requests, so this is the only place that can answer them."""

from __future__ import annotations

import json
import socket

from gunicorn import util

# api/errors.py CODES for the statuses gunicorn answers, and the ones only it does
CODES = {400: "BAD_REQUEST", 403: "FORBIDDEN", 414: "URI_TOO_LONG",
         417: "EXPECTATION_FAILED", 431: "HEADERS_TOO_LARGE",
         500: "INTERNAL_SERVER_ERROR", 501: "NOT_IMPLEMENTED"}


def error_response(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"code": CODES.get(status, "ERROR"), "status": status,
                       "message": f"{reason}: {message}" if message else reason,
                       "errors": {}}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\n"
            f"Content-Type: application/json\r\nX-Content-Type-Options: nosniff\r\n"
            f"Cache-Control: no-store\r\nContent-Length: {len(body)}\r\n\r\n")
    return head.encode("latin-1") + body


def write_json_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    util.write_nonblock(sock, error_response(status_int, reason, mesg))


def install() -> None:
    """Before the arbiter forks: workers/base.py's handle_error calls util.write_error."""
    util.write_error = write_json_error

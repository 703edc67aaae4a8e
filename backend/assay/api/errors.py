"""One error shape for every failure: {code, status, message, errors}."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, NoReturn

from flask import Flask, jsonify
from flask.typing import ResponseReturnValue
from flask_smorest import Api
from marshmallow import Schema, ValidationError, fields
from sqlalchemy.exc import TimeoutError as PoolTimeout
from webargs.flaskparser import FlaskParser
from werkzeug.exceptions import HTTPException, InternalServerError, UnprocessableEntity
from werkzeug.routing import IntegerConverter

from assay.api.fields import MAX_ID
from assay.core.errors import DomainError
from assay.observability.metrics import record_pool_timeout

log = logging.getLogger(__name__)

CODES = {400: "BAD_REQUEST", 401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND",
         405: "METHOD_NOT_ALLOWED", 409: "CONFLICT", 412: "STALE_WRITE",
         413: "PAYLOAD_TOO_LARGE", 415: "UNSUPPORTED_MEDIA_TYPE", 422: "VALIDATION_ERROR",
         423: "ACCOUNT_LOCKED", 429: "RATE_LIMITED", 500: "INTERNAL_SERVER_ERROR",
         503: "UNAVAILABLE"}


POOL_RETRY_AFTER_S = 1  # a connection comes back within a request's time


class ErrorSchema(Schema):
    code = fields.String(required=True)
    status = fields.Integer(required=True)
    message = fields.String(required=True)
    errors = fields.Dict(required=True, metadata={
        "description": "By input location (json, query, path, files) then field, or by field "
                       "for a domain rule; RUN_NOT_READY lists its `reasons`. Empty when the "
                       "message says it all.",
        "additionalProperties": {"$ref": "#/components/schemas/ErrorMessages"}})


def error_body(status: int, message: str, code: str | None = None,
               errors: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"code": code or CODES.get(status, "ERROR"), "status": status, "message": message,
            "errors": errors or {}}


def _unstorable(text: str) -> str | None:
    if "\x00" in text:
        return "Must not contain NUL characters."
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "Must be valid Unicode text."
    return None


def unstorable_text(data: Any) -> dict[str, list[str]]:
    """Field errors for text no database can store (PostgreSQL refuses NUL, UTF-8 has no lone
    surrogates), by top-level field. Iterative: JSON may nest as deep as the decoder allows."""
    if hasattr(data, "lists"):  # query strings and forms: every value of every key
        items = [(key, value) for key, values in data.lists() for value in values]
    elif isinstance(data, Mapping):
        items = list(data.items())
    else:
        items = [("_schema", data)]
    errors: dict[str, list[str]] = {}
    for field, value in items:
        stack: list[Any] = [field, value]
        while stack:
            node = stack.pop()
            if isinstance(node, str):
                problem = _unstorable(node)
                if problem:
                    name = str(field) if _unstorable(str(field)) is None else "_schema"
                    errors[name] = [problem]
                    break
            elif isinstance(node, dict):
                stack.extend(node.keys())
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
    return errors


class Parser(FlaskParser):
    """Malformed JSON, JSON nested too deep to decode, and text no database can store are
    validation failures (422), like every other bad input."""

    def _handle_invalid_json_error(self, error: Exception, req: Any, *args: Any,
                                   **kwargs: Any) -> NoReturn:
        raise UnprocessableEntity() from error  # mapped to the field error below

    def _raw_load_json(self, req: Any) -> Any:
        try:
            return super()._raw_load_json(req)
        except RecursionError as error:
            raise UnprocessableEntity() from error

    def pre_load(self, location_data: Any, *, schema: Schema, req: Any,
                 location: str) -> Any:
        errors = unstorable_text(location_data)
        if errors:
            raise ValidationError(errors)
        return location_data


def _id_parameter(converter: IntegerConverter) -> dict[str, Any]:
    """Every int in a URL is a row id; security.impossible_ids answers 404 outside this."""
    return {"type": "integer", "minimum": 1, "maximum": MAX_ID}


class AssayApi(Api):
    ERROR_SCHEMA = ErrorSchema

    def init_app(self, app: Flask, *args: Any, **kwargs: Any) -> None:
        super().init_app(app, *args, **kwargs)
        self.register_converter(IntegerConverter, _id_parameter)

    def handle_http_exception(self, error: HTTPException) -> ResponseReturnValue:
        status = error.code or 500
        data = getattr(error, "data", {}) or {}
        errors = data.get("messages") or {}
        if status == 422 and not errors:
            errors = {"json": ["Invalid JSON body."]}
        message = "Invalid input" if status == 422 else (
            data.get("message") or error.description or CODES.get(status, "Error"))
        body = error_body(status, str(message), errors=errors)
        response = jsonify(body)
        response.status_code = status
        for name, value in error.get_headers():  # 405's Allow, for one
            if name.lower() != "content-type":
                response.headers[name] = value
        return response


def register_error_handlers(app: Flask) -> None:
    def domain(error: DomainError) -> ResponseReturnValue:
        response = jsonify({**error_body(error.status, error.message, error.code,
                                         error.errors), **error.extra})
        response.status_code = error.status
        response.headers.update(error.headers)
        if error.retry_after is not None:
            response.headers["Retry-After"] = str(max(1, int(error.retry_after)))
        return response

    def unexpected(error: Exception) -> ResponseReturnValue:
        log.exception("unhandled error")
        return jsonify(error_body(500, InternalServerError.description)), 500

    def pool_exhausted(error: PoolTimeout) -> ResponseReturnValue:
        """No database connection came free within ASSAY_DB_POOL_TIMEOUT_S: a busy moment,
        not a fault of the request, so the client is told when to try again."""
        log.warning("no database connection free: %s", error)
        record_pool_timeout()
        response = jsonify(error_body(503, "The server is busy: try again in a moment.",
                                      "DATABASE_BUSY"))
        response.status_code = 503
        response.headers["Retry-After"] = str(POOL_RETRY_AFTER_S)
        return response

    app.register_error_handler(DomainError, domain)
    app.register_error_handler(PoolTimeout, pool_exhausted)
    app.register_error_handler(Exception, unexpected)

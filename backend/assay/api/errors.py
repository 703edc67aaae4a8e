"""One error shape for every failure: {code, status, message, errors}."""

from __future__ import annotations

import logging
from typing import Any, NoReturn

from flask import Flask, jsonify
from flask.typing import ResponseReturnValue
from flask_smorest import Api
from marshmallow import Schema, fields
from webargs.flaskparser import FlaskParser
from werkzeug.exceptions import HTTPException, InternalServerError, UnprocessableEntity

from assay.core.errors import DomainError

log = logging.getLogger(__name__)

CODES = {400: "BAD_REQUEST", 401: "UNAUTHORIZED", 403: "FORBIDDEN", 404: "NOT_FOUND",
         405: "METHOD_NOT_ALLOWED", 409: "CONFLICT", 413: "PAYLOAD_TOO_LARGE",
         415: "UNSUPPORTED_MEDIA_TYPE", 422: "VALIDATION_ERROR", 423: "ACCOUNT_LOCKED",
         429: "RATE_LIMITED", 500: "INTERNAL_SERVER_ERROR", 503: "UNAVAILABLE"}


class ErrorSchema(Schema):
    code = fields.String(required=True)
    status = fields.Integer(required=True)
    message = fields.String(required=True)
    errors = fields.Dict(required=True)


def error_body(status: int, message: str, code: str | None = None,
               errors: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"code": code or CODES.get(status, "ERROR"), "status": status, "message": message,
            "errors": errors or {}}


class Parser(FlaskParser):
    """Malformed JSON is a validation failure (422), like every other bad input."""

    def _handle_invalid_json_error(self, error: Exception, req: Any, *args: Any,
                                   **kwargs: Any) -> NoReturn:
        raise UnprocessableEntity() from error  # mapped to the field error below


class AssayApi(Api):
    ERROR_SCHEMA = ErrorSchema

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
        return response


def register_error_handlers(app: Flask) -> None:
    def domain(error: DomainError) -> ResponseReturnValue:
        return jsonify(error_body(error.status, error.message, error.code, error.errors)), \
            error.status

    def unexpected(error: Exception) -> ResponseReturnValue:
        log.exception("unhandled error")
        return jsonify(error_body(500, InternalServerError.description)), 500

    app.register_error_handler(DomainError, domain)
    app.register_error_handler(Exception, unexpected)

"""Domain errors: each carries the HTTP status and a stable code; one API handler maps them."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    status = 400
    code = "BAD_REQUEST"

    def __init__(self, message: str, errors: dict[str, Any] | None = None,
                 code: str | None = None, retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        self.errors = errors or {}
        if code:
            self.code = code
        self.retry_after = retry_after  # seconds: sent as Retry-After (423, 429)
        self.extra: dict[str, Any] = {}  # more of the body, beside code/status/message/errors
        self.headers: dict[str, str] = {}


class Unauthorized(DomainError):
    status, code = 401, "UNAUTHORIZED"


class Forbidden(DomainError):
    status, code = 403, "FORBIDDEN"


class NotFound(DomainError):
    status, code = 404, "NOT_FOUND"


class Conflict(DomainError):
    status, code = 409, "CONFLICT"


class Invalid(DomainError):
    """A request that passed the schema but breaks a domain rule: 422 with field errors."""

    status, code = 422, "VALIDATION_ERROR"


class Locked(DomainError):
    status, code = 423, "ACCOUNT_LOCKED"


class RateLimited(DomainError):
    status, code = 429, "RATE_LIMITED"



class RunNotReady(DomainError):
    """A run that cannot start: 422 listing every reason (see core/runs/validation.py)."""

    status, code = 422, "RUN_NOT_READY"

    def __init__(self, reasons: list[dict[str, Any]]):
        super().__init__("The run cannot start", {"reasons": reasons})

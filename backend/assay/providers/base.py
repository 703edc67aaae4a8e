"""Provider-neutral request, response and the classified error every adapter raises."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Transient classes are retried by the client; everything else is final.
TRANSIENT = frozenset({"rate_limited", "timeout", "network", "server_error"})


@dataclass(frozen=True)
class ChatRequest:
    model: str
    messages: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ChatResponse:
    text: str
    tokens_in: int | None
    tokens_out: int | None
    raw: dict[str, Any]


class ProviderError(Exception):
    def __init__(self, error_class: str, message: str, retry_after: float | None = None,
                 status: int | None = None):
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.retry_after = retry_after
        self.status = status

    @property
    def transient(self) -> bool:
        return self.error_class in TRANSIENT


def classify_status(status: int, body: str) -> str:
    if status == 429:
        return "rate_limited"
    if status in (401, 403):
        return "auth"
    if status >= 500:
        return "server_error"
    if "context_length" in body or "too long" in body:
        return "context_length"
    if "content_filter" in body or "content_policy" in body:
        return "content_filter"
    return "bad_request"

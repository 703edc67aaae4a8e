"""Provider-neutral request and response, the classified error every adapter raises, and
what adapters share (error classification, SSE decoding, URL joining). Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

ERROR_CLASSES = ("rate_limited", "timeout", "network", "server_error", "auth", "bad_request",
                 "context_length", "content_filter", "malformed_response")
# Not the provider's: a bug in Assay met while making the call (logged with its traceback).
# The cell fails with it instead of taking its whole shard down.
INTERNAL = "internal"
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
    finish_reason: str | None = None
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Endpoint:
    """Where and how to reach a provider: a credential's kind, base URL, extra config
    (Azure's deployment and api_version...) and key. The key never appears in a repr."""

    kind: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)
    config: Mapping[str, Any] = field(default_factory=dict)
    credential_id: int | None = None


@dataclass(frozen=True)
class HttpCall:
    """One HTTP request an adapter built. Only `recorded()` is ever stored: no headers."""

    url: str
    json: dict[str, Any]
    headers: dict[str, str] = field(repr=False, default_factory=dict)
    method: str = "POST"
    # The exact bytes to send, when they were signed (SigV4); else `json` is serialised.
    body: bytes | None = field(default=None, repr=False)

    def recorded(self) -> dict[str, Any]:
        return {"method": self.method, "url": self.url, "json": self.json}


class ProviderError(Exception):
    def __init__(self, error_class: str, message: str, retry_after: float | None = None,
                 status: int | None = None, raw: Any = None):
        super().__init__(message)
        self.error_class = error_class
        self.message = message
        self.retry_after = retry_after
        self.status = status
        self.raw = raw
        self.latency_ms: int | None = None  # of the attempt that failed, set by the client
        # A transport failure or a refused URL in a few plain words ("connection refused",
        # "could not resolve the host name"...), set by the client; None for a reply.
        self.reason: str | None = None

    @property
    def transient(self) -> bool:
        return self.error_class in TRANSIENT


class ErrorClassifier(Protocol):
    """An adapter whose provider says more than its status code does (Google's RetryInfo,
    Bedrock's x-amzn-ErrorType): the error class and the wait it asks for, or None to
    fall back to `classify_status` and the Retry-After header."""

    def classify_error(self, status: int, body: Any,
                       headers: Mapping[str, str]) -> tuple[str, float | None] | None: ...


class Preparer(Protocol):
    """An adapter that needs something before it can build a call (Vertex's access token):
    awaited before `build`; cheap when there is nothing to do."""

    async def prepare(self, endpoint: Endpoint) -> None: ...


class StreamParser(Protocol):
    def feed(self, event: str | None, data: str) -> str | None:
        """One SSE event; returns the text it adds (maybe ""), raises ProviderError for an
        error event."""

    @property
    def done(self) -> bool:
        """The provider said the message is complete."""

    def finish(self) -> ChatResponse: ...


class Adapter(Protocol):
    """Pure translation between ChatRequest/ChatResponse and one provider's HTTP API."""

    def build(self, endpoint: Endpoint, request: ChatRequest, stream: bool = False) -> HttpCall:
        ...

    def parse(self, body: Any) -> ChatResponse: ...

    def stream_parser(self) -> StreamParser: ...

    def models_call(self, endpoint: Endpoint) -> HttpCall | None:
        """The provider's model list (a GET), or None where it has none."""

    def parse_models(self, body: Any) -> list[str]: ...

    def check_call(self, endpoint: Endpoint) -> HttpCall:
        """The cheapest call that proves the base URL answers and accepts the key (a
        connection test): the model list where it needs the key, else a call that does."""


# --- shared pieces ------------------------------------------------------------------------

_VERSIONED = re.compile(r"/v\d+[a-z0-9]*$")


class ListIsTheCheck:
    """For providers whose model list needs the key: that free call is the connection check."""

    def models_call(self, endpoint: Endpoint) -> HttpCall | None:
        raise NotImplementedError

    def check_call(self, endpoint: Endpoint) -> HttpCall:
        call = self.models_call(endpoint)
        assert call is not None
        return call


class DataModelList(ListIsTheCheck):
    """`GET {base}/models` answering `{data: [{id}]}`, as OpenAI and Anthropic both do. The
    list is free and needs no model id, so it is also the connection check."""

    def headers(self, endpoint: Endpoint) -> dict[str, str]:
        raise NotImplementedError

    def models_call(self, endpoint: Endpoint) -> HttpCall | None:
        headers = self.headers(endpoint)
        headers.pop("Content-Type", None)
        return HttpCall(join_url(endpoint.base_url, "models"), {}, headers, method="GET")

    def parse_models(self, body: Any) -> list[str]:
        try:
            return sorted(str(m["id"]) for m in body["data"])
        except (KeyError, TypeError) as exc:
            raise malformed("no data[].id", exc) from exc


def join_url(base_url: str, path: str) -> str:
    """`path` (like "chat/completions") under the API root: base URLs are accepted with or
    without their version segment (`https://api.openai.com` or `.../v1`, Ollama's
    `http://host:11434/v1`, OpenRouter's `https://openrouter.ai/api/v1`)."""
    base = base_url.strip().rstrip("/")
    if not _VERSIONED.search(base):
        base += "/v1"
    return f"{base}/{path}"


def with_query(url: str, params: Mapping[str, str]) -> str:
    """`url` with `params` added to (or replacing those in) its query string."""
    parts = urlsplit(url)
    query = {**dict(parse_qsl(parts.query, keep_blank_values=True)), **params}
    return urlunsplit(parts._replace(query=urlencode(query)))


def extra_headers(endpoint: Endpoint, base: dict[str, str]) -> dict[str, str]:
    """`config.headers` of a credential (OpenRouter's HTTP-Referer and X-Title, the fake
    provider's X-Fake-Fault...) under the adapter's own: they never replace auth headers."""
    extra = endpoint.config.get("headers")
    if not isinstance(extra, Mapping):
        return base
    return {**{str(k): str(v) for k, v in extra.items()}, **base}


def error_text(body: Any) -> str:
    """The code, type and message of a provider error body (OpenAI's, Anthropic's, or a
    plain `{"error": "..."}` of Ollama and friends), as one line."""
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping):
            parts = [error.get(k) for k in ("code", "type", "message")]
            inner = error.get("innererror")
            if isinstance(inner, Mapping):
                parts.append(inner.get("code"))
            text = " ".join(str(p) for p in parts if p)
            if text:
                return text
        elif isinstance(error, str):
            return error
        return json.dumps(body)[:500]
    return str(body)[:500] if body is not None else ""


_CONTEXT = ("context_length_exceeded", "maximum number of tokens", "context length",
            "context_length", "prompt is too long",
            "context window", "exceeds the available context size", "input is too long",
            "too many tokens", "reduce the length of the messages")
_FILTER = ("content_filter", "content_policy", "responsibleaipolicyviolation",
           "content management policy")


def classify_status(status: int, body: Any) -> str:
    """The error class of an HTTP error reply, from its status and its body."""
    text = error_text(body).lower()
    if status == 429:
        # out of credit is no rate limit: waiting does not help
        return "auth" if "insufficient_quota" in text else "rate_limited"
    if status in (401, 403):
        return "auth"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server_error"
    if any(marker in text for marker in _CONTEXT):
        return "context_length"
    if any(marker in text for marker in _FILTER):
        return "content_filter"
    return "bad_request"


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def malformed(what: str, exc: BaseException | None = None) -> ProviderError:
    detail = f": {exc!r}" if exc is not None else ""
    return ProviderError("malformed_response", f"unexpected response shape ({what}){detail}")


class SSEDecoder:
    """Server-sent events, line by line: returns (event, data) when a blank line ends one."""

    __slots__ = ("_data", "_event")

    def __init__(self) -> None:
        self._event: str | None = None
        self._data: list[str] = []

    def line(self, raw: str) -> tuple[str | None, str] | None:
        line = raw.rstrip("\r\n")
        if not line:
            if not self._data:
                self._event = None
                return None
            out = (self._event, "\n".join(self._data))
            self._event, self._data = None, []
            return out
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None

    def end(self) -> tuple[str | None, str] | None:
        """Flush an event the stream did not terminate with a blank line."""
        return self.line("") if self._data else None

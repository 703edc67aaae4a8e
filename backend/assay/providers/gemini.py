"""Google's generateContent, as the Gemini API and Vertex AI both speak it: translate a
ChatRequest to a call and the reply back, and read Google's error bodies.

Gemini API: `{base}/v1beta/models/{model}:generateContent` with `x-goog-api-key`.
Vertex AI: `{base}/v1/projects/{project}/locations/{location}/publishers/google/models/
{model}:generateContent` with a bearer token (vertex.py). Streaming is
`:streamGenerateContent?alt=sse`: each event a whole GenerateContentResponse, the last one
with the finish reason and usage; the stream ends when the connection does.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from assay.providers.base import (
    ChatRequest,
    ChatResponse,
    Endpoint,
    HttpCall,
    ListIsTheCheck,
    ProviderError,
    as_int,
    classify_status,
    error_text,
    extra_headers,
    malformed,
)

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
# Why a candidate stopped, in OpenAI's words (a safety stop fails the call as
# content_filter in the client).
FINISH = {"STOP": "stop", "MAX_TOKENS": "length", "SAFETY": "content_filter",
          "RECITATION": "content_filter", "BLOCKLIST": "content_filter",
          "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
          "IMAGE_SAFETY": "content_filter", "MALFORMED_FUNCTION_CALL": "stop"}
# ChatRequest params -> generationConfig fields
CONFIG = {"temperature": "temperature", "top_p": "topP", "top_k": "topK",
          "seed": "seed", "presence_penalty": "presencePenalty",
          "frequency_penalty": "frequencyPenalty", "candidate_count": "candidateCount",
          "response_mime_type": "responseMimeType"}
_AUTH_REASONS = frozenset({"API_KEY_INVALID", "API_KEY_SERVICE_BLOCKED", "ACCESS_TOKEN_EXPIRED",
                           "CREDENTIALS_MISSING", "SERVICE_DISABLED"})
_AUTH_STATUSES = frozenset({"UNAUTHENTICATED", "PERMISSION_DENIED"})
_DELAY = re.compile(r"^\s*(\d+(?:\.\d+)?)s\s*$")


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, list):
        return [{"text": p["text"]} for p in content
                if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return [{"text": "" if content is None else str(content)}]


def body(request: ChatRequest) -> dict[str, Any]:
    """generateContent's body: system messages become `systemInstruction`, assistant turns
    the `model` role, the sampling parameters `generationConfig`."""
    system: list[dict[str, Any]] = []
    contents: list[dict[str, Any]] = []
    for message in request.messages:
        role = message.get("role")
        if role == "system":
            system += _parts(message.get("content"))
        else:
            contents.append({"role": "model" if role == "assistant" else "user",
                             "parts": _parts(message.get("content"))})
    out: dict[str, Any] = {"contents": contents}
    if system:
        out["systemInstruction"] = {"parts": system}
    params = request.params
    config = {CONFIG[k]: v for k, v in params.items() if k in CONFIG and v is not None}
    max_tokens = params.get("max_completion_tokens") or params.get("max_tokens")
    if max_tokens:
        config["maxOutputTokens"] = max_tokens
    stop = params.get("stop")
    if stop:
        config["stopSequences"] = [stop] if isinstance(stop, str) else list(stop)
    if config:
        out["generationConfig"] = config
    tools = params.get("tools")
    if tools:  # a prompt's {name, description, parameters}
        out["tools"] = [{"functionDeclarations": [
            t.get("function", t) for t in tools if isinstance(t, dict)]}]
    return out


def model_path(model: str) -> str:
    """`models/gemini-2.0-flash` and `gemini-2.0-flash` name the same model."""
    return quote(model.removeprefix("models/"), safe="")


def _usage(usage: Any) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    tokens_out = as_int(usage.get("candidatesTokenCount"))
    thoughts = as_int(usage.get("thoughtsTokenCount"))  # billed as output
    if thoughts:
        tokens_out = (tokens_out or 0) + thoughts
    return as_int(usage.get("promptTokenCount")), tokens_out


def _blocked(body: Mapping[str, Any]) -> ProviderError | None:
    feedback = body.get("promptFeedback")
    reason = feedback.get("blockReason") if isinstance(feedback, dict) else None
    if reason and not body.get("candidates"):
        return ProviderError("content_filter", f"the prompt was blocked ({reason})", raw=body)
    return None


def _candidate(body: Any) -> tuple[str, str | None]:
    """The text (thought parts left out) and finish reason of the first candidate."""
    candidate = body["candidates"][0]
    parts = (candidate.get("content") or {}).get("parts") or []
    text = "".join(p.get("text", "") for p in parts
                   if isinstance(p, dict) and not p.get("thought"))
    reason = candidate.get("finishReason")
    return text, reason if isinstance(reason, str) else None


def finish_reason(reason: str | None) -> str | None:
    return FINISH.get(reason, reason.lower()) if reason else None


def retry_delay(body: Any) -> float | None:
    """Seconds from a `google.rpc.RetryInfo` detail's retryDelay ("12s", "0.5s")."""
    for detail in _details(body):
        if str(detail.get("@type", "")).endswith("google.rpc.RetryInfo"):
            match = _DELAY.match(str(detail.get("retryDelay", "")))
            if match:
                return float(match.group(1))
    return None


def _details(body: Any) -> list[dict[str, Any]]:
    error = body.get("error") if isinstance(body, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    return [d for d in details if isinstance(d, dict)] if isinstance(details, list) else []


def classify(status: int, body: Any) -> tuple[str, float | None]:
    """Google's error class: an invalid key is a 400 there (reason API_KEY_INVALID)."""
    error = body.get("error") if isinstance(body, dict) else None
    state = error.get("status") if isinstance(error, dict) else None
    reasons = {d.get("reason") for d in _details(body)}
    if status != 429 and (reasons & _AUTH_REASONS or state in _AUTH_STATUSES):
        return "auth", None
    if state == "DEADLINE_EXCEEDED":
        return "timeout", None
    return classify_status(status, body), retry_delay(body)


def _raise_refusal(reply: dict[str, Any]) -> None:
    """An `error` body or a blocked prompt, in a reply or a stream chunk, as its error."""
    if "error" in reply:
        raise ProviderError(classify(400, reply)[0], error_text(reply), raw=reply)
    blocked = _blocked(reply)
    if blocked is not None:
        raise blocked


class GoogleAdapter:
    """What the Gemini API and Vertex AI share; subclasses say where and with what auth."""

    def model_url(self, endpoint: Endpoint, model: str) -> str:
        raise NotImplementedError

    def headers(self, endpoint: Endpoint) -> dict[str, str]:
        raise NotImplementedError

    def build(self, endpoint: Endpoint, request: ChatRequest, stream: bool = False) -> HttpCall:
        base = self.model_url(endpoint, request.model)
        url = f"{base}:streamGenerateContent?alt=sse" if stream else f"{base}:generateContent"
        return HttpCall(url, body(request), self.headers(endpoint))

    def parse(self, reply: Any) -> ChatResponse:
        if not isinstance(reply, dict):
            raise malformed("the reply is not an object")
        _raise_refusal(reply)
        try:
            text, reason = _candidate(reply)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise malformed("no candidates[0]", exc) from exc
        tokens_in, tokens_out = _usage(reply.get("usageMetadata"))
        return ChatResponse(text=text, tokens_in=tokens_in, tokens_out=tokens_out,
                            finish_reason=finish_reason(reason), raw=reply)

    def stream_parser(self) -> GoogleStream:
        return GoogleStream()

    def classify_error(self, status: int, body: Any,
                       headers: Mapping[str, str]) -> tuple[str, float | None] | None:
        return classify(status, body)


class GeminiAdapter(GoogleAdapter, ListIsTheCheck):
    def root(self, endpoint: Endpoint) -> str:
        root = endpoint.base_url.strip().rstrip("/")
        return root if re.search(r"/v1(beta|alpha)?$", root) else f"{root}/v1beta"

    def model_url(self, endpoint: Endpoint, model: str) -> str:
        return f"{self.root(endpoint)}/models/{model_path(model)}"

    def headers(self, endpoint: Endpoint) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if endpoint.api_key:
            headers["x-goog-api-key"] = endpoint.api_key
        return extra_headers(endpoint, headers)

    def models_call(self, endpoint: Endpoint) -> HttpCall | None:
        headers = self.headers(endpoint)
        headers.pop("Content-Type")
        return HttpCall(f"{self.root(endpoint)}/models?pageSize=1000", {}, headers, "GET")

    def model_items(self, body: Any) -> list[dict[str, Any]]:
        """`models[]` that generate content, as {id, name}."""
        try:
            rows = body["models"]
        except (KeyError, TypeError) as exc:
            raise malformed("no models[]", exc) from exc
        return [{"id": str(m["name"]).removeprefix("models/"), "name": m.get("displayName")}
                for m in rows if isinstance(m, dict) and m.get("name")
                and "generateContent" in (m.get("supportedGenerationMethods")
                                          or ["generateContent"])]

    def parse_models(self, body: Any) -> list[str]:
        return sorted(item["id"] for item in self.model_items(body))


class GoogleStream:
    """SSE events, each a GenerateContentResponse: text deltas, the finish reason and the
    usage of the last; a blocked prompt or an `error` event is a classified error."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.reason: str | None = None
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        self.head: dict[str, Any] = {}
        self.chunks = 0
        self.done = False  # Google ends a stream by closing it: read to the end

    def feed(self, event: str | None, data: str) -> str | None:
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise malformed("a stream chunk is not JSON", exc) from exc
        if not isinstance(chunk, dict):
            raise malformed("a stream chunk is not an object")
        _raise_refusal(chunk)
        self.chunks += 1
        if not self.head:
            self.head = {k: chunk[k] for k in ("responseId", "modelVersion") if k in chunk}
        if chunk.get("usageMetadata"):
            self.tokens_in, self.tokens_out = _usage(chunk["usageMetadata"])
        if not chunk.get("candidates"):
            return ""
        try:
            piece, reason = _candidate(chunk)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise malformed("a stream chunk has no candidates[0]", exc) from exc
        self.reason = reason or self.reason
        if piece:
            self.parts.append(piece)
        return piece

    def finish(self) -> ChatResponse:
        if self.reason is None:
            raise malformed("the stream ended before a finishReason")
        text = "".join(self.parts)
        raw = {**self.head, "streamed": True, "chunks": self.chunks,
               "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                               "finishReason": self.reason}],
               "usageMetadata": None if self.tokens_in is None else {
                   "promptTokenCount": self.tokens_in, "candidatesTokenCount": self.tokens_out}}
        return ChatResponse(text=text, tokens_in=self.tokens_in, tokens_out=self.tokens_out,
                            finish_reason=finish_reason(self.reason), raw=raw)


ADAPTER = GeminiAdapter()

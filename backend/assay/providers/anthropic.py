"""Anthropic messages: translate a ChatRequest to `POST {base}/v1/messages` and back.

System messages are split out into `system`, `max_tokens` is required (the request's, else
DEFAULT_MAX_TOKENS), `stop` becomes `stop_sequences`, and parameters Anthropic does not
have (seed, penalties, n...) are left out. Nothing else: no I/O, no retries, no timing.
"""

from __future__ import annotations

import json
from typing import Any

from assay.providers.base import (
    ChatRequest,
    ChatResponse,
    DataModelList,
    Endpoint,
    HttpCall,
    ProviderError,
    as_int,
    classify_status,
    error_text,
    extra_headers,
    join_url,
    malformed,
)

VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 1024
PASSED = ("temperature", "top_p", "top_k", "metadata", "tools", "tool_choice", "thinking")
# Why a message stopped, in OpenAI's words, so reports compare like with like.
FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
          "tool_use": "tool_calls", "refusal": "content_filter", "pause_turn": "stop"}


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content
                         if isinstance(p, dict) and p.get("type", "text") == "text")
    return str(content)


def _usage(usage: Any) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    tokens_in = as_int(usage.get("input_tokens"))
    if tokens_in is not None:  # prompt caching splits the input count three ways
        tokens_in += sum(as_int(usage.get(k)) or 0 for k in (
            "cache_creation_input_tokens", "cache_read_input_tokens"))
    return tokens_in, as_int(usage.get("output_tokens"))


class AnthropicAdapter(DataModelList):
    def headers(self, endpoint: Endpoint) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "anthropic-version": str(endpoint.config.get("anthropic_version") or VERSION)}
        if endpoint.api_key:
            headers["x-api-key"] = endpoint.api_key
        return extra_headers(endpoint, headers)

    def body(self, request: ChatRequest, stream: bool) -> dict[str, Any]:
        system = [_text_of(m.get("content")) for m in request.messages
                  if m.get("role") == "system"]
        messages = [{"role": m.get("role"), "content": m.get("content")}
                    for m in request.messages if m.get("role") != "system"]
        params = request.params
        max_tokens = params.get("max_tokens") or params.get("max_completion_tokens")
        body: dict[str, Any] = {"model": request.model, "messages": messages,
                                "max_tokens": max_tokens or DEFAULT_MAX_TOKENS}
        if system:
            body["system"] = "\n\n".join(system)
        body.update((k, params[k]) for k in PASSED if params.get(k) is not None)
        if body.get("tools"):  # a prompt's {name, description, parameters}
            body["tools"] = [t if "input_schema" in t else {
                **{k: t[k] for k in ("name", "description") if k in t},
                "input_schema": t.get("parameters") or {"type": "object", "properties": {}}}
                for t in body["tools"]]
        stop = params.get("stop_sequences", params.get("stop"))
        if stop:
            body["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        if stream:
            body["stream"] = True
        return body

    def build(self, endpoint: Endpoint, request: ChatRequest, stream: bool = False) -> HttpCall:
        return HttpCall(join_url(endpoint.base_url, "messages"), self.body(request, stream),
                        self.headers(endpoint))

    def parse(self, body: Any) -> ChatResponse:
        if isinstance(body, dict) and body.get("type") == "error":
            raise ProviderError(classify_status(400, body), error_text(body), raw=body)
        try:
            blocks = body["content"]
            text = "".join(b["text"] for b in blocks if b.get("type") == "text")
            stop = body.get("stop_reason")
        except (KeyError, TypeError, AttributeError) as exc:
            raise malformed("no content[] of text blocks", exc) from exc
        tokens_in, tokens_out = _usage(body.get("usage"))
        return ChatResponse(text=text, tokens_in=tokens_in, tokens_out=tokens_out,
                            finish_reason=FINISH.get(stop, stop) if stop else None, raw=body)

    def stream_parser(self) -> AnthropicStream:
        return AnthropicStream()



class AnthropicStream:
    """message_start (input usage), content_block_delta (text), message_delta (stop reason,
    output usage), message_stop; an `error` event mid-stream is a classified error."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.stop: str | None = None
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        self.head: dict[str, Any] = {}
        self.events = 0
        self.done = False

    def feed(self, event: str | None, data: str) -> str | None:
        try:
            payload = json.loads(data)
        except ValueError as exc:
            raise malformed("a stream event is not JSON", exc) from exc
        if not isinstance(payload, dict):
            raise malformed("a stream event is not an object")
        kind = payload.get("type", event)
        self.events += 1
        if kind == "error":
            raise ProviderError(classify_status(400, payload), error_text(payload), raw=payload)
        if kind == "message_start":
            message = payload.get("message") or {}
            self.head = {k: message[k] for k in ("id", "model") if k in message}
            self.tokens_in, _ = _usage(message.get("usage"))
        elif kind == "content_block_delta":
            delta = payload.get("delta") or {}
            piece = delta.get("text")
            if isinstance(piece, str) and piece:
                self.parts.append(piece)
                return piece
        elif kind == "message_delta":
            self.stop = (payload.get("delta") or {}).get("stop_reason") or self.stop
            usage = payload.get("usage")
            tokens_out = as_int(usage.get("output_tokens")) if isinstance(usage, dict) else None
            self.tokens_out = tokens_out if tokens_out is not None else self.tokens_out
        elif kind == "message_stop":
            self.done = True
        return ""

    def finish(self) -> ChatResponse:
        if not self.done:
            raise malformed("the stream ended before message_stop")
        text = "".join(self.parts)
        raw = {**self.head, "type": "message", "streamed": True, "events": self.events,
               "content": [{"type": "text", "text": text}], "stop_reason": self.stop,
               "usage": {"input_tokens": self.tokens_in, "output_tokens": self.tokens_out}}
        finish = FINISH.get(self.stop, self.stop) if self.stop else None
        return ChatResponse(text=text, tokens_in=self.tokens_in, tokens_out=self.tokens_out,
                            finish_reason=finish, raw=raw)


ADAPTER = AnthropicAdapter()

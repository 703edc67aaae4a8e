"""OpenAI chat completions (also OpenRouter, Ollama's /v1, vLLM, llama.cpp, LM Studio, any
OpenAI-compatible server, and the fake provider): translate a ChatRequest to an HTTP call and
the reply back. Nothing else: no I/O, no retries, no timing.
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

PATH = "chat/completions"


def _usage(usage: Any) -> tuple[int | None, int | None]:
    if not isinstance(usage, dict):
        return None, None
    return as_int(usage.get("prompt_tokens")), as_int(usage.get("completion_tokens"))


def _content(message: Any) -> str:
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # a list of parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    raise malformed("message content is neither text nor parts")


class OpenAIAdapter(DataModelList):
    """`{base}/v1/chat/completions` with `Authorization: Bearer <key>`."""

    def url(self, endpoint: Endpoint) -> str:
        return join_url(endpoint.base_url, PATH)

    def headers(self, endpoint: Endpoint) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if endpoint.api_key:
            headers["Authorization"] = f"Bearer {endpoint.api_key}"
        if endpoint.config.get("organization"):
            headers["OpenAI-Organization"] = str(endpoint.config["organization"])
        return extra_headers(endpoint, headers)

    def body(self, request: ChatRequest, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": request.model, "messages": request.messages,
                                **request.params}
        if body.get("tools"):  # a prompt's {name, description, parameters}: function tools
            body["tools"] = [t if "type" in t else {"type": "function", "function": dict(t)}
                             for t in body["tools"]]
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        else:
            body.pop("stream", None)
            body.pop("stream_options", None)
        return body

    def build(self, endpoint: Endpoint, request: ChatRequest, stream: bool = False) -> HttpCall:
        return HttpCall(self.url(endpoint), self.body(request, stream), self.headers(endpoint))

    def parse(self, body: Any) -> ChatResponse:
        if isinstance(body, dict) and "error" in body and "choices" not in body:
            raise ProviderError(classify_status(400, body), error_text(body), raw=body)
        try:
            choice = body["choices"][0]
            text = _content(choice["message"])
            finish = choice.get("finish_reason")
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise malformed("no choices[0].message", exc) from exc
        tokens_in, tokens_out = _usage(body.get("usage"))
        return ChatResponse(text=text, tokens_in=tokens_in, tokens_out=tokens_out,
                            finish_reason=finish if isinstance(finish, str) else None, raw=body)

    def stream_parser(self) -> OpenAIStream:
        return OpenAIStream()



class OpenRouterAdapter(OpenAIAdapter):
    """OpenRouter's model list is public: its `/v1/key` is what checks the key."""

    def parse_prices(self, body: Any) -> dict[str, tuple[int | None, int | None]]:
        """Model id -> (input, output) micro-dollars per million tokens, from the model
        list's `pricing` (dollars per token, as strings); a price it lacks is None."""
        def micros(value: Any) -> int | None:
            try:
                price = float(value)
            except (TypeError, ValueError):
                return None
            return round(price * 1e12) if price >= 0 else None  # $/token -> micros/Mtok

        try:
            rows = body["data"]
        except (KeyError, TypeError) as exc:
            raise malformed("no data[]", exc) from exc
        return {str(m["id"]): (micros((m.get("pricing") or {}).get("prompt")),
                               micros((m.get("pricing") or {}).get("completion")))
                for m in rows if isinstance(m, dict) and "id" in m}

    def check_call(self, endpoint: Endpoint) -> HttpCall:
        headers = super().check_call(endpoint).headers
        return HttpCall(join_url(endpoint.base_url, "key"), {}, headers, method="GET")


class OllamaAdapter(OpenAIAdapter):
    """Chat through Ollama's OpenAI-compatible `/v1`; its model list is the native
    `/api/tags` (`models[].name`), on the server root. Ollama takes no key."""

    def models_call(self, endpoint: Endpoint) -> HttpCall | None:
        root = endpoint.base_url.strip().rstrip("/")
        root = root[:-3] if root.lower().endswith("/v1") else root
        return HttpCall(f"{root}/api/tags", {}, {"Accept": "application/json"}, method="GET")

    def parse_models(self, body: Any) -> list[str]:
        try:
            return sorted(str(m["name"]) for m in body["models"])
        except (KeyError, TypeError) as exc:
            raise malformed("no models[].name", exc) from exc


class OpenAIStream:
    """`data: {chunk}` events, ending with `data: [DONE]`; usage in the last chunk when
    `stream_options.include_usage` was asked for."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.finish_reason: str | None = None
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        self.chunks = 0
        self.head: dict[str, Any] = {}
        self.done = False

    def feed(self, event: str | None, data: str) -> str | None:
        if data.strip() == "[DONE]":
            self.done = True
            return None
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            raise malformed("a stream chunk is not JSON", exc) from exc
        if not isinstance(chunk, dict):
            raise malformed("a stream chunk is not an object")
        if "error" in chunk:
            raise ProviderError(classify_status(400, chunk), error_text(chunk), raw=chunk)
        self.chunks += 1
        if not self.head:
            self.head = {k: chunk[k] for k in ("id", "model", "created") if k in chunk}
        if chunk.get("usage"):
            self.tokens_in, self.tokens_out = _usage(chunk["usage"])
        choices = chunk.get("choices")
        if not isinstance(choices, list):
            raise malformed("a stream chunk has no choices list")
        added = ""
        for choice in choices[:1]:
            delta = choice.get("delta") or {}
            piece = delta.get("content")
            if isinstance(piece, str) and piece:
                self.parts.append(piece)
                added = piece
            if choice.get("finish_reason"):
                self.finish_reason = str(choice["finish_reason"])
        return added

    def finish(self) -> ChatResponse:
        if not self.done:
            raise malformed("the stream ended before [DONE]")
        text = "".join(self.parts)
        raw = {**self.head, "streamed": True, "chunks": self.chunks,
               "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                            "finish_reason": self.finish_reason}],
               "usage": None if self.tokens_in is None else {
                   "prompt_tokens": self.tokens_in, "completion_tokens": self.tokens_out}}
        return ChatResponse(text=text, tokens_in=self.tokens_in, tokens_out=self.tokens_out,
                            finish_reason=self.finish_reason, raw=raw)


ADAPTER = OpenAIAdapter()
OPENROUTER = OpenRouterAdapter()
OLLAMA = OllamaAdapter()

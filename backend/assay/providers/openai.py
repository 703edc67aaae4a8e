"""OpenAI chat completions: translate a ChatRequest to JSON and the reply back. Nothing else."""

from __future__ import annotations

from typing import Any

from assay.providers.base import ChatRequest, ChatResponse, ProviderError

PATH = "/v1/chat/completions"


def build(request: ChatRequest) -> dict[str, Any]:
    return {"model": request.model, "messages": request.messages, **request.params}


def parse(body: Any) -> ChatResponse:
    try:
        choice = body["choices"][0]
        text = choice["message"]["content"] or ""
        usage = body.get("usage") or {}
    except (KeyError, IndexError, TypeError) as exc:
        raise ProviderError("malformed_response", f"unexpected response shape: {exc!r}") from exc
    return ChatResponse(text=text, tokens_in=usage.get("prompt_tokens"),
                        tokens_out=usage.get("completion_tokens"), raw=body)

"""Request reading and response shapes of the fake LLM provider (see ``fake.py``).

Everything here is pure and cheap: no I/O, no logging, no validation library.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from assay.providers import fake_answers
from assay.providers.fake_config import Script

BASE_MODELS: tuple[str, ...] = ("fake-fast", "fake-smart", "fake-judge", "fake-tiny-context",
                                "fake-rag-copier", "fake-rag-contradicter")
TINY_CONTEXT_MODEL = "fake-tiny-context"
MAX_CONTEXT_TOKENS = 100_000
TINY_CONTEXT_TOKENS = 50
MESSAGE_OVERHEAD_TOKENS = 4
ECHO_WORDS = fake_answers.ECHO_WORDS

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_PIECE = re.compile(r"\s*\S+")


def dumps(obj: Any) -> bytes:
    return _dumps(obj).encode()


# --- reading requests -------------------------------------------------------------------


def content_text(content: Any) -> str:
    """The text of a message's content: a string, or a list of parts (OpenAI and
    Anthropic both use ``{"type": "text", "text": ...}``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                text = part.get("text")
                if isinstance(text, str):
                    parts.append(text)
            elif isinstance(part, str):
                parts.append(part)
        return " ".join(parts)
    return ""


def read_prompt(messages: Sequence[Any], system: Any = None) -> tuple[int, str]:
    """(prompt token count, text of the last user message). A token is a
    whitespace-separated word, plus a fixed overhead per message."""
    tokens = 0
    last_user = ""
    if system:
        tokens += len(content_text(system).split()) + MESSAGE_OVERHEAD_TOKENS
    for message in messages:
        if not isinstance(message, dict):
            continue
        text = content_text(message.get("content"))
        tokens += len(text.split()) + MESSAGE_OVERHEAD_TOKENS
        if message.get("role") == "user":
            last_user = text
    return tokens, last_user


def context_limit(model: str) -> int:
    return TINY_CONTEXT_TOKENS if model == TINY_CONTEXT_MODEL else MAX_CONTEXT_TOKENS


def system_text(messages: Sequence[Any], system: Any = None) -> str:
    """The system prompt: Anthropic's ``system`` field, else the system messages."""
    if system:
        return content_text(system)
    return "\n\n".join(content_text(m.get("content")) for m in messages
                        if isinstance(m, dict) and m.get("role") == "system")


def make_reply(model: str, last_user: str, scripts: Sequence[Script],
               messages: Sequence[Any] = (), system: str = "",
               body: dict[str, Any] | None = None, seed: int = 0) -> str:
    """The first matching script's reply, else the answer the request needs
    (``fake_answers``): a judge's or generator's JSON, or ``"{model} says: "`` + an echo
    of the first words of the last user message. Deterministic."""
    for script in scripts:
        if script.matches(model, last_user):
            return script.reply
    return fake_answers.answer(model, messages, system, last_user, body or {}, seed,
                               content_text)


def truncate(reply: str, max_tokens: int | None) -> tuple[str, int, bool]:
    """(reply cut to ``max_tokens`` words, its token count, whether it was cut)."""
    words = reply.split()
    if max_tokens is not None and len(words) > max_tokens:
        return " ".join(words[:max_tokens]), max_tokens, True
    return reply, len(words), False


def pieces(reply: str) -> list[str]:
    """The reply split word by word such that ``"".join(pieces(r)) == r``."""
    out = _PIECE.findall(reply)
    consumed = sum(map(len, out))
    if consumed < len(reply):
        if out:
            out[-1] += reply[consumed:]
        else:
            out.append(reply)
    return out


# --- errors -------------------------------------------------------------------------------


def openai_error(
    message: str, type_: str, code: str | None = None, param: str | None = None
) -> bytes:
    return dumps({"error": {"message": message, "type": type_, "param": param, "code": code}})


def anthropic_error(type_: str, message: str) -> bytes:
    return dumps({"type": "error", "error": {"type": type_, "message": message}})


# --- OpenAI -------------------------------------------------------------------------------


def openai_completion(
    id_: str,
    created: int,
    model: str,
    text: str,
    cut: bool,
    prompt_tokens: int,
    completion_tokens: int,
) -> bytes:
    return dumps(
        {
            "id": id_,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "length" if cut else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            "system_fingerprint": "fp_assay_fake",
        }
    )


def openai_stream(
    id_: str,
    created: int,
    model: str,
    text: str,
    cut: bool,
    prompt_tokens: int,
    completion_tokens: int,
    include_usage: bool,
) -> list[bytes]:
    """The SSE events of a streamed chat completion, ending with ``data: [DONE]``."""
    head = {"id": id_, "object": "chat.completion.chunk", "created": created, "model": model}
    if include_usage:
        head["usage"] = None

    def chunk(delta: dict[str, Any], finish: str | None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return b"data: " + dumps({**head, "choices": [choice]}) + b"\n\n"

    events = [chunk({"role": "assistant", "content": ""}, None)]
    events.extend(chunk({"content": piece}, None) for piece in pieces(text))
    events.append(chunk({}, "length" if cut else "stop"))
    if include_usage:
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        events.append(b"data: " + dumps({**head, "choices": [], "usage": usage}) + b"\n\n")
    events.append(b"data: [DONE]\n\n")
    return events


def models_list(models: Sequence[str]) -> bytes:
    return dumps(
        {
            "object": "list",
            "data": [
                {"id": m, "object": "model", "created": 0, "owned_by": "assay-fake"} for m in models
            ],
        }
    )


# --- Anthropic ----------------------------------------------------------------------------


def anthropic_message(
    id_: str, model: str, text: str, cut: bool, input_tokens: int, output_tokens: int
) -> bytes:
    return dumps(
        {
            "id": id_,
            "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "model": model,
            "stop_reason": "max_tokens" if cut else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
    )


def _event(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + dumps(data) + b"\n\n"


def anthropic_stream(
    id_: str, model: str, text: str, cut: bool, input_tokens: int, output_tokens: int
) -> list[bytes]:
    """The SSE events of a streamed Anthropic message, message_start .. message_stop."""
    start: dict[str, Any] = {
        "id": id_,
        "type": "message",
        "role": "assistant",
        "content": [],
        "model": model,
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1},
    }
    events = [
        _event("message_start", {"type": "message_start", "message": start}),
        _event(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        _event("ping", {"type": "ping"}),
    ]
    events.extend(
        _event(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": piece},
            },
        )
        for piece in pieces(text)
    )
    events.append(_event("content_block_stop", {"type": "content_block_stop", "index": 0}))
    events.append(
        _event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {
                    "stop_reason": "max_tokens" if cut else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": output_tokens},
            },
        )
    )
    events.append(_event("message_stop", {"type": "message_stop"}))
    return events

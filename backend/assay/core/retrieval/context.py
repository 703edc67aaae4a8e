"""How retrieved chunks read in a prompt and to a judge. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def context_text(chunks: Sequence[Mapping[str, Any]]) -> str:
    """The retrieved chunks as the prompt shows them, numbered, best first."""
    return "\n\n".join(f"[{i}] {c['text']}" for i, c in enumerate(chunks, 1))

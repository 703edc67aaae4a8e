"""`{{name}}` placeholders: found and filled without the prompt service's database layer
(`assay eval` checks a config's variables before it imports SQLAlchemy)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def parse_variables(*texts: str | None) -> list[str]:
    """Variable names in order of first use, each once."""
    found: dict[str, None] = {}
    for text in texts:
        for match in PLACEHOLDER.finditer(text or ""):
            found.setdefault(match.group(1), None)
    return list(found)


def render(text: str, values: Mapping[str, Any]) -> str:
    """`text` with each `{{name}}` replaced by its value, in one pass (a value holding braces
    is not rendered again); a name without a value stays as written."""
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        return str(values[name]) if name in values and values[name] is not None \
            else match.group(0)
    return PLACEHOLDER.sub(value, text)

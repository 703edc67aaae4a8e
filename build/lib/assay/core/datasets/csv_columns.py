"""The tags and metadata columns of a dataset CSV, written and read back by one pair each.

Tags are comma-separated, as people type them, unless a tag holds a comma or the cell
would start with "[" : then the cell is the JSON list. Reading takes a cell that is a JSON
list of strings as that list and anything else as comma-separated tags. Metadata is the
case's metadata object as JSON ("{}" when it has none, so no exported row is ever blank)."""

from __future__ import annotations

import json
from typing import Any


def tags_cell(tags: list[str]) -> str:
    joined = ",".join(tags)
    if joined.startswith("[") or any("," in t or t != t.strip() for t in tags):
        return json.dumps(tags, ensure_ascii=False)
    return joined


def tags_of(cell: str) -> list[str]:
    text = cell.strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, list) and all(isinstance(t, str) for t in value):
            return value
    return [t.strip() for t in cell.split(",") if t.strip()]


def metadata_cell(metadata: dict[str, Any] | None) -> str:
    return json.dumps(metadata or {}, ensure_ascii=False)


def metadata_of(cell: str) -> dict[str, Any]:
    """The metadata object of a cell; empty is none. ValueError when it is no JSON object."""
    if not cell.strip():
        return {}
    try:
        value = json.loads(cell)
    except (ValueError, RecursionError) as error:
        raise ValueError("metadata must be a JSON object") from error
    if not isinstance(value, dict):
        raise ValueError("metadata must be a JSON object")
    return value

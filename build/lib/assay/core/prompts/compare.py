"""Comparing prompt versions (edison §9.3, FR-PR-003): a unified diff between any two
versions of a prompt (system text and template), or between a version and an edit not yet
saved (the preview shown before "Save as new version"), and the lineage as a tree."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from sqlalchemy.orm import Session

from assay.core.errors import Invalid
from assay.core.prompts.models import Prompt, PromptVersion
from assay.core.prompts.service import versions


def _text(system: str | None, template: str) -> list[str]:
    head = [f"[system]\n{system}\n", "[prompt]\n"] if system else []
    return "".join([*head, template]).splitlines(keepends=True)


def unified(before: tuple[str | None, str], after: tuple[str | None, str],
            from_label: str, to_label: str) -> dict[str, Any]:
    lines = list(difflib.unified_diff(_text(*before), _text(*after), from_label, to_label,
                                      lineterm="\n"))
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    added = sum(1 for line in lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in lines if line.startswith("-") and not line.startswith("---"))
    return {"diff": text, "added": added, "removed": removed, "identical": not lines}


def _version(found: dict[int, PromptVersion], version_id: int, field: str) -> PromptVersion:
    version = found.get(version_id)
    if version is None:
        raise Invalid("Not a version of this prompt",
                      {"query": {field: ["Not a version of this prompt"]}})
    return version


def diff(session: Session, prompt: Prompt, from_id: int | None,
         to_id: int | None) -> dict[str, Any]:
    """`to_id` defaults to the latest version, `from_id` to its parent (itself when it has
    none)."""
    newest = versions(session, prompt)
    found = {v.id: v for v in newest}
    b = _version(found, to_id, "to_id") if to_id is not None else newest[0]
    a = _version(found, from_id, "from_id") if from_id is not None else found.get(
        b.parent_id or 0, b)
    return {"from_id": a.id, "to_id": b.id, "from_number": a.number, "to_number": b.number,
            **unified((a.system, a.template), (b.system, b.template), f"v{a.number}",
                      f"v{b.number}")}


def preview(session: Session, prompt: Prompt, data: Mapping[str, Any]) -> dict[str, Any]:
    """The diff an edit would save, against its parent (the latest when not given)."""
    found = versions(session, prompt)
    parent_id = data.get("parent_id")
    parent = found[0] if parent_id is None else _version(
        {v.id: v for v in found}, parent_id, "parent_id")
    return {"from_id": parent.id, "to_id": None, "from_number": parent.number,
            "to_number": None, **unified((parent.system, parent.template),
                                         (data.get("system"), data["template"]),
                                         f"v{parent.number}", "edit")}


def tree(session: Session, prompt: Prompt) -> list[dict[str, Any]]:
    """Every version, oldest first, with its children's ids: the lineage as a tree."""
    found = sorted(versions(session, prompt), key=lambda v: v.number)
    children: dict[int, list[int]] = {}
    for v in found:
        if v.parent_id is not None:
            children.setdefault(v.parent_id, []).append(v.id)
    return [{"version": v, "children": children.get(v.id, []),
             "is_production": v.id == prompt.production_version_id} for v in found]

"""What prompts and scorers share: immutable versions numbered per parent."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session

V = TypeVar("V")


def latest_versions(session: Session, version: type[V], parent: Any,
                    parent_ids: list[int]) -> dict[int, V]:
    """Parent id -> its highest-numbered version; `parent` is the version's parent column
    (e.g. PromptVersion.prompt_id)."""
    if not parent_ids:
        return {}
    number = version.number  # type: ignore[attr-defined]  # every version table has one
    newest = (select(parent.label("parent"), func.max(number).label("n"))
              .where(parent.in_(parent_ids)).group_by(parent).subquery())
    rows = session.scalars(select(version).join(
        newest, (newest.c.parent == parent) & (newest.c.n == number)))
    return {getattr(v, parent.key): v for v in rows}

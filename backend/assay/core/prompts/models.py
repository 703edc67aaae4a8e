"""Prompts with immutable, numbered versions: the template a run renders for each case."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from assay.core.base import Base, utcnow


class Prompt(Base):
    __tablename__ = "prompts"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str | None] = mapped_column(Text)
    archived_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PromptVersion(Base):
    """Never edited once written: a run names the exact version it rendered."""

    __tablename__ = "prompt_versions"
    __table_args__ = (UniqueConstraint("prompt_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    prompt_id: Mapped[int] = mapped_column(ForeignKey("prompts.id", ondelete="CASCADE"))
    number: Mapped[int]
    template: Mapped[str] = mapped_column(Text)  # user message, with {{variables}}
    system: Mapped[str | None] = mapped_column(Text)  # system message, {{variables}} too
    # [{"input": text, "output": text}]: sent as user/assistant pairs before the case
    few_shots: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    variables: Mapped[list[str]] = mapped_column(JSON, default=list)  # parsed on save
    note: Mapped[str | None] = mapped_column(String(500))
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

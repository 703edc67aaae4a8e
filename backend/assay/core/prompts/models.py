"""Prompts with immutable, numbered versions: the template a run renders for each case."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from assay.core.base import Base, utcnow
from assay.core.row_versions import Versioned


class Prompt(Versioned, Base):
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
    # The one version marked for production; a pointer here (not a flag on versions) keeps
    # versions immutable and makes "exactly one per prompt" hold by construction.
    production_version_id: Mapped[int | None] = mapped_column(ForeignKey(
        "prompt_versions.id", ondelete="SET NULL", use_alter=True))


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
    # [{"name", "description"?, "parameters"?: JSON Schema}]: function tools, checked on save
    tools: Mapped[list[dict[str, Any]]] = mapped_column(JSON, default=list)
    variables: Mapped[list[str]] = mapped_column(JSON, default=list)  # parsed on save
    note: Mapped[str | None] = mapped_column(String(500))  # the changelog
    # The version this one was edited from (its lineage); null for a prompt's first version.
    parent_id: Mapped[int | None] = mapped_column(
        ForeignKey("prompt_versions.id", ondelete="SET NULL"))
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

"""Datasets with immutable versions; versions share unchanged cases (copy-on-write)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from assay.core.base import Base, utcnow
from assay.core.row_versions import Versioned


class Dataset(Versioned, Base):
    __tablename__ = "datasets"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str | None] = mapped_column(Text)
    kind: Mapped[str] = mapped_column(String(16), default="questions")
    split: Mapped[str | None] = mapped_column(String(8))
    # Labels for the dataset as a whole (its cases have tags of their own).
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    # How its first cases came to be: {"type": "generated", job, model, spec, prompt...},
    # {"type": "imported", format, rows} or {"type": "manual"}; null for older datasets.
    origin: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    archived_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class DatasetVersion(Base):
    __tablename__ = "dataset_versions"
    __table_args__ = (UniqueConstraint("dataset_id", "number"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"))
    number: Mapped[int]
    case_count: Mapped[int] = mapped_column(default=0)
    note: Mapped[str | None] = mapped_column(String(500))
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Case(Base):
    __tablename__ = "cases"

    id: Mapped[int] = mapped_column(primary_key=True)
    dataset_id: Mapped[int] = mapped_column(
        ForeignKey("datasets.id", ondelete="CASCADE"), index=True
    )
    input: Mapped[dict[str, Any]]
    expected: Mapped[dict[str, Any] | None]
    tags: Mapped[list[str]] = mapped_column(JSON, default=list)
    difficulty: Mapped[str | None] = mapped_column(String(8))
    meta: Mapped[dict[str, Any]] = mapped_column("metadata", JSON, default=dict)
    trace: Mapped[dict[str, Any] | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class VersionCase(Base):
    """Membership of a case in a version, in order."""

    __tablename__ = "version_cases"
    # a version's cases in order: the results grid walks them a page at a time, and
    # case numbers rank them
    __table_args__ = (Index("ix_version_cases_order", "version_id", "position", "case_id"),)

    version_id: Mapped[int] = mapped_column(
        ForeignKey("dataset_versions.id", ondelete="CASCADE"), primary_key=True
    )
    case_id: Mapped[int] = mapped_column(ForeignKey("cases.id"), primary_key=True)
    position: Mapped[int]


class Document(Base):
    """An uploaded source (text extracted from a PDF, or plain text) for grounded generation."""

    __tablename__ = "documents"

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(255))
    mime: Mapped[str] = mapped_column(String(100))
    size_bytes: Mapped[int]
    text: Mapped[str] = mapped_column(Text)
    pages: Mapped[int | None]
    # how it was split into chunks for retrieval (core/retrieval), in tokens
    chunk_size: Mapped[int | None]
    chunk_overlap: Mapped[int | None]
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

"""Projects (the tenant), memberships with roles, and the audit trail."""

from __future__ import annotations

import enum
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from assay.core.auth.models import User
from assay.core.base import Base, utcnow
from assay.core.row_versions import Versioned


class Role(enum.StrEnum):
    viewer = "viewer"
    reviewer = "reviewer"
    editor = "editor"
    admin = "admin"
    owner = "owner"

    @property
    def rank(self) -> int:
        return list(Role).index(self)

    def at_least(self, other: Role) -> bool:
        return self.rank >= other.rank


class Project(Versioned, Base):
    __tablename__ = "projects"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(100))
    slug: Mapped[str] = mapped_column(String(60), unique=True)
    description: Mapped[str | None] = mapped_column(Text)
    settings: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # The project's spending cap across all its runs, in micro-dollars (None: no cap).
    # Runs reserve against it and settle into it, as against their own cap.
    budget_micros: Mapped[int | None] = mapped_column(BigInteger)
    reserved_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    spent_micros: Mapped[int] = mapped_column(BigInteger, default=0)
    # Share of the project cap whose crossing raises the budget alert of the run crossing it.
    alert_threshold: Mapped[float] = mapped_column(default=0.8)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    deleted_at: Mapped[datetime | None] = mapped_column(index=True)  # soft: purged after grace


class Membership(Versioned, Base):
    __tablename__ = "memberships"
    __table_args__ = (UniqueConstraint("project_id", "user_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    role: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

    user: Mapped[User] = relationship(lazy="joined")


class Invite(Base):
    """A role waiting for an email nobody registered yet; accepted when that email registers
    (before it expires), revoked by deleting it."""

    __tablename__ = "invites"
    __table_args__ = (UniqueConstraint("project_id", "email"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    email: Mapped[str] = mapped_column(String(255), index=True)
    role: Mapped[str] = mapped_column(String(16))
    invited_by_id: Mapped[int | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[datetime]


class AuditEvent(Base):
    """Who did what, when, with the before/after that matters. Never deleted with a user."""

    __tablename__ = "audit_events"

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int | None] = mapped_column(
        ForeignKey("projects.id", ondelete="CASCADE"), index=True
    )
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    actor_email: Mapped[str | None] = mapped_column(String(255))
    action: Mapped[str] = mapped_column(String(64))
    target_type: Mapped[str] = mapped_column(String(32))
    target_id: Mapped[str | None] = mapped_column(String(64))
    data: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

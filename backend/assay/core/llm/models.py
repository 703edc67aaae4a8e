"""Provider credentials and priced model configurations of a project."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from assay.core.base import Base, utcnow
from assay.core.row_versions import Versioned


class Credential(Versioned, Base):
    """A provider account. The secret is stored encrypted (or named as an env variable)."""

    __tablename__ = "credentials"
    __table_args__ = (UniqueConstraint("project_id", "label"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    label: Mapped[str] = mapped_column(String(100))
    base_url: Mapped[str] = mapped_column(String(500))
    # AES-GCM ciphertext (nonce + data), bound to project and kind; never returned.
    secret_ciphertext: Mapped[bytes | None] = mapped_column(LargeBinary)
    secret_last4: Mapped[str | None] = mapped_column(String(4))
    secret_env: Mapped[str | None] = mapped_column(String(128))  # read the key from this var
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)  # api_version, deployment...
    is_default: Mapped[bool] = mapped_column(default=False)
    # calls in flight on this key at once, over every run, shard and worker (None: no bound)
    concurrency_ceiling: Mapped[int | None]
    last_tested_at: Mapped[datetime | None]
    last_test_ok: Mapped[bool | None]
    last_test_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class ModelConfig(Versioned, Base):
    __tablename__ = "model_configs"
    __table_args__ = (UniqueConstraint("project_id", "name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    project_id: Mapped[int] = mapped_column(ForeignKey("projects.id", ondelete="CASCADE"))
    credential_id: Mapped[int] = mapped_column(ForeignKey("credentials.id"))
    name: Mapped[str] = mapped_column(String(100))
    model: Mapped[str] = mapped_column(String(200))
    # Micro-dollars per million tokens; None means "no price set": flagged, never free.
    input_price_per_mtok_micros: Mapped[int | None]
    output_price_per_mtok_micros: Mapped[int | None]
    context_window: Mapped[int | None]
    params: Mapped[dict[str, Any]] = mapped_column(default=dict)
    archived_at: Mapped[datetime | None]  # used by past runs: archived, never deleted
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)

    credential: Mapped[Credential] = relationship(lazy="joined")


class CachedResponse(Base):
    """Content-addressed response cache: sha256 of (provider, model, params, messages)."""

    __tablename__ = "response_cache"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    provider: Mapped[str] = mapped_column(String(32))
    model: Mapped[str] = mapped_column(String(200))
    text: Mapped[str] = mapped_column(Text)
    tokens_in: Mapped[int | None]
    tokens_out: Mapped[int | None]
    raw: Mapped[dict[str, Any]] = mapped_column(default=dict)
    hits: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)

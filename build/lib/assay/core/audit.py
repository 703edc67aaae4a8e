"""Every mutation writes one audit event, in the same transaction as the change."""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from assay.core.auth.models import User
from assay.core.projects.models import AuditEvent


def record(session: Session, actor: User | None, action: str, target_type: str,
           target_id: object = None, project_id: int | None = None,
           data: dict[str, Any] | None = None) -> AuditEvent:
    event = AuditEvent(
        project_id=project_id,
        actor_id=actor.id if actor else None,
        actor_email=actor.email if actor else None,
        action=action,
        target_type=target_type,
        target_id=None if target_id is None else str(target_id),
        data=data or {},
    )
    session.add(event)
    return event

"""Invites for emails nobody registered yet (FR-PM-004): an admin invites an email with a
role; registering with that email before the invite expires makes the membership."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.auth.service import normalize_email
from assay.core.base import utcnow
from assay.core.errors import Conflict, Forbidden, NotFound
from assay.core.projects.models import Invite, Membership, Project, Role
from assay.core.projects.service import check_grant, touch

INVITE_DAYS = 7


def list_invites(session: Session, project: Project) -> list[Invite]:
    return list(session.scalars(select(Invite).where(Invite.project_id == project.id)
                                .order_by(Invite.created_at.desc(), Invite.id.desc())))


def create_invite(session: Session, actor: User, actor_role: Role, project: Project,
                  email: str, role: Role) -> Invite:
    check_grant(actor_role, None, role)
    email = normalize_email(email)
    if session.scalar(select(User.id).where(User.email == email)) is not None:
        raise Conflict("That email is registered already: add them as a member",
                       {"json": {"email": ["Already registered: add them as a member"]}},
                       code="USER_REGISTERED")
    existing = session.scalar(select(Invite).where(Invite.project_id == project.id,
                                                   Invite.email == email))
    if existing is not None:
        if existing.expires_at > utcnow():
            raise Conflict("That email is invited already",
                           {"json": {"email": ["Invited already"]}}, code="ALREADY_INVITED")
        session.delete(existing)  # an expired invite gives way to a new one
        session.flush()
    now = utcnow()
    invite = Invite(project_id=project.id, email=email, role=role.value,
                    invited_by_id=actor.id, created_at=now,
                    expires_at=now + timedelta(days=INVITE_DAYS))
    session.add(invite)
    touch(project)
    session.flush()
    audit.record(session, actor, "invite.created", "invite", invite.id, project.id,
                 {"email": email, "role": role.value})
    return invite


def revoke_invite(session: Session, actor: User, actor_role: Role, project: Project,
                  invite_id: int) -> None:
    invite = session.scalar(select(Invite).where(Invite.id == invite_id,
                                                 Invite.project_id == project.id))
    if invite is None:
        raise NotFound("Invite not found")
    check_grant(actor_role, Role(invite.role), None)
    session.delete(invite)
    touch(project)
    audit.record(session, actor, "invite.revoked", "invite", invite.id, project.id,
                 {"email": invite.email, "role": invite.role})


def check_may_register(session: Session, email: str) -> None:
    """With self-registration off: only the first account (the operator's) and an email
    holding an unexpired invite may register."""
    if session.scalar(select(User.id).limit(1)) is None:
        return
    if session.scalar(select(Invite.id).where(Invite.email == normalize_email(email),
                                              Invite.expires_at > utcnow()).limit(1)):
        return
    raise Forbidden("Registration is closed on this server: ask a project admin for an "
                    "invite", code="REGISTRATION_CLOSED")


def accept_invites(session: Session, user: User) -> list[Membership]:
    """At registration: every unexpired invite of the user's email becomes a membership."""
    invites = list(session.scalars(select(Invite).where(
        Invite.email == user.email, Invite.expires_at > utcnow())))
    members = []
    for invite in invites:
        member = Membership(project_id=invite.project_id, user_id=user.id, role=invite.role)
        session.add(member)
        members.append(member)
        audit.record(session, user, "invite.accepted", "invite", invite.id, invite.project_id,
                     {"email": user.email, "role": invite.role})
    if invites:
        session.execute(delete(Invite).where(Invite.id.in_([i.id for i in invites])))
    session.flush()
    return members

"""Invites for emails not yet registered: listed to members, made and revoked by admins."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, fields
from sqlalchemy.exc import IntegrityError

from assay.api.base import Blueprint, commit, project_access, session, user
from assay.api.fields import Email
from assay.api.projects.schemas import RoleField
from assay.core.base import utcnow
from assay.core.errors import Conflict
from assay.core.projects import invites
from assay.core.projects.models import Invite, Role

blp = Blueprint("invites", __name__, url_prefix="/api/projects/<int:project_id>/invites",
                description="Invites for emails not yet registered (FR-PM-004)")


class InviteSchema(Schema):
    id = fields.Integer(required=True)
    email = fields.String(required=True)
    role = RoleField(required=True)
    created_at = fields.DateTime(required=True)
    expires_at = fields.DateTime(required=True)
    expired = fields.Boolean(required=True, metadata={
        "description": "Past expires_at: registering no longer accepts it"})


class InviteListSchema(Schema):
    items = fields.List(fields.Nested(InviteSchema), required=True)


class InviteCreateSchema(Schema):
    email = Email(required=True)
    role = RoleField(required=True)


def _view(invite: Invite) -> dict[str, Any]:
    return {"id": invite.id, "email": invite.email, "role": invite.role,
            "created_at": invite.created_at, "expires_at": invite.expires_at,
            "expired": invite.expires_at <= utcnow()}


@blp.get("")
@blp.response(200, InviteListSchema)
def list_invites(project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    return {"items": [_view(i) for i in invites.list_invites(session(), project)]}


@blp.post("")
@blp.arguments(InviteCreateSchema)
@blp.response(201, InviteSchema)
def create_invite(data: dict[str, Any], project_id: int) -> Any:
    project, role = project_access(project_id, Role.admin)
    try:
        invite = invites.create_invite(session(), user(), role, project, data["email"],
                                       Role(data["role"]))
        commit()
    except IntegrityError as error:  # a concurrent request invited them first
        session().rollback()
        raise Conflict("That email is invited already", code="ALREADY_INVITED") from error
    return _view(invite)


@blp.delete("/<int:invite_id>")
@blp.response(204)
def revoke_invite(project_id: int, invite_id: int) -> Any:
    project, role = project_access(project_id, Role.admin)
    invites.revoke_invite(session(), user(), role, project, invite_id)
    commit()
    return None

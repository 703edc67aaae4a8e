"""Project members and their roles (admin and owner manage; the last owner stays)."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError

from assay.api import preconditions
from assay.api.base import (
    Blueprint,
    PageArgs,
    commit,
    page_dict,
    page_of,
    project_access,
    session,
    user,
)
from assay.api.members.schemas import MemberAddSchema, MemberRoleSchema, MemberSchema
from assay.core.projects import service as projects
from assay.core.projects.models import Membership, Role

blp = Blueprint("members", __name__, url_prefix="/api/projects/<int:project_id>/members",
                description="Project members")


def _view(member: Membership) -> dict[str, Any]:
    return {"user_id": member.user_id, "email": member.user.email, "name": member.user.name,
            "role": member.role, "created_at": member.created_at,
            "row_version": member.row_version}


@blp.get("")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(MemberSchema))
def list_members(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = projects.list_members(session(), project, args["page"], args["page_size"])
    return page_dict(page, [_view(m) for m in page.items])


@blp.post("")
@blp.arguments(MemberAddSchema)
@blp.response(201, MemberSchema)
def add_member(data: dict[str, Any], project_id: int) -> Any:
    project, role = project_access(project_id, Role.admin)
    try:
        member = projects.add_member(session(), user(), role, project, data["email"],
                                     Role(data["role"]))
        commit()
    except IntegrityError as error:  # a concurrent request added them first
        session().rollback()
        raise projects.already_member() from error
    return _view(member)


@blp.patch("/<int:user_id>")
@blp.arguments(MemberRoleSchema)
@blp.response(200, MemberSchema)
@preconditions.write()
def change_role(data: dict[str, Any], project_id: int, user_id: int) -> Any:
    """If-Match is the member's `row_version` in the members list."""
    project, role = project_access(project_id, Role.admin)
    member = projects.get_member(session(), project, user_id)
    preconditions.guard(member, lambda: _view(member))
    projects.change_role(session(), user(), role, project, user_id, Role(data["role"]))
    commit()
    return preconditions.tagged(_view(member), member)


@blp.delete("/<int:user_id>")
@blp.response(204)
def remove_member(project_id: int, user_id: int) -> Any:
    project, role = project_access(project_id, Role.admin)
    projects.remove_member(session(), user(), role, project, user_id)
    commit()
    return None

"""Projects: list, create, read, update, delete; and the project's audit trail."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError

from assay.api import preconditions
from assay.api.base import (
    Blueprint,
    PageArgs,
    commit,
    page_dict,
    page_of,
    project_access,
    runtime,
    session,
    user,
)
from assay.api.projects.schemas import (
    AuditEventSchema,
    ProjectCreateSchema,
    ProjectListArgs,
    ProjectSchema,
    ProjectUpdateSchema,
)
from assay.core.audit_text import describe
from assay.core.auth.models import User
from assay.core.pagination import paginate
from assay.core.projects import deletion
from assay.core.projects import service as projects
from assay.core.projects import settings as project_settings
from assay.core.projects.models import AuditEvent, Membership, Project, Role
from assay.jobs import stops

SLUG_ATTEMPTS = 5
AUDIT_FIELDS = ("id", "action", "actor_email", "target_type", "target_id", "data",
                "created_at")
blp = Blueprint("projects", __name__, url_prefix="/api/projects", description="Projects")


def _view(project: Project, role: str, members: int | None = None) -> dict[str, Any]:
    if members is None:
        members = session().scalar(select(func.count()).where(
            Membership.project_id == project.id)) or 0
    return {"id": project.id, "name": project.name, "slug": project.slug,
            "description": project.description, "role": role, "member_count": members,
            "created_at": project.created_at, "updated_at": project.updated_at,
            "row_version": project.row_version}


@blp.get("")
@blp.arguments(ProjectListArgs, location="query")
@blp.response(200, page_of(ProjectSchema))
def list_projects(args: dict[str, Any]) -> Any:
    page = projects.list_projects(session(), user(), args["page"], args["page_size"],
                                  args["q"], args["role"])
    return page_dict(page, [_view(p, role, n) for p, role, n in page.items])


@blp.post("")
@blp.arguments(ProjectCreateSchema)
@blp.response(201, ProjectSchema)
def create_project(data: dict[str, Any]) -> Any:
    for attempt in range(SLUG_ATTEMPTS):
        try:
            project = projects.create_project(session(), user(), data["name"],
                                              data["description"])
            commit()
            return _view(project, Role.owner, 1)
        except IntegrityError:  # a concurrent creation took the slug: pick the next one
            session().rollback()
            if attempt == SLUG_ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


@blp.get("/<int:project_id>")
@blp.response(200, ProjectSchema)
@preconditions.read()
def get_project(project_id: int) -> Any:
    """Its ETag is its settings' (GET .../settings): the name is one of them."""
    project, role = project_access(project_id, Role.viewer)
    return preconditions.tagged(_view(project, role), project)


@blp.patch("/<int:project_id>")
@blp.arguments(ProjectUpdateSchema)
@blp.response(200, ProjectSchema)
@preconditions.write()
def update_project(data: dict[str, Any], project_id: int) -> Any:
    project, role = project_access(project_id, Role.admin)
    preconditions.guard(project, lambda: _view(project, role))
    project_settings.update(session(), user(), project, data)
    commit()
    return preconditions.tagged(_view(project, role), project)


@blp.delete("/<int:project_id>")
@blp.response(204)
def delete_project(project_id: int) -> Any:
    project, _ = project_access(project_id, Role.owner)
    stopping = deletion.delete_project(session(), user(), project)
    commit()
    stops.stop_project(runtime(), stopping)  # its work in flight closes its calls
    return None


@blp.get("/<int:project_id>/audit")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(AuditEventSchema))
def audit_trail(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.admin)
    stmt = (select(AuditEvent).where(AuditEvent.project_id == project.id)
            .order_by(AuditEvent.id.desc()))
    page = paginate(session(), stmt, args["page"], args["page_size"])
    actors = {e.actor_id for e in page.items if e.actor_id is not None}
    names: dict[int, str | None] = {
        row.id: row.name for row in session().execute(
            select(User.id, User.name).where(User.id.in_(actors)))} if actors else {}
    return page_dict(page, [
        {**{c: getattr(e, c) for c in AUDIT_FIELDS},
         "description": describe(e, names.get(e.actor_id) if e.actor_id else None)}
        for e in page.items])

"""Projects and their members: creation with a unique slug, listing, roles, membership."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from sqlalchemy import Select, bindparam, delete, func, select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.auth.service import normalize_email
from assay.core.base import utcnow
from assay.core.datasets.models import Dataset, DatasetVersion, VersionCase
from assay.core.errors import Conflict, Forbidden, NotFound
from assay.core.llm.models import ModelConfig
from assay.core.pagination import Listing, Page, paginate
from assay.core.projects.models import Membership, Project, Role
from assay.core.runs.models import Run


def slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9\s-]", "", name.lower())
    slug = re.sub(r"-+", "-", re.sub(r"\s+", "-", slug.strip())).strip("-")[:50]
    return slug or "project"


def unique_slug(session: Session, name: str) -> str:
    base = slugify(name)
    taken = set(session.scalars(
        select(Project.slug).where((Project.slug == base) | Project.slug.like(f"{base}-%"))
    ))
    slug, counter = base, 1
    while slug in taken:
        slug, counter = f"{base}-{counter}", counter + 1
    return slug


def create_project(session: Session, owner: User, name: str,
                   description: str | None = None) -> Project:
    project = Project(name=name.strip(), slug=unique_slug(session, name),
                      description=description or None)
    session.add(project)
    session.flush()
    session.add(Membership(project_id=project.id, user_id=owner.id, role=Role.owner))
    audit.record(session, owner, "project.created", "project", project.id, project.id,
                 {"name": project.name, "slug": project.slug})
    return project


def touch(project: Project) -> None:
    project.updated_at = utcnow()


def list_projects(session: Session, user: User, page: int, page_size: int,
                  query: str | None = None, role: str | None = None) -> Page[Any]:
    """Rows of (project, the user's role, member count), most recently updated first."""
    params = {"user_id": user.id}
    if not query:
        return paginate(session, _projects(role), page, page_size, False, params=params)
    stmt = _projects_of(role).where(
        func.lower(Project.name).contains(query.lower(), autoescape=True))
    return paginate(session, stmt, page, page_size, False, params=params)


@lru_cache(maxsize=32)  # a few shapes; a value outside them is refused or finds nothing
def _projects(role: str | None) -> Listing:
    return Listing.of(_projects_of(role))


def _projects_of(role: str | None) -> Select[*tuple[Any, ...]]:
    counts = (select(Membership.project_id, func.count().label("n"))
              .group_by(Membership.project_id).subquery())
    stmt = (
        select(Project, Membership.role, counts.c.n)
        .join(Membership, Membership.project_id == Project.id)
        .join(counts, counts.c.project_id == Project.id)
        .where(Membership.user_id == bindparam("user_id"), Project.deleted_at.is_(None))
        .order_by(Project.updated_at.desc(), Project.id.desc())
    )
    return stmt.where(Membership.role == role) if role else stmt


def access(session: Session, user: User, project_id: int, needed: Role) -> tuple[Project, Role]:
    """A non-member learns nothing (404); a member below `needed` is refused (403)."""
    project, role = membership(session, user, project_id)
    require(role, needed)
    return project, role


def membership(session: Session, user: User, project_id: int) -> tuple[Project, Role]:
    """The project and the user's role in it; 404 for a non-member or a deleted project."""
    row = session.execute(
        select(Project, Membership.role)
        .join(Membership, Membership.project_id == Project.id)
        .where(Project.id == project_id, Membership.user_id == user.id,
               Project.deleted_at.is_(None))
    ).first()
    if row is None:
        raise NotFound("Project not found")
    return row[0], Role(row[1])


def require(role: Role, needed: Role) -> None:
    if not role.at_least(needed):
        raise Forbidden(f"This needs the {needed.value} role; you are {role.value}")


def purge_project(session: Session, project: Project) -> None:
    """Delete a project and everything in it, for good."""
    # Some references into the project's rows do not cascade (run_targets -> model_configs,
    # version_cases -> cases, model_configs -> credentials). SQLite checks them at the end of
    # the statement but PostgreSQL fails the cascade, so the referring rows go first.
    session.execute(delete(Run).where(Run.project_id == project.id))
    versions = (select(DatasetVersion.id).join(Dataset, Dataset.id == DatasetVersion.dataset_id)
                .where(Dataset.project_id == project.id))
    session.execute(delete(VersionCase).where(VersionCase.version_id.in_(versions)))
    session.execute(delete(ModelConfig).where(ModelConfig.project_id == project.id))
    session.delete(project)


def list_members(session: Session, project: Project, page: int, page_size: int) -> Page[Any]:
    stmt = (select(Membership).where(Membership.project_id == project.id)
            .order_by(Membership.created_at, Membership.id))
    return paginate(session, stmt, page, page_size)


def get_member(session: Session, project: Project, user_id: int) -> Membership:
    member = session.scalar(select(Membership).where(
        Membership.project_id == project.id, Membership.user_id == user_id))
    if member is None:
        raise NotFound("Member not found")
    return member


def _owner_count(session: Session, project: Project) -> int:
    return session.scalar(select(func.count()).where(
        Membership.project_id == project.id, Membership.role == Role.owner)) or 0


def check_grant(actor_role: Role, target_role: Role | None, new_role: Role | None) -> None:
    """Admins manage roles up to admin; only owners touch owners or make new ones."""
    if actor_role == Role.owner:
        return
    if target_role == Role.owner or new_role == Role.owner:
        raise Forbidden("Only an owner can grant, change or remove the owner role")


def already_member() -> Conflict:
    return Conflict("That user is already a member", code="ALREADY_MEMBER")


def add_member(session: Session, actor: User, actor_role: Role, project: Project,
               email: str, role: Role) -> Membership:
    check_grant(actor_role, None, role)
    user = session.scalar(select(User).where(User.email == normalize_email(email)))
    if user is None:
        raise NotFound("No user with that email. Ask them to register first.",
                       {"json": {"email": ["No user with that email"]}}, code="USER_NOT_FOUND")
    exists = session.scalar(select(Membership.id).where(
        Membership.project_id == project.id, Membership.user_id == user.id))
    if exists is not None:
        raise already_member()
    member = Membership(project_id=project.id, user_id=user.id, role=role, user=user)
    session.add(member)
    touch(project)
    audit.record(session, actor, "member.added", "user", user.id, project.id,
                 {"email": user.email, "role": role.value})
    session.flush()
    return member


def change_role(session: Session, actor: User, actor_role: Role, project: Project,
                user_id: int, role: Role) -> Membership:
    member = get_member(session, project, user_id)
    old = Role(member.role)
    check_grant(actor_role, old, role)
    if old == Role.owner and role != Role.owner and _owner_count(session, project) <= 1:
        raise Conflict("A project needs at least one owner", code="LAST_OWNER")
    member.role = role
    touch(project)
    audit.record(session, actor, "member.role_changed", "user", user_id, project.id,
                 {"before": old.value, "after": role.value})
    return member


def remove_member(session: Session, actor: User, actor_role: Role, project: Project,
                  user_id: int) -> None:
    member = get_member(session, project, user_id)
    check_grant(actor_role, Role(member.role), None)
    if member.role == Role.owner and _owner_count(session, project) <= 1:
        raise Conflict("The last owner cannot be removed", code="LAST_OWNER")
    session.delete(member)
    touch(project)
    audit.record(session, actor, "member.removed", "user", user_id, project.id,
                 {"role": member.role})

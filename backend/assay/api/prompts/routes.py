"""Prompts of a project, with immutable numbered versions a run renders for each case.
Viewers read; editors write."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError

from assay.api.base import Blueprint, commit, page_dict, page_of, project_access, session, user
from assay.api.prompts.schemas import (
    PageQuery,
    PromptCreateSchema,
    PromptDetailSchema,
    PromptListArgs,
    PromptSchema,
    PromptVersionSchema,
    VersionWriteSchema,
)
from assay.core.errors import Conflict
from assay.core.projects.models import Role
from assay.core.prompts import service
from assay.core.prompts.models import Prompt, PromptVersion

blp = Blueprint("prompts", __name__, url_prefix="/api/projects/<int:project_id>/prompts",
                description="Prompts and their immutable versions")
ONE = "/<int:prompt_id>"


def version_view(version: PromptVersion) -> dict[str, Any]:
    return {c: getattr(version, c) for c in PromptVersionSchema().fields}


def view(prompt: Prompt, latest: PromptVersion) -> dict[str, Any]:
    return {"id": prompt.id, "name": prompt.name, "description": prompt.description,
            "archived_at": prompt.archived_at, "created_at": prompt.created_at,
            "latest": version_view(latest)}


def detail(prompt: Prompt) -> dict[str, Any]:
    found = service.versions(session(), prompt)
    return {**view(prompt, found[0]), "versions": [version_view(v) for v in found]}


def _commit_unique(error: Conflict) -> None:
    try:
        commit()
    except IntegrityError as exc:  # a concurrent request took the name or number first
        session().rollback()
        raise error from exc


@blp.get("")
@blp.arguments(PromptListArgs, location="query")
@blp.response(200, page_of(PromptSchema))
def list_prompts(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = service.list_prompts(session(), project, args["page"], args["page_size"],
                                args["include_archived"])
    latest = service.latest_versions(session(), [p.id for p in page.items])
    return page_dict(page, [view(p, latest[p.id]) for p in page.items])


@blp.post("")
@blp.arguments(PromptCreateSchema)
@blp.response(201, PromptDetailSchema)
def create_prompt(data: dict[str, Any], project_id: int) -> Any:
    """The prompt with its version 1. Name unique per project (409 NAME_TAKEN)."""
    project, _ = project_access(project_id, Role.editor)
    prompt, _ = service.create_prompt(session(), user(), project, data)
    _commit_unique(service.name_taken())
    return detail(prompt)


@blp.get(ONE)
@blp.response(200, PromptDetailSchema)
def get_prompt(project_id: int, prompt_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    return detail(service.get_prompt(session(), project, prompt_id))


@blp.get(ONE + "/versions")
@blp.arguments(PageQuery, location="query")
@blp.response(200, page_of(PromptVersionSchema))
def list_versions(args: dict[str, Any], project_id: int, prompt_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    prompt = service.get_prompt(session(), project, prompt_id)
    page = service.list_versions(session(), prompt, args["page"], args["page_size"])
    return page_dict(page, [version_view(v) for v in page.items])


@blp.post(ONE + "/versions")
@blp.arguments(VersionWriteSchema)
@blp.response(201, PromptVersionSchema)
def add_version(data: dict[str, Any], project_id: int, prompt_id: int) -> Any:
    """A new immutable version, numbered after the latest; earlier ones never change."""
    project, _ = project_access(project_id, Role.editor)
    prompt = service.get_prompt(session(), project, prompt_id)
    version = service.add_version(session(), user(), project, prompt, data)
    _commit_unique(service.version_conflict())
    return version_view(version)

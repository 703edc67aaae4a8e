"""Prompts of a project, with immutable numbered versions a run renders for each case, their
lineage (each version's parent) and the one version marked for production. Viewers read;
editors write."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from assay.api import preconditions
from assay.api.base import Blueprint, commit, page_dict, page_of, project_access, session, user
from assay.api.prompts.schemas import (
    DiffArgs,
    DiffPreviewSchema,
    PageQuery,
    ProductionSchema,
    PromptCreateSchema,
    PromptDetailSchema,
    PromptDiffSchema,
    PromptListArgs,
    PromptSchema,
    PromptVersionSchema,
    TreeNodeSchema,
    VersionAddSchema,
)
from assay.core.errors import Conflict
from assay.core.projects.models import Role
from assay.core.prompts import compare, service
from assay.core.prompts.models import Prompt, PromptVersion

blp = Blueprint("prompts", __name__, url_prefix="/api/projects/<int:project_id>/prompts",
                description="Prompts and their immutable versions")
ONE = "/<int:prompt_id>"


VERSION_FIELDS = [c for c in PromptVersionSchema().fields if c != "author"]


def version_view(version: PromptVersion, authors: dict[int, str]) -> dict[str, Any]:
    return {**{c: getattr(version, c) for c in VERSION_FIELDS},
            "author": authors.get(version.created_by) if version.created_by else None}


def versions_view(found: list[PromptVersion]) -> list[dict[str, Any]]:
    authors = service.authors(session(), found)
    return [version_view(v, authors) for v in found]


def view(prompt: Prompt, latest: dict[str, Any], production: int | None) -> dict[str, Any]:
    return {"id": prompt.id, "name": prompt.name, "description": prompt.description,
            "archived_at": prompt.archived_at, "created_at": prompt.created_at,
            "latest": latest, "production_version_id": prompt.production_version_id,
            "production_number": production, "row_version": prompt.row_version}


def detail(prompt: Prompt) -> dict[str, Any]:
    found = versions_view(service.versions(session(), prompt))
    production = next((v["number"] for v in found if v["id"] == prompt.production_version_id),
                      None)
    return {**view(prompt, found[0], production), "versions": found}


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
    shown = dict(zip(latest, versions_view(list(latest.values())), strict=True))
    marked = [p.production_version_id for p in page.items if p.production_version_id]
    numbers = {row.id: row.number for row in session().execute(
        select(PromptVersion.id, PromptVersion.number).where(PromptVersion.id.in_(marked)))}
    return page_dict(page, [view(p, shown[p.id], numbers.get(p.production_version_id or 0))
                            for p in page.items])


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
@preconditions.read()
def get_prompt(project_id: int, prompt_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    prompt = service.get_prompt(session(), project, prompt_id)
    return preconditions.tagged(detail(prompt), prompt)


@blp.get(ONE + "/versions")
@blp.arguments(PageQuery, location="query")
@blp.response(200, page_of(PromptVersionSchema))
def list_versions(args: dict[str, Any], project_id: int, prompt_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    prompt = service.get_prompt(session(), project, prompt_id)
    page = service.list_versions(session(), prompt, args["page"], args["page_size"])
    return page_dict(page, versions_view(page.items))


@blp.post(ONE + "/versions")
@blp.arguments(VersionAddSchema)
@blp.response(201, PromptVersionSchema)
@preconditions.write(201)
def add_version(data: dict[str, Any], project_id: int, prompt_id: int) -> Any:
    """A new immutable version, numbered after the latest, edited from `parent_id` (the latest
    when omitted), with a changelog of 10-500 characters; earlier versions never change.
    If-Match is the prompt's ETag: a save based on an older state is refused."""
    project, _ = project_access(project_id, Role.editor)
    prompt = service.get_prompt(session(), project, prompt_id)
    preconditions.guard(prompt, lambda: detail(prompt))
    version = service.add_version(session(), user(), project, prompt, data)
    _commit_unique(service.version_conflict())
    return preconditions.tagged(versions_view([version])[0], prompt)


@blp.get(ONE + "/versions/<int:prompt_version_id>/lineage")
@blp.arguments(PageQuery, location="query")
@blp.response(200, page_of(PromptVersionSchema))
def lineage(args: dict[str, Any], project_id: int, prompt_id: int,
            prompt_version_id: int) -> Any:
    """The version and the chain of parents it was edited from, oldest first."""
    project, _ = project_access(project_id, Role.viewer)
    prompt = service.get_prompt(session(), project, prompt_id)
    chain = service.lineage(session(), prompt, prompt_version_id)
    start = (args["page"] - 1) * args["page_size"]
    shown = chain[start:start + args["page_size"]]
    return {"items": versions_view(shown), "total": len(chain), "page": args["page"],
            "page_size": args["page_size"]}


@blp.put(ONE + "/production")
@blp.arguments(ProductionSchema)
@blp.response(200, PromptDetailSchema)
@preconditions.write()
def set_production(data: dict[str, Any], project_id: int, prompt_id: int) -> Any:
    """Mark one version for production; the version marked before is unmarked (one per
    prompt). Audited as prompt.production_set."""
    project, _ = project_access(project_id, Role.editor)
    prompt = service.get_prompt(session(), project, prompt_id)
    preconditions.guard(prompt, lambda: detail(prompt))
    service.set_production(session(), user(), project, prompt, data["version_id"])
    commit()
    return preconditions.tagged(detail(prompt), prompt)


@blp.get(ONE + "/diff")
@blp.arguments(DiffArgs, location="query")
@blp.response(200, PromptDiffSchema)
def diff_versions(args: dict[str, Any], project_id: int, prompt_id: int) -> Any:
    """A unified diff between any two versions (system text and template)."""
    project, _ = project_access(project_id, Role.viewer)
    prompt = service.get_prompt(session(), project, prompt_id)
    return compare.diff(session(), prompt, args["from_id"], args["to_id"])


@blp.post(ONE + "/diff-preview")
@blp.arguments(DiffPreviewSchema)
@blp.response(200, PromptDiffSchema)
def preview_diff(data: dict[str, Any], project_id: int, prompt_id: int) -> Any:
    """What saving this edit as a new version would change, against its parent; nothing is
    written."""
    project, _ = project_access(project_id, Role.editor)
    prompt = service.get_prompt(session(), project, prompt_id)
    return compare.preview(session(), prompt, data)


@blp.get(ONE + "/tree")
@blp.response(200, TreeNodeSchema(many=True))
def version_tree(project_id: int, prompt_id: int) -> Any:
    """Every version, oldest first, with who made it, its changelog, its children and the
    production mark."""
    project, _ = project_access(project_id, Role.viewer)
    prompt = service.get_prompt(session(), project, prompt_id)
    nodes = compare.tree(session(), prompt)
    shown = versions_view([n["version"] for n in nodes])
    return [{**view, "children": n["children"], "is_production": n["is_production"]}
            for view, n in zip(shown, nodes, strict=True)]

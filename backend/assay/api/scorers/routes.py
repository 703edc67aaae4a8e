"""Scorers of a project, with immutable numbered versions a run pins, and the scorer kinds
Assay knows. Viewers read; editors write."""

from __future__ import annotations

from dataclasses import asdict
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
    runtime,
    session,
    user,
)
from assay.api.scorers.schemas import (
    JudgePromptSchema,
    PreviewRequestSchema,
    ScorerCreateSchema,
    ScorerDetailSchema,
    ScorerKindArgs,
    ScorerKindSchema,
    ScorerListArgs,
    ScorerSchema,
    ScorerVersionSchema,
    ScorerVersionWriteSchema,
    TrialSchema,
    TryRequestSchema,
)
from assay.api.slow_lane import slow_work
from assay.core.errors import Conflict
from assay.core.projects.models import Role
from assay.core.scoring import service, trial
from assay.core.scoring.kinds import known_kinds
from assay.core.scoring.models import ScorerConfig, ScorerVersion

blp = Blueprint("scorers", __name__, url_prefix="/api/projects/<int:project_id>/scorers",
                description="Scorers and their immutable versions")
kinds_blp = Blueprint("scorer_kinds", __name__, url_prefix="/api",
                      description="The scorer kinds a scorer can be")
ONE = "/<int:scorer_id>"
VERSION_FIELDS = tuple(ScorerVersionSchema().fields)


def version_view(version: ScorerVersion) -> dict[str, Any]:
    return {c: getattr(version, c) for c in VERSION_FIELDS}


def view(scorer: ScorerConfig, latest: ScorerVersion) -> dict[str, Any]:
    return {"id": scorer.id, "name": scorer.name, "kind": scorer.kind,
            "description": scorer.description, "archived_at": scorer.archived_at,
            "created_at": scorer.created_at, "latest": version_view(latest),
            "row_version": scorer.row_version}


def detail(scorer: ScorerConfig) -> dict[str, Any]:
    found = service.versions(session(), scorer)
    return {**view(scorer, found[0]), "versions": [version_view(v) for v in found]}


def _commit_unique(error: Conflict) -> None:
    try:
        commit()
    except IntegrityError as exc:  # a concurrent request took the name or number first
        session().rollback()
        raise error from exc


@kinds_blp.get("/scorer-kinds")
@kinds_blp.arguments(ScorerKindArgs, location="query")
@kinds_blp.response(200, ScorerKindSchema(many=True))
def list_scorer_kinds(args: dict[str, Any]) -> Any:
    """Every kind a scorer can be, with what it checks and the JSON Schema of its params
    (any signed-in user; with project_id, a member of that project)."""
    user()
    code_execution = None
    if args["project_id"] is not None:
        project, _ = project_access(args["project_id"], Role.viewer)
        code_execution = bool((project.settings or {}).get("code_execution"))
    return [asdict(kind) for kind in known_kinds(code_execution)]


@blp.post("/preview")
@blp.arguments(PreviewRequestSchema)
@blp.response(200, JudgePromptSchema)
def preview_judge_prompt(data: dict[str, Any], project_id: int) -> Any:
    """The judge prompt these (unsaved) params would send for a sample output, rendered by
    the scorer itself. Calls nothing and costs nothing (422 for kinds without judges)."""
    project_access(project_id, Role.viewer)
    second = trial.sample_subject(data["second"]) if data["second"] else None
    return trial.preview(data["kind"], data["params"], trial.sample_subject(data["sample"]),
                         second)


@blp.post("/try")
@blp.arguments(TryRequestSchema)
@blp.response(200, TrialSchema)
@slow_work
def try_scorer(data: dict[str, Any], project_id: int) -> Any:
    """Score one output (a run's, or pasted text) with these params through the real
    judges. Records no score; the judge calls' cost is added to the project's spend.
    Bounded by ASSAY_SLOW_DEADLINE_S: past it the result carries the error."""
    project, _ = project_access(project_id, Role.editor)
    subject = (trial.output_subject(session(), project, data["output_id"])
               if data["output_id"] is not None else trial.sample_subject(data["sample"]))
    settings = runtime().settings
    found = trial.try_scorer(session(), user(), project, data["kind"], data["params"],
                             subject, settings.secret_key, settings.url_policy,
                             data["output_id"], settings.slow_deadline_s)
    commit()
    return found


@blp.get("")
@blp.arguments(ScorerListArgs, location="query")
@blp.response(200, page_of(ScorerSchema))
def list_scorers(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = service.list_scorers(session(), project, args["page"], args["page_size"],
                                args["include_archived"], args["kind"])
    latest = service.latest_versions(session(), [s.id for s in page.items])
    return page_dict(page, [view(s, latest[s.id]) for s in page.items])


@blp.post("")
@blp.arguments(ScorerCreateSchema)
@blp.response(201, ScorerDetailSchema)
def create_scorer(data: dict[str, Any], project_id: int) -> Any:
    """The scorer with its version 1. Name unique per project (409 NAME_TAKEN); params
    checked by the kind (422 with errors under params.<field>, or kind)."""
    project, _ = project_access(project_id, Role.editor)
    scorer, _ = service.create_scorer(session(), user(), project, data)
    _commit_unique(service.name_taken())
    return detail(scorer)


@blp.get(ONE)
@blp.response(200, ScorerDetailSchema)
@preconditions.read()
def get_scorer(project_id: int, scorer_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    scorer = service.get_scorer(session(), project, scorer_id)
    return preconditions.tagged(detail(scorer), scorer)


@blp.get(ONE + "/versions")
@blp.arguments(PageArgs, location="query")
@blp.response(200, page_of(ScorerVersionSchema))
def list_versions(args: dict[str, Any], project_id: int, scorer_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    scorer = service.get_scorer(session(), project, scorer_id)
    page = service.list_versions(session(), scorer, args["page"], args["page_size"])
    return page_dict(page, [version_view(v) for v in page.items])


@blp.post(ONE + "/versions")
@blp.arguments(ScorerVersionWriteSchema)
@blp.response(201, ScorerVersionSchema)
@preconditions.write(201)
def add_version(data: dict[str, Any], project_id: int, scorer_id: int) -> Any:
    """A new immutable version, numbered after the latest; runs and scores keep theirs.
    If-Match is the scorer's ETag: an edit of an older latest version is refused."""
    project, _ = project_access(project_id, Role.editor)
    scorer = service.get_scorer(session(), project, scorer_id)
    preconditions.guard(scorer, lambda: detail(scorer))
    version = service.add_version(session(), user(), project, scorer, data)
    _commit_unique(service.version_conflict())
    return preconditions.tagged(version_view(version), scorer)


def _set_archived(project_id: int, scorer_id: int, archived: bool) -> dict[str, Any]:
    project, _ = project_access(project_id, Role.editor)
    scorer = service.get_scorer(session(), project, scorer_id)
    service.set_archived(session(), user(), project, scorer, archived)
    commit()
    return detail(scorer)


@blp.post(ONE + "/archive")
@blp.response(200, ScorerDetailSchema)
def archive_scorer(project_id: int, scorer_id: int) -> Any:
    """Hidden from lists and refused for new runs; runs and scores keep it."""
    return _set_archived(project_id, scorer_id, True)


@blp.post(ONE + "/restore")
@blp.response(200, ScorerDetailSchema)
def restore_scorer(project_id: int, scorer_id: int) -> Any:
    return _set_archived(project_id, scorer_id, False)

"""Scorer configs and their immutable, numbered versions. Params are validated by the
kind's own class (assay.scorers) before anything is written."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core import versions as versions_
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.errors import Conflict, Invalid, NotFound
from assay.core.pagination import Page, paginate
from assay.core.projects.models import Project
from assay.core.scoring.models import RunScorer, ScorerConfig, ScorerVersion
from assay.scorers import registry
from assay.scorers.base import ParamsError, Scorer
from assay.scorers.rules_dsl import RulesError


def check_params(kind: str, params: Mapping[str, Any] | None) -> Scorer:
    """The scorer these params build, or a 422 naming each bad field under `params.`."""
    try:
        return registry.build(kind, params)
    except ParamsError as exc:
        errors = {("kind" if key == "kind" else f"params.{key}"): messages
                  for key, messages in exc.errors.items()}
        body: dict[str, Any] = {"json": errors}
        if isinstance(exc, RulesError):  # the editor marks each problem where it is
            body["positions"] = {"params.yaml": [dict(p) for p in exc.problems]}
        raise Invalid("The scorer is not valid", body) from exc


def version_conflict() -> Conflict:
    return Conflict("The scorer changed meanwhile; reload and try again",
                    code="VERSION_CONFLICT")


def name_taken() -> Conflict:
    return Conflict("A scorer with this name already exists in the project",
                    {"json": {"name": ["Name already in use"]}}, code="NAME_TAKEN")


def list_scorers(session: Session, project: Project, page: int, page_size: int,
                 include_archived: bool = False, kind: str | None = None) -> Page[Any]:
    stmt = select(ScorerConfig).where(ScorerConfig.project_id == project.id)
    if not include_archived:
        stmt = stmt.where(ScorerConfig.archived_at.is_(None))
    if kind:
        stmt = stmt.where(ScorerConfig.kind == kind)
    return paginate(session, stmt.order_by(ScorerConfig.id.desc()), page, page_size)


def get_scorer(session: Session, project: Project, scorer_id: int) -> ScorerConfig:
    scorer = session.get(ScorerConfig, scorer_id)
    if scorer is None or scorer.project_id != project.id:
        raise NotFound("Scorer not found")
    return scorer


def latest_versions(session: Session, scorer_ids: list[int]) -> dict[int, ScorerVersion]:
    return versions_.latest_versions(session, ScorerVersion, ScorerVersion.scorer_id, scorer_ids)


def versions(session: Session, scorer: ScorerConfig) -> list[ScorerVersion]:
    """Every version, newest first."""
    return list(session.scalars(select(ScorerVersion).where(
        ScorerVersion.scorer_id == scorer.id).order_by(ScorerVersion.number.desc())))


def pinned(session: Session,
           run_ids: list[int]) -> dict[int, list[tuple[ScorerConfig, ScorerVersion]]]:
    """Each run's scorers, at the versions it pinned, in their order."""
    out: dict[int, list[tuple[ScorerConfig, ScorerVersion]]] = {r: [] for r in run_ids}
    if not run_ids:
        return out
    rows = session.execute(
        select(RunScorer.run_id, ScorerConfig, ScorerVersion)
        .join(ScorerVersion, ScorerVersion.id == RunScorer.scorer_version_id)
        .join(ScorerConfig, ScorerConfig.id == ScorerVersion.scorer_id)
        .where(RunScorer.run_id.in_(run_ids))
        .order_by(RunScorer.run_id, RunScorer.position))
    for run_id, config, version in rows:
        out[run_id].append((config, version))
    return out


def list_versions(session: Session, scorer: ScorerConfig, page: int,
                  page_size: int) -> Page[Any]:
    stmt = (select(ScorerVersion).where(ScorerVersion.scorer_id == scorer.id)
            .order_by(ScorerVersion.number.desc()))
    return paginate(session, stmt, page, page_size)


def versions_in_project(session: Session, project: Project,
                        version_ids: list[int]) -> dict[int, tuple[ScorerConfig, ScorerVersion]]:
    rows = session.execute(select(ScorerConfig, ScorerVersion).join(
        ScorerVersion, ScorerVersion.scorer_id == ScorerConfig.id).where(
        ScorerVersion.id.in_(version_ids), ScorerConfig.project_id == project.id)).all()
    return {v.id: (c, v) for c, v in rows}


def create_scorer(session: Session, actor: User | None, project: Project,
                  data: Mapping[str, Any]) -> tuple[ScorerConfig, ScorerVersion]:
    """A scorer and its version 1. Name unique per project (409 NAME_TAKEN)."""
    name, kind = str(data["name"]).strip(), str(data["kind"])
    params = dict(data.get("params") or {})
    check_params(kind, params)
    if session.scalar(select(ScorerConfig.id).where(ScorerConfig.project_id == project.id,
                                                    ScorerConfig.name == name)) is not None:
        raise name_taken()
    scorer = ScorerConfig(project_id=project.id, name=name, kind=kind,
                          description=data.get("description"))
    session.add(scorer)
    try:
        session.flush()
    except IntegrityError as exc:
        session.rollback()
        raise name_taken() from exc
    version = ScorerVersion(scorer_id=scorer.id, number=1, params=params,
                            note=data.get("note"), created_by=actor.id if actor else None)
    session.add(version)
    session.flush()
    audit.record(session, actor, "scorer.created", "scorer", scorer.id, project.id,
                 {"name": name, "kind": kind, "version": 1})
    return scorer, version


def add_version(session: Session, actor: User | None, project: Project, scorer: ScorerConfig,
                data: Mapping[str, Any]) -> ScorerVersion:
    """A new immutable version numbered after the latest; earlier scores keep theirs."""
    params = dict(data.get("params") or {})
    check_params(scorer.kind, params)
    session.execute(select(ScorerConfig.id).where(ScorerConfig.id == scorer.id)
                    .with_for_update())
    number = (session.scalar(select(func.max(ScorerVersion.number)).where(
        ScorerVersion.scorer_id == scorer.id)) or 0) + 1
    version = ScorerVersion(scorer_id=scorer.id, number=number, params=params,
                            note=data.get("note"), created_by=actor.id if actor else None)
    session.add(version)
    try:
        session.flush()
    except IntegrityError as exc:  # a concurrent request took this number first
        session.rollback()
        raise version_conflict() from exc
    audit.record(session, actor, "scorer.version_added", "scorer", scorer.id, project.id,
                 {"version": number})
    return version


def set_archived(session: Session, actor: User | None, project: Project,
                 scorer: ScorerConfig, archived: bool) -> ScorerConfig:
    """Idempotent: archiving an archived scorer keeps its date and records nothing."""
    if (scorer.archived_at is not None) != archived:
        scorer.archived_at = utcnow() if archived else None
        audit.record(session, actor, "scorer.archived" if archived else "scorer.restored",
                     "scorer", scorer.id, project.id, {})
    return scorer

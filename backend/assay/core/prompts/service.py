"""Prompts and their immutable, numbered versions. A version's `variables` are parsed from
its template and system text on save: `{{name}}` (spaces inside the braces allowed), names
like Python identifiers. Every version after the first names the version it was edited from
(its parent) and says why in a changelog (`note`, 10-500 characters); one version per prompt
is marked for production."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core import versions as versions_
from assay.core.auth.models import User
from assay.core.errors import Conflict, Invalid, NotFound
from assay.core.pagination import Page, paginate
from assay.core.projects.models import Project
from assay.core.prompts import tools as tools_
from assay.core.prompts.models import Prompt, PromptVersion
from assay.core.prompts.placeholders import PLACEHOLDER as PLACEHOLDER  # re-exported
from assay.core.prompts.placeholders import parse_variables
from assay.core.prompts.placeholders import render as render  # re-exported

# Sized so the largest valid version fits the 1 MB request limit even fully \u-escaped.
MAX_TEMPLATE = 40_000
MAX_SYSTEM = 20_000
MAX_FEW_SHOTS = 10
MAX_SHOT = 4_000
CHANGELOG_MIN, CHANGELOG_MAX = 10, 500


def few_shot_errors(few_shots: Any) -> dict[str, list[str]]:
    """Field -> reasons for a list of {input, output} examples; empty when valid."""
    if not isinstance(few_shots, list):
        return {"few_shots": ["Must be a list of {input, output} examples."]}
    if len(few_shots) > MAX_FEW_SHOTS:
        return {"few_shots": [f"At most {MAX_FEW_SHOTS} examples."]}
    errors: dict[str, list[str]] = {}
    for index, shot in enumerate(few_shots):
        where = f"few_shots[{index}]"
        if not isinstance(shot, dict) or set(shot) != {"input", "output"}:
            errors[where] = ["Must be {\"input\": text, \"output\": text}."]
            continue
        for key in ("input", "output"):
            value = shot[key]
            if not isinstance(value, str) or not value.strip():
                errors.setdefault(where, []).append(f"{key} must be non-empty text.")
            elif len(value) > MAX_SHOT:
                errors.setdefault(where, []).append(
                    f"{key} is longer than {MAX_SHOT} characters.")
    return errors


def changelog_errors(note: Any, required: bool) -> dict[str, list[str]]:
    """A new version says why it exists; the first version's note is free (up to 500)."""
    if not required:
        return {}
    text = note.strip() if isinstance(note, str) else ""
    if not CHANGELOG_MIN <= len(text) <= CHANGELOG_MAX:
        return {"note": [f"The changelog must be {CHANGELOG_MIN}-{CHANGELOG_MAX} characters "
                         "(without surrounding spaces)."]}
    return {}


def _check_version(data: Mapping[str, Any], changelog_required: bool) -> dict[str, Any]:
    template, system = data.get("template"), data.get("system")
    errors: dict[str, list[str]] = changelog_errors(data.get("note"), changelog_required)
    if not isinstance(template, str) or not template.strip():
        errors["template"] = ["The template must be non-empty text."]
    elif len(template) > MAX_TEMPLATE:
        errors["template"] = [f"At most {MAX_TEMPLATE} characters."]
    if system is not None and (not isinstance(system, str) or len(system) > MAX_SYSTEM):
        errors["system"] = [f"Text of at most {MAX_SYSTEM} characters, or null."]
    few_shots = data.get("few_shots") or []
    errors.update(few_shot_errors(few_shots))
    tools = data.get("tools") or []
    errors.update(tools_.tool_errors(tools))
    if errors:
        raise Invalid("The prompt version is not valid", {"json": errors})
    system = system if system and system.strip() else None
    note = data.get("note")
    return {"template": template, "system": system,
            "few_shots": [{"input": s["input"], "output": s["output"]} for s in few_shots],
            "tools": tools_.clean(tools), "variables": parse_variables(template, system),
            "note": note.strip() if isinstance(note, str) and note.strip() else None}


def name_taken() -> Conflict:
    return Conflict("A prompt with this name already exists in the project",
                    {"json": {"name": ["Name already in use"]}}, code="NAME_TAKEN")


def list_prompts(session: Session, project: Project, page: int, page_size: int,
                 include_archived: bool = False) -> Page[Any]:
    stmt = select(Prompt).where(Prompt.project_id == project.id)
    if not include_archived:
        stmt = stmt.where(Prompt.archived_at.is_(None))
    return paginate(session, stmt.order_by(Prompt.id.desc()), page, page_size)


def get_prompt(session: Session, project: Project, prompt_id: int) -> Prompt:
    prompt = session.get(Prompt, prompt_id)
    if prompt is None or prompt.project_id != project.id:
        raise NotFound("Prompt not found")
    return prompt


def latest_versions(session: Session, prompt_ids: list[int]) -> dict[int, PromptVersion]:
    return versions_.latest_versions(session, PromptVersion, PromptVersion.prompt_id, prompt_ids)


def versions(session: Session, prompt: Prompt) -> list[PromptVersion]:
    return list(session.scalars(select(PromptVersion).where(
        PromptVersion.prompt_id == prompt.id).order_by(PromptVersion.number.desc())))


def list_versions(session: Session, prompt: Prompt, page: int, page_size: int) -> Page[Any]:
    stmt = (select(PromptVersion).where(PromptVersion.prompt_id == prompt.id)
            .order_by(PromptVersion.number.desc()))
    return paginate(session, stmt, page, page_size)


def version_in_project(session: Session, project: Project,
                       version_id: int) -> tuple[Prompt, PromptVersion] | None:
    row = session.execute(select(Prompt, PromptVersion).join(
        PromptVersion, PromptVersion.prompt_id == Prompt.id).where(
        PromptVersion.id == version_id, Prompt.project_id == project.id)).first()
    return None if row is None else (row[0], row[1])


def create_prompt(session: Session, actor: User | None, project: Project,
                  data: Mapping[str, Any], production: bool = True
                  ) -> tuple[Prompt, PromptVersion]:
    """A prompt and its version 1, marked for production unless `production` is False (an
    experiment's seed: nobody chose to ship it; set_production marks it, audited). Name
    unique per project (409 NAME_TAKEN)."""
    name = str(data["name"]).strip()
    fields = _check_version(data, changelog_required=False)
    if session.scalar(select(Prompt.id).where(Prompt.project_id == project.id,
                                              Prompt.name == name)) is not None:
        raise name_taken()
    prompt = Prompt(project_id=project.id, name=name, description=data.get("description"))
    session.add(prompt)
    try:
        session.flush()
    except IntegrityError as exc:
        session.rollback()
        raise name_taken() from exc
    version = PromptVersion(prompt_id=prompt.id, number=1,
                            created_by=actor.id if actor else None, **fields)
    session.add(version)
    session.flush()
    if production:  # a prompt made by hand starts with its version 1 in production
        prompt.production_version_id = version.id
    audit.record(session, actor, "prompt.created", "prompt", prompt.id, project.id,
                 {"name": name, "version": 1, "variables": fields["variables"]})
    return prompt, version


def version_conflict() -> Conflict:
    return Conflict("The prompt changed meanwhile; reload and try again",
                    code="VERSION_CONFLICT")


def add_version(session: Session, actor: User | None, project: Project, prompt: Prompt,
                data: Mapping[str, Any]) -> PromptVersion:
    """A new immutable version numbered after the latest, edited from `parent_id` (the
    latest when not given) and with a changelog."""
    fields = _check_version(data, changelog_required=True)
    session.execute(select(Prompt.id).where(Prompt.id == prompt.id).with_for_update())
    parent = _parent(session, prompt, data.get("parent_id"))
    number = (session.scalar(select(func.max(PromptVersion.number)).where(
        PromptVersion.prompt_id == prompt.id)) or 0) + 1
    version = PromptVersion(prompt_id=prompt.id, number=number, parent_id=parent.id,
                            created_by=actor.id if actor else None, **fields)
    session.add(version)
    try:
        session.flush()
    except IntegrityError as exc:  # a concurrent request took this number first
        session.rollback()
        raise version_conflict() from exc
    audit.record(session, actor, "prompt.version_added", "prompt", prompt.id, project.id,
                 {"version": number, "parent": parent.number, "changelog": fields["note"],
                  "variables": fields["variables"]})
    return version


def _parent(session: Session, prompt: Prompt, parent_id: Any) -> PromptVersion:
    if parent_id is None:
        latest = latest_versions(session, [prompt.id]).get(prompt.id)
        if latest is None:  # every prompt is created with its version 1
            raise NotFound("Prompt has no versions")
        return latest
    parent = session.get(PromptVersion, parent_id)
    if parent is None or parent.prompt_id != prompt.id:
        raise Invalid("The parent is not a version of this prompt",
                      {"json": {"parent_id": ["Not a version of this prompt"]}})
    return parent


def set_production(session: Session, actor: User | None, project: Project, prompt: Prompt,
                   version_id: int) -> None:
    """Mark one version for production; the one marked before is unmarked by the same write.
    Marking the version already marked changes and records nothing."""
    session.execute(select(Prompt.id).where(Prompt.id == prompt.id).with_for_update())
    session.refresh(prompt)
    version = session.get(PromptVersion, version_id)
    if version is None or version.prompt_id != prompt.id:
        raise Invalid("Not a version of this prompt",
                      {"json": {"version_id": ["Not a version of this prompt"]}})
    previous = prompt.production_version_id
    if previous == version.id:
        return
    before = session.get(PromptVersion, previous) if previous is not None else None
    prompt.production_version_id = version.id
    session.flush()
    audit.record(session, actor, "prompt.production_set", "prompt", prompt.id, project.id,
                 {"version": version.number,
                  "previous": before.number if before is not None else None})


def lineage(session: Session, prompt: Prompt, version_id: int) -> list[PromptVersion]:
    """The version and its ancestors through `parent_id`, oldest first."""
    by_id = {v.id: v for v in versions(session, prompt)}
    current = by_id.get(version_id)
    if current is None:
        raise NotFound("Prompt version not found")
    chain: list[PromptVersion] = []
    while current is not None and current not in chain:  # parents are older: no cycles
        chain.append(current)
        current = by_id.get(current.parent_id) if current.parent_id is not None else None
    return chain[::-1]


def authors(session: Session, found: list[PromptVersion]) -> dict[int, str]:
    """User id -> the name (or email) shown as a version's author."""
    ids = {v.created_by for v in found if v.created_by is not None}
    if not ids:
        return {}
    return {u.id: u.name or u.email for u in session.scalars(select(User).where(
        User.id.in_(ids)))}

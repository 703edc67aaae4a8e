"""Model configurations of a project: named, priced models on a credential.

Prices are integer micro-dollars per million tokens; None means "no price set", which is
flagged wherever cost is shown and never counted as free. A model used by a run is
archived, not deleted, so history keeps pointing at it.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.base import utcnow
from assay.core.errors import Conflict, Invalid, NotFound
from assay.core.llm import kinds as kinds_
from assay.core.llm.models import Credential, ModelConfig
from assay.core.llm.params import validate_params
from assay.core.pagination import Listing, Page, paginate
from assay.core.projects.models import Project
from assay.core.runs.models import RunTarget

FAKE_KIND = kinds_.FAKE
DEMO_CREDENTIAL_LABEL = "Fake provider (demo)"
DEMO_MODELS = [
    # name, provider model id, $ per million tokens in/out (as micro-dollars)
    ("Fake Fast", "fake-fast", 150_000, 600_000),
    ("Fake Smart", "fake-smart", 3_000_000, 15_000_000),
]
# the seeded tour's third model under test and its judge (not in "Start demo run")
TOUR_MODELS = [("Fake Mini", "fake-mini", 100_000, 400_000)]
JUDGE_MODEL = ("Fake Judge", "fake-judge", 500_000, 1_500_000)
FIELDS = ("name", "credential_id", "model", "input_price_per_mtok_micros",
          "output_price_per_mtok_micros", "context_window", "params")


def priced(model: ModelConfig) -> bool:
    return (model.input_price_per_mtok_micros is not None
            and model.output_price_per_mtok_micros is not None)


def list_models(session: Session, project: Project, page: int, page_size: int,
                include_archived: bool = False) -> Page[Any]:
    return paginate(session, _models(include_archived), page, page_size,
                    params={"project_id": project.id})


@lru_cache(maxsize=2)
def _models(include_archived: bool) -> Listing:
    stmt = select(ModelConfig).where(ModelConfig.project_id == bindparam("project_id"))
    if not include_archived:
        stmt = stmt.where(ModelConfig.archived_at.is_(None))
    return Listing.of(stmt.order_by(ModelConfig.id))


def get_model(session: Session, project: Project, model_id: int) -> ModelConfig:
    model = session.get(ModelConfig, model_id)
    if model is None or model.project_id != project.id:
        raise NotFound("Model not found")
    return model


def models_by_id(session: Session, project: Project, ids: list[int]) -> list[ModelConfig]:
    """The project's models with these ids, for a new run: archived ones are refused."""
    found = {m.id: m for m in session.scalars(select(ModelConfig).where(
        ModelConfig.project_id == project.id, ModelConfig.id.in_(ids)))}
    problems = [f"No model {i} in this project" for i in ids if i not in found]
    problems += [f"Model {i} ({found[i].name}) is archived: restore it to use it"
                 for i in ids if i in found and found[i].archived_at is not None]
    if problems:
        raise Invalid("Unknown or archived models", {"json": {"model_ids": problems}})
    return [found[i] for i in ids]


def run_count(session: Session, model: ModelConfig) -> int:
    return session.scalar(select(func.count(func.distinct(RunTarget.run_id)))
                          .where(RunTarget.model_id == model.id)) or 0


def _credential(session: Session, project: Project, credential_id: int) -> Credential:
    credential = session.get(Credential, credential_id)
    if credential is None or credential.project_id != project.id:
        raise Invalid("Unknown credential", {"json": {"credential_id": [
            f"No credential {credential_id} in this project"]}})
    return credential


def _check_name(session: Session, project: Project, name: str,
                exclude: int | None = None) -> None:
    stmt = select(ModelConfig.id).where(ModelConfig.project_id == project.id,
                                        ModelConfig.name == name)
    if exclude is not None:
        stmt = stmt.where(ModelConfig.id != exclude)
    if session.scalar(stmt) is not None:
        raise name_taken()


def name_taken() -> Conflict:
    return Conflict("A model with this name already exists in the project (archived ones "
                    "included)", {"json": {"name": ["Name already in use"]}}, code="NAME_TAKEN")


def _params(credential: Credential, params: dict[str, Any],
            context_window: int | None) -> dict[str, Any]:
    family = kinds_.get_kind(credential.kind).params_family
    return validate_params(family, params, context_window)


def _public(model: ModelConfig) -> dict[str, Any]:
    return {name: getattr(model, name) for name in FIELDS}


def create_model(session: Session, actor: User | None, project: Project,
                 data: dict[str, Any]) -> ModelConfig:
    name = data["name"].strip()
    _check_name(session, project, name)
    credential = _credential(session, project, data["credential_id"])
    context_window = data.get("context_window")
    params = _params(credential, data.get("params") or {}, context_window)
    model = ModelConfig(project_id=project.id, credential_id=credential.id, name=name,
                        model=data["model"].strip(), context_window=context_window,
                        input_price_per_mtok_micros=data.get("input_price_per_mtok_micros"),
                        output_price_per_mtok_micros=data.get("output_price_per_mtok_micros"),
                        params=params, credential=credential)
    session.add(model)
    session.flush()
    audit.record(session, actor, "model.created", "model", model.id, project.id,
                 {**_public(model), "priced": priced(model)})
    return model


def update_model(session: Session, actor: User, project: Project, model: ModelConfig,
                 changes: dict[str, Any]) -> ModelConfig:
    changes = {k: (v.strip() if k in ("name", "model") else v) for k, v in changes.items()}
    credential = model.credential
    if "credential_id" in changes:
        credential = _credential(session, project, changes["credential_id"])
    if "name" in changes and changes["name"] != model.name:
        _check_name(session, project, changes["name"], exclude=model.id)
    merged = {**_public(model), **changes}
    if "params" in changes or "credential_id" in changes or "context_window" in changes:
        changes["params"] = _params(credential, merged["params"] or {},
                                    merged["context_window"])
    changes = {k: v for k, v in changes.items() if getattr(model, k) != v}
    if not changes:  # nothing to change: no write, no audit event
        return model
    before = {k: getattr(model, k) for k in changes}
    for key, value in changes.items():
        setattr(model, key, value)
    model.credential = credential
    model.updated_at = utcnow()
    audit.record(session, actor, "model.updated", "model", model.id, project.id,
                 {"before": before, "after": changes})
    return model


def archive_model(session: Session, actor: User | None, project: Project,
                  model: ModelConfig) -> ModelConfig:
    if model.archived_at is None:
        model.archived_at = model.updated_at = utcnow()
        audit.record(session, actor, "model.archived", "model", model.id, project.id,
                     {"name": model.name})
    return model


def restore_model(session: Session, actor: User | None, project: Project,
                  model: ModelConfig) -> ModelConfig:
    if model.archived_at is not None:
        model.archived_at = None
        model.updated_at = utcnow()
        audit.record(session, actor, "model.restored", "model", model.id, project.id,
                     {"name": model.name})
    return model


def delete_model(session: Session, actor: User, project: Project, model: ModelConfig) -> None:
    runs = run_count(session, model)
    if runs:
        raise Conflict(f"This model is used by {runs} run(s); archive it instead, so their "
                       "history keeps it.", code="MODEL_IN_USE")
    audit.record(session, actor, "model.deleted", "model", model.id, project.id,
                 {"name": model.name, "model": model.model})
    session.delete(model)


def ensure_demo_models(session: Session, actor: User | None, project: Project,
                       fake_url: str) -> list[ModelConfig]:
    """The two priced fake-provider models the demo runs on, created once per project (an
    archived one is restored)."""
    return ensure_fake_models(session, actor, project, fake_url, DEMO_MODELS)


def _existing_fake_model(session: Session, project: Project, name: str,
                         model_id: str) -> ModelConfig | None:
    """The project's model for a demo entry: by its name, else (renamed, or made by hand)
    a model of the same provider model id on a fake-provider credential, so "Start demo
    run" reuses it instead of adding a duplicate."""
    model = session.scalar(select(ModelConfig).where(
        ModelConfig.project_id == project.id, ModelConfig.name == name))
    if model is not None:
        return model
    return session.scalar(
        select(ModelConfig).join(Credential, ModelConfig.credential_id == Credential.id)
        .where(ModelConfig.project_id == project.id, ModelConfig.model == model_id,
               Credential.kind == FAKE_KIND)
        .order_by(ModelConfig.archived_at.is_not(None), ModelConfig.id).limit(1))


def ensure_fake_models(session: Session, actor: User | None, project: Project, fake_url: str,
                       specs: list[tuple[str, str, int, int]]) -> list[ModelConfig]:
    """Priced fake-provider models (name, provider model id, prices), each created once per
    project on its fake credential (an archived one is restored)."""
    credential = session.scalar(select(Credential).where(
        Credential.project_id == project.id, Credential.kind == FAKE_KIND)
        .order_by(Credential.is_default.desc(), Credential.id).limit(1))
    if credential is None:
        label = DEMO_CREDENTIAL_LABEL
        if session.scalar(select(Credential.id).where(Credential.project_id == project.id,
                                                      Credential.label == label)):
            label = f"{label} {utcnow():%Y%m%d%H%M%S}"
        credential = Credential(project_id=project.id, kind=FAKE_KIND, label=label,
                                base_url=fake_url, is_default=True, config={})
        session.add(credential)
        session.flush()
        audit.record(session, actor, "credential.created", "credential", credential.id,
                     project.id, {"kind": FAKE_KIND, "label": credential.label,
                                  "base_url": fake_url, "key_stored": False})
    models = []
    for name, model_id, price_in, price_out in specs:
        model = _existing_fake_model(session, project, name, model_id)
        if model is None:
            model = create_model(session, actor, project, {
                "name": name, "credential_id": credential.id, "model": model_id,
                "input_price_per_mtok_micros": price_in,
                "output_price_per_mtok_micros": price_out,
                "params": {"temperature": 0, "max_tokens": 256}})
        restore_model(session, actor, project, model)
        models.append(model)
    return models

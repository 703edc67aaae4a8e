"""Model configurations of a project (credentials and pricing deepen with the providers work)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core import audit
from assay.core.auth.models import User
from assay.core.errors import Invalid
from assay.core.llm.models import Credential, ModelConfig
from assay.core.pagination import Page, paginate
from assay.core.projects.models import Project

FAKE_KIND = "fake"
DEMO_MODELS = [
    # name, provider model id, $ per million tokens in/out (as micro-dollars)
    ("Fake Fast", "fake-fast", 150_000, 600_000),
    ("Fake Smart", "fake-smart", 3_000_000, 15_000_000),
]


def list_models(session: Session, project: Project, page: int, page_size: int) -> Page[Any]:
    stmt = (select(ModelConfig).where(ModelConfig.project_id == project.id)
            .order_by(ModelConfig.id))
    return paginate(session, stmt, page, page_size)


def models_by_id(session: Session, project: Project, ids: list[int]) -> list[ModelConfig]:
    found = {m.id: m for m in session.scalars(select(ModelConfig).where(
        ModelConfig.project_id == project.id, ModelConfig.id.in_(ids)))}
    missing = [i for i in ids if i not in found]
    if missing:
        raise Invalid("Unknown models", {"json": {"model_ids": [f"No model {i} in this project"
                                                                for i in missing]}})
    return [found[i] for i in ids]


def ensure_demo_models(session: Session, actor: User | None, project: Project,
                       fake_url: str) -> list[ModelConfig]:
    """The two fake-provider models the demo runs on, created once per project."""
    credential = session.scalar(select(Credential).where(
        Credential.project_id == project.id, Credential.kind == FAKE_KIND))
    if credential is None:
        credential = Credential(project_id=project.id, kind=FAKE_KIND,
                                label="Fake provider (demo)", base_url=fake_url)
        session.add(credential)
        session.flush()
        audit.record(session, actor, "credential.created", "credential", credential.id,
                     project.id, {"kind": FAKE_KIND, "label": credential.label})
    models = []
    for name, model_id, price_in, price_out in DEMO_MODELS:
        model = session.scalar(select(ModelConfig).where(
            ModelConfig.project_id == project.id, ModelConfig.name == name))
        if model is None:
            model = ModelConfig(project_id=project.id, credential_id=credential.id, name=name,
                                model=model_id, input_price_per_mtok_micros=price_in,
                                output_price_per_mtok_micros=price_out,
                                params={"temperature": 0, "max_tokens": 256})
            session.add(model)
            session.flush()
            audit.record(session, actor, "model.created", "model", model.id, project.id,
                         {"name": name, "model": model_id})
        models.append(model)
    return models

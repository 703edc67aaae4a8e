"""Model configurations of a project: priced models on a credential, with default params.
Editors manage them; a model used by a run is archived, not deleted."""

from __future__ import annotations

from typing import Any

from sqlalchemy.exc import IntegrityError

from assay.api import preconditions
from assay.api.base import Blueprint, commit, page_dict, page_of, project_access, session, user
from assay.api.models.schemas import (
    ModelCreateSchema,
    ModelListArgs,
    ModelSchema,
    ModelUpdateSchema,
)
from assay.core.llm import service
from assay.core.llm.models import ModelConfig
from assay.core.projects.models import Role

blp = Blueprint("models", __name__, url_prefix="/api/projects/<int:project_id>/models",
                description="Model configurations")
ONE = "/<int:model_id>"


def view(m: ModelConfig) -> dict[str, Any]:
    return {"id": m.id, "name": m.name, "credential_id": m.credential_id,
            "credential_label": m.credential.label, "provider": m.credential.kind,
            "model": m.model, "input_price_per_mtok_micros": m.input_price_per_mtok_micros,
            "output_price_per_mtok_micros": m.output_price_per_mtok_micros,
            "priced": service.priced(m), "context_window": m.context_window,
            "params": dict(m.params or {}), "archived_at": m.archived_at,
            "created_at": m.created_at, "updated_at": m.updated_at,
            "row_version": m.row_version}


def _commit_unique() -> None:
    try:
        commit()
    except IntegrityError as error:  # a concurrent request took the name first
        session().rollback()
        raise service.name_taken() from error


@blp.get("")
@blp.arguments(ModelListArgs, location="query")
@blp.response(200, page_of(ModelSchema))
def list_models(args: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    page = service.list_models(session(), project, args["page"], args["page_size"],
                               args["include_archived"])
    return page_dict(page, [view(m) for m in page.items])


@blp.post("")
@blp.arguments(ModelCreateSchema)
@blp.response(201, ModelSchema)
def create_model(data: dict[str, Any], project_id: int) -> Any:
    project, _ = project_access(project_id, Role.editor)
    model = service.create_model(session(), user(), project, data)
    _commit_unique()
    return view(model)


@blp.get(ONE)
@blp.response(200, ModelSchema)
@preconditions.read()
def get_model(project_id: int, model_id: int) -> Any:
    project, _ = project_access(project_id, Role.viewer)
    model = service.get_model(session(), project, model_id)
    return preconditions.tagged(view(model), model)


@blp.patch(ONE)
@blp.arguments(ModelUpdateSchema)
@blp.response(200, ModelSchema)
@preconditions.write()
def update_model(data: dict[str, Any], project_id: int, model_id: int) -> Any:
    """`params` replaces all default parameters; they are checked again whenever they, the
    credential or the context window change."""
    project, _ = project_access(project_id, Role.editor)
    model = service.get_model(session(), project, model_id)
    preconditions.guard(model, lambda: view(model))
    service.update_model(session(), user(), project, model, data)
    _commit_unique()
    return preconditions.tagged(view(model), model)


@blp.post(ONE + "/archive")
@blp.response(200, ModelSchema)
def archive_model(project_id: int, model_id: int) -> Any:
    """Hidden from lists and refused for new runs; past runs keep it."""
    project, _ = project_access(project_id, Role.editor)
    model = service.archive_model(session(), user(), project,
                                  service.get_model(session(), project, model_id))
    commit()
    return view(model)


@blp.post(ONE + "/restore")
@blp.response(200, ModelSchema)
def restore_model(project_id: int, model_id: int) -> Any:
    project, _ = project_access(project_id, Role.editor)
    model = service.restore_model(session(), user(), project,
                                  service.get_model(session(), project, model_id))
    commit()
    return view(model)


@blp.delete(ONE)
@blp.response(204)
def delete_model(project_id: int, model_id: int) -> Any:
    """Only a model no run ever used (409 MODEL_IN_USE otherwise: archive it)."""
    project, _ = project_access(project_id, Role.editor)
    service.delete_model(session(), user(), project,
                         service.get_model(session(), project, model_id))
    commit()
    return None

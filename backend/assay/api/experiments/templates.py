"""Experiment templates: list them, and apply one (a dataset of its sample cases and a
draft experiment with objective, rubric, seed prompt and test data filled)."""

from __future__ import annotations

from typing import Any

from assay.api import preconditions
from assay.api.base import Blueprint, commit, project_access, session, user
from assay.api.experiments.routes import detail
from assay.api.experiments.schemas import (
    ApplyTemplateSchema,
    ExperimentDetailSchema,
    TemplateSchema,
)
from assay.core.experiments import service, templates
from assay.core.projects.models import Role

blp = Blueprint("experiment_templates", __name__,
                url_prefix="/api/projects/<int:project_id>/experiment-templates",
                description="Starting points for an experiment")


def view(template: templates.Template) -> dict[str, Any]:
    return {"slug": template.slug, "name": template.name, "description": template.description,
            "objective": template.objective, "rubric": template.rubric,
            "prompt": template.prompt, "cases": template.cases}


@blp.get("")
@blp.response(200, TemplateSchema(many=True))
def list_templates(project_id: int) -> Any:
    """Every template shipped with Assay (customer support, creative writing, data
    extraction, code generation, ...)."""
    project_access(project_id, Role.viewer)
    return [view(t) for t in templates.load_all()]


@blp.post("/<string:slug>/apply")
@blp.arguments(ApplyTemplateSchema)
@blp.response(201, ExperimentDetailSchema)
@preconditions.write(201)
def apply_template(data: dict[str, Any], project_id: int, slug: str) -> Any:
    """A dataset of the template's sample cases and a draft that uses it: the draft
    `experiment_id` (its objective, rubric, prompt and data replaced; If-Match guards it;
    409 EXPERIMENT_FROZEN once started), or a new one."""
    project, _ = project_access(project_id, Role.editor)
    template = templates.get(slug)
    into = None
    if data["experiment_id"] is not None:
        into = service.get(session(), project, data["experiment_id"], lock=True)
        draft = into
        preconditions.guard(draft, lambda: detail(draft))
    experiment = templates.apply(session(), user(), project, template, into)
    commit()
    return preconditions.tagged(detail(experiment), experiment)
